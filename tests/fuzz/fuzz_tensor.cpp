// Fuzz harness: bytes read as one weight tensor, the first byte choosing the reader: .npy, .safetensors
// or GGUF (the only tensor, or the one named "w").
#include <cstddef>
#include <cstdint>
#include <span>

#include "edgeplan/io/tensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace edgeplan::io;
  if (size == 0) return 0;
  const std::span<const std::uint8_t> bytes(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0: (void)read_npy(bytes, "fuzz.npy"); break;
    case 1: (void)read_safetensors(bytes, "fuzz.safetensors", ""); break;
    case 2: (void)read_safetensors(bytes, "fuzz.safetensors", "w"); break;
    default: (void)read_gguf_tensor(bytes, "fuzz.gguf", ""); break;
  }
  return 0;
}
