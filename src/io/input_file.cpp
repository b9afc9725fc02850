#include "edgeplan/io/input_file.hpp"

#include <cerrno>

#include <sys/stat.h>

#include <fmt/format.h>

namespace edgeplan::io {
namespace {

std::string what_it_is(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "of an unknown type";
}

std::string size_text(std::uint64_t bytes) {
  if (bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

Error too_large(std::uint64_t size, std::uint64_t max_bytes, const std::string& kind) {
  return Error{fmt::format("{} bytes, more than the {} allowed for {}", size, size_text(max_bytes), kind)};
}

}  // namespace

Result<std::uint64_t> regular_file_size(const std::filesystem::path& path) {
  // A NUL ends the name the system sees: "mydev.toml\0x/y" would read mydev.toml while naming another.
  if (path.native().find('\0') != std::string::npos) return Error{"a path cannot hold a NUL byte"};
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Error{errno == ELOOP ? "a loop of symbolic links" : errno == ENAMETOOLONG ? "the name is too long" : "no such file"};
  }
  if (!S_ISREG(st.st_mode)) return Error{"not a regular file (" + what_it_is(st.st_mode) + ")"};
  return static_cast<std::uint64_t>(st.st_size);
}

Result<InputFile> open_input(const std::filesystem::path& path) {
  const auto size = regular_file_size(path);
  if (!size) return size.error();
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot open it"};
  return InputFile{std::move(in), *size};
}

Result<std::string> read_input(const std::filesystem::path& path, std::uint64_t max_bytes, const std::string& kind) {
  auto file = open_input(path);
  if (!file) return file.error();
  if (file->size > max_bytes) return too_large(file->size, max_bytes, kind);
  std::ifstream* in = &file->stream;
  // The file may have grown since stat: read one byte past the limit to tell.
  std::string text(static_cast<std::size_t>(file->size) + 1, '\0');
  in->read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in->gcount()));
  while (text.size() <= max_bytes && *in) {
    char chunk[4096];
    in->read(chunk, sizeof chunk);
    text.append(chunk, static_cast<std::size_t>(in->gcount()));
  }
  if (text.size() > max_bytes) return too_large(text.size(), max_bytes, kind);
  if (in->bad()) return Error{"read error"};
  return text;
}

}  // namespace edgeplan::io
