// Opening the files edgeplan reads. Every reader first checks that the path names a regular file (after
// following symbolic links), without opening it: open() on a FIFO blocks until a writer comes, and /dev/zero
// never ends. Text read whole has a maximum size per kind of input (docs/profiles.md, "Input files"); past it
// is an error that names the limit.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

// Maximum sizes of text inputs read whole, in bytes.
inline constexpr std::uint64_t kMaxProfileBytes = 16u << 20;      // a TOML profile, plan or request list
inline constexpr std::uint64_t kMaxConfigJsonBytes = 16u << 20;   // a Hugging Face config.json
inline constexpr std::uint64_t kMaxBenchResultsBytes = 256u << 20;  // llama-bench results (CSV, JSON, JSONL)

// The size of `path` in bytes when it is a regular file; otherwise an error whose message says why, to follow
// "cannot read X 'path': ": "no such file", "not a regular file (a FIFO)", ...
Result<std::uint64_t> regular_file_size(const std::filesystem::path& path);

// `path` opened for binary reading once regular_file_size has accepted it; the same errors, or "cannot open it".
struct InputFile {
  std::ifstream stream;
  std::uint64_t size = 0;  // bytes, when it was opened
};
Result<InputFile> open_input(const std::filesystem::path& path);

// The whole of `path`, at most `max_bytes` of it; past that the error names the limit and `kind` ("a TOML
// profile"): "20971520 bytes, more than the 16 MiB allowed for a TOML profile".
Result<std::string> read_input(const std::filesystem::path& path, std::uint64_t max_bytes, const std::string& kind);

}  // namespace edgeplan::io
