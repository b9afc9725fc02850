#include "edgeplan/io/output_file.hpp"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "edgeplan/util/names.hpp"

namespace edgeplan::io {

namespace fs = std::filesystem;

namespace {

std::string reason(int error_number) {
  return error_number != 0 ? fmt::format(" ({})", std::strerror(error_number)) : std::string();
}

// Creates `path` afresh for writing (a stale one left by a killed run is replaced, a link is never followed);
// 0 or the errno of the failure.
int create_exclusive(const fs::path& path) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) return ::close(fd) == 0 ? 0 : errno;
    if (errno != EEXIST || ::unlink(path.c_str()) != 0) return errno;
  }
  return EEXIST;
}

// The temporary files being written, for the signal handler: a catchable signal whose default ends the process
// (kEndingSignals) removes them first, then ends it as the signal would have. Fixed buffers: the handler
// may only call async-signal-safe functions (unlink, signal, raise).
constexpr std::size_t kSlots = 4;
std::array<std::array<char, PATH_MAX>, kSlots> g_temps{};
volatile std::sig_atomic_t g_used[kSlots] = {};

extern "C" void remove_temps_and_die(int sig) {
  for (std::size_t i = 0; i < kSlots; ++i) {
    if (g_used[i]) ::unlink(g_temps[i].data());
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// POSIX's asynchronous signals whose default action ends the process (the faults, SIGSEGV and the like, are a bug's,
// and a sanitizer's to report). SIGXFSZ is ignored instead (install_handlers).
constexpr std::array kEndingSignals{SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGALRM,
                                    SIGUSR1, SIGUSR2, SIGVTALRM, SIGPROF, SIGXCPU};

void install_handlers() {
  static const bool installed = [] {
    for (const int sig : kEndingSignals) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) std::signal(sig, remove_temps_and_die);
    }
    // Past a file-size limit (ulimit -f), a write fails with EFBIG and commit() says so, instead of the process
    // being killed with the temporary file left behind.
    std::signal(SIGXFSZ, SIG_IGN);
    return true;
  }();
  (void)installed;
}

// Registers a temporary file for the handler; the slot, or kSlots when all are taken (then it is not cleaned).
std::size_t register_temp(const std::string& path) {
  install_handlers();
  for (std::size_t i = 0; i < kSlots; ++i) {
    if (g_used[i] || path.size() >= PATH_MAX) continue;
    std::memcpy(g_temps[i].data(), path.c_str(), path.size() + 1);
    g_used[i] = 1;
    return i;
  }
  return kSlots;
}

void unregister_temp(const std::string& path) {
  for (std::size_t i = 0; i < kSlots; ++i) {
    if (g_used[i] && path == g_temps[i].data()) g_used[i] = 0;
  }
}

// The temporary file beside `final_path`: NAME.edgeplan-PID.tmp, or where that would pass the file-name limit
// (NAME_MAX, 255 bytes), .edgeplan-PID-HASH.tmp, so every legal name can be written.
fs::path temp_path_for(const fs::path& final_path) {
  const std::string suffix = fmt::format(".edgeplan-{}.tmp", ::getpid());
  if (final_path.filename().string().size() + suffix.size() <= NAME_MAX) {
    fs::path temp = final_path;
    temp += suffix;
    return temp;
  }
  // The name's hash: two long names in one folder differ.
  return final_path.parent_path() /
         fmt::format(".edgeplan-{}-{:016x}.tmp", ::getpid(), util::name_hash(final_path.filename().string()));
}

// Moves `from` onto `to`; without `replace`, fails with EEXIST when `to` exists at that moment (another run wrote it
// after open() checked), rather than replacing it. 0 or the errno of the failure.
int move_into_place(const std::string& from, const std::string& to, bool replace) {
  if (replace) return std::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
#ifdef RENAME_NOREPLACE  // Linux: one call that refuses an existing name, atomically
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;  // EINVAL: a file system without it
#endif
  // A hard link refuses an existing name too; the temporary name then goes.
  if (::link(from.c_str(), to.c_str()) == 0) {
    ::unlink(from.c_str());
    return 0;
  }
  if (errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP) return errno;
  // A file system with neither (FAT): look, then rename; a run that writes the name in between is not seen.
  std::error_code ec;
  if (fs::exists(to, ec)) return EEXIST;
  return std::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

}  // namespace

