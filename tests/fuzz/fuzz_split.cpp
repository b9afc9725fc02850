// Fuzz harness: a split GGUF set of several files, read from its first or another shard as one model. The first
// byte gives the number of shards (1 to 4) and the second the shard named; then each shard but the last is a
// 4-byte little-endian length and that many bytes (cut short where the input ends), the last all that remains. The
// shards are written as PREFIX-0000i-of-0000N.gguf in a folder of this process, read with read_gguf_model and,
// when they read as a set, as a model.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "edgeplan/io/gguf.hpp"
#include "edgeplan/io/model_file.hpp"

namespace {

// This process's folder for the shards, removed at exit.
const std::filesystem::path& folder() {
  static const std::filesystem::path dir = [] {
    std::string name = (std::filesystem::temp_directory_path() / "fuzz-split-XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr) std::abort();
    static const std::string kept = name;
    std::atexit([] { std::filesystem::remove_all(kept); });
    return std::filesystem::path(name);
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace edgeplan::io;
  if (size < 2) return 0;
  const unsigned count = data[0] % 4 + 1, named = data[1] % count;
  std::size_t at = 2;
  std::filesystem::remove_all(folder());
  std::filesystem::create_directory(folder());
  for (unsigned i = 0; i < count; ++i) {
    std::size_t length = size - at;
    if (i + 1 < count) {
      if (size - at < 4) return 0;
      length = data[at] | data[at + 1] << 8 | data[at + 2] << 16 | static_cast<std::size_t>(data[at + 3]) << 24;
      at += 4;
      length = std::min(length, size - at);
    }
    std::ofstream(folder() / fmt::format("m-{:05}-of-{:05}.gguf", i + 1, count), std::ios::binary)
        .write(reinterpret_cast<const char*>(data + at), static_cast<std::streamsize>(length));
    at += length;
  }
  const auto file = read_gguf_model((folder() / fmt::format("m-{:05}-of-{:05}.gguf", named + 1, count)).string());
  if (file) (void)model_from_gguf(*file, "fuzz", "fuzz.gguf");
  return 0;
}
