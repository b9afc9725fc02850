// Reading one weight tensor as fp32 from a GGUF file (F32, F16 or BF16 tensors, by name; the header through
// io/gguf.hpp), a NumPy .npy file (format versions 1, 2 and 3; little-endian
// '<f4' or '<f2', C order) or a .safetensors file (8-byte little-endian header length, JSON header,
// dtype F32, F16 or BF16, data_offsets relative to the end of the header). Every length and offset is
// bounded by the file size, and an error names the file, what is wrong and the byte offset.
// A tensor of more than two dimensions is read as rows = product of the leading dimensions, cols = the last
// (the contiguous one); a 1-D tensor is one row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

struct Tensor {
  std::string name;           // safetensors key; empty for .npy (one array per file)
  std::string dtype;          // as the file states it: "<f4", "F16", ...
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  std::vector<float> values;  // rows x cols, row-major
};

// The test seam: parse from bytes; `display` names the file in messages.
Result<Tensor> read_npy(std::span<const std::uint8_t> bytes, const std::string& display);
// `name` picks the tensor; it may be empty when the file holds exactly one.
Result<Tensor> read_safetensors(std::span<const std::uint8_t> bytes, const std::string& display,
                                const std::string& name);

// `name` picks the tensor; it may be empty when the file holds exactly one.
Result<Tensor> read_gguf_tensor(std::span<const std::uint8_t> bytes, const std::string& display,
                                const std::string& name);

// One tensor of a safetensors file's header: its dtype as stated, shape, and data bytes (end - begin of its
// data_offsets, which lie inside the file).
struct SafetensorsEntry {
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t offset = 0;  // from the start of the data section
  std::uint64_t bytes = 0;
};
// Every tensor a .safetensors file's header lists, in the header's order; only the header is read.
Result<std::vector<SafetensorsEntry>> read_safetensors_entries(const std::string& path);

// Reads `path` by its extension (.npy, .safetensors or .gguf; of a GGUF file only the header and the one
// tensor).
Result<Tensor> read_tensor_file(const std::string& path, const std::string& name);

}  // namespace edgeplan::io