OutputFile::OutputFile(OutputPath target, std::string final_path, std::string temp_path)
    : target_(std::move(target)), final_path_(std::move(final_path)), temp_path_(std::move(temp_path)) {
  out_ = std::make_unique<std::ofstream>(temp_path_.empty() ? final_path_ : temp_path_,
                                         std::ios::binary | std::ios::out);
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : target_(std::move(other.target_)),
      final_path_(std::move(other.final_path_)),
      temp_path_(std::exchange(other.temp_path_, std::string())),
      out_(std::move(other.out_)) {}

OutputFile::~OutputFile() {
  if (temp_path_.empty()) return;
  if (out_) out_->close();
  std::error_code ec;
  fs::remove(temp_path_, ec);
  unregister_temp(temp_path_);
}

Error OutputFile::failure(std::string_view what, int error_number) const {
  return Error{fmt::format("{} {}: {}{}", target_.option, target_.path, what, reason(error_number))};
}

Result<OutputFile> OutputFile::open(const OutputPath& target, const std::vector<std::string>& inputs) {
  const fs::path path(target.path);
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  const std::string where = fmt::format("{} {}", target.option, target.path);
  if (fs::exists(status)) {
    for (const std::string& input : inputs) {
      if (fs::equivalent(path, input, ec)) {
        return Error{fmt::format("{}: this file is an input of the command ({}); write to another file", where, input)};
      }
    }
  }
  if (fs::is_directory(status)) return Error{where + ": is a folder, not a file"};
  if (fs::exists(status) && !fs::is_regular_file(status)) {  // a device or a FIFO: written in place
    OutputFile direct(target, target.path, "");
    if (!direct.stream()) return direct.failure("cannot write the file", errno);
    return direct;
  }
  if (fs::exists(status) && !target.force) return Error{where + ": the file exists; pass --force to replace it"};
  const fs::path final_path = fs::exists(status) ? fs::canonical(path, ec) : path;
  const fs::path temp = temp_path_for(final_path);
  register_temp(temp.string());
  if (const int error_number = create_exclusive(temp); error_number != 0) {
    unregister_temp(temp.string());
    return Error{fmt::format("{}: cannot write the file{}", where, reason(error_number))};
  }
  if (fs::exists(status)) fs::permissions(temp, status.permissions(), ec);  // the replaced file's mode
  OutputFile file(target, final_path.string(), temp.string());
  if (!file.stream()) return file.failure("cannot write the file", errno);
  return file;
}

std::optional<Error> OutputFile::commit() {
  out_->flush();
  if (!*out_) return failure("cannot write the file", errno);
  if (!temp_path_.empty()) {  // on the disk before it replaces the old file
    const int fd = ::open(temp_path_.c_str(), O_RDONLY | O_CLOEXEC);
    const bool synced = fd >= 0 && ::fsync(fd) == 0;
    const int error_number = errno;
    if (fd >= 0) ::close(fd);
    if (!synced) return failure("cannot write the file", error_number);
  }
  out_->close();
  if (out_->fail()) return failure("cannot write the file", errno);
  if (!temp_path_.empty()) {
    if (const int error_number = move_into_place(temp_path_, final_path_, target_.force); error_number == EEXIST) {
      return failure("the file was created while this run wrote it (by another run?); pass --force to replace it", 0);
    } else if (error_number != 0) {
      return failure(fmt::format("cannot move {} into place", temp_path_), error_number);
    }
    unregister_temp(temp_path_);
    temp_path_.clear();
  }
  return std::nullopt;
}

std::optional<Error> write_output(const OutputPath& target, const std::vector<std::string>& inputs,
                                  std::string_view text) {
  auto file = OutputFile::open(target, inputs);
  if (!file) return file.error();
  file->stream() << text;
  return file->commit();
}

}  // namespace edgeplan::io
