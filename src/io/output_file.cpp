#include "edgeplan/io/output_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

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
  fs::path temp = final_path;
  temp += fmt::format(".edgeplan-{}.tmp", ::getpid());
  if (const int error_number = create_exclusive(temp); error_number != 0) {
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
    if (std::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
      return failure(fmt::format("cannot move {} into place", temp_path_), errno);
    }
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
