// Fuzz harness: bytes read as a GGUF header from memory, then as a LoRA adapter and as a model when the
// header reads.
#include <cstddef>
#include <cstdint>
#include <span>

#include "edgeplan/io/gguf.hpp"
#include "edgeplan/io/lora.hpp"
#include "edgeplan/io/model_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace edgeplan::io;
  const auto file = read_gguf(std::as_bytes(std::span(data, size)), "fuzz.gguf");
  if (!file) return 0;
  (void)read_lora_adapter(*file, "fuzz.gguf");
  (void)model_from_gguf(*file, "fuzz", "fuzz.gguf");
  return 0;
}
