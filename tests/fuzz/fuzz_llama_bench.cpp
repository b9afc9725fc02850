// Fuzz harness: bytes read as llama-bench output (the calibrate command's input).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "edgeplan/io/llama_bench.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)edgeplan::io::parse_llama_bench(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  return 0;
}
