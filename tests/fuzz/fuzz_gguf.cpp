// Fuzz harness: bytes read as a GGUF header from memory, then as a LoRA adapter when the header reads.
#include <cstddef>
#include <cstdint>
#include <span>

#include "edgeplan/io/gguf.hpp"
#include "edgeplan/io/lora.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace edgeplan::io;
  const auto file = read_gguf(std::as_bytes(std::span(data, size)), "fuzz.gguf");
  if (file) (void)read_lora_adapter(*file, "fuzz.gguf");
  return 0;
}
