// Reading the header of a GGUF file: its metadata and tensor infos, never the tensor data. Versions 2 and
// 3, little-endian. Every count and length is checked against the bytes that remain and against the bounds
// below before anything is allocated, every tensor type against the known ggml types, and every tensor's data against the end of
// the file; each error names the file and the byte offset where the problem is.
// Layout: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "edgeplan/core/formats.hpp"
#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

constexpr std::uint64_t kGgufMaxName = 65535;         // bytes in a metadata key or a tensor name (the spec's bound)
constexpr std::uint64_t kGgufMaxString = 1ull << 26;  // bytes in a string value (64 MiB)
constexpr std::uint64_t kGgufMaxArray = 1ull << 26;   // elements in an array (64 Mi)
constexpr std::uint32_t kGgufMaxDims = 4;              // dimensions of a tensor (ggml's GGML_MAX_DIMS)

// GGUF metadata value types, with their ids in the file.
enum class GgufType : std::uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7, string = 8, array = 9,
  u64 = 10, i64 = 11, f64 = 12,
};

// An array: its element type and length. Only arrays of integers keep their elements (per-layer counts),
// as the file stores them, so an array costs no more memory than its bytes in the file; other arrays
// (a tokenizer's strings and scores) are skipped, as nothing reads them.
struct GgufArray {
  GgufType element = GgufType::u8;
  std::uint64_t length = 0;
  std::vector<std::byte> raw;  // integer arrays: length elements, little-endian; empty otherwise

  bool holds_integers() const;
  std::optional<std::uint64_t> as_uint(std::uint64_t i) const;  // element i of an integer array, when >= 0
};

struct GgufValue {
  GgufType type = GgufType::u8;
  // unsigned ints as uint64, signed as int64, floats as double.
  std::variant<std::uint64_t, std::int64_t, double, bool, std::string, GgufArray> value;

  const std::string* as_string() const { return std::get_if<std::string>(&value); }
  std::optional<std::uint64_t> as_uint() const;  // any integer type holding a value >= 0
};

// A tensor's dimensions, held in place (a file may hold a million tensors); dims[0] is the contiguous row length.
class TensorDims {
 public:
  TensorDims() = default;
  TensorDims(std::initializer_list<std::uint64_t> dims);
  void push_back(std::uint64_t d);  // at most kGgufMaxDims
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::uint64_t operator[](std::size_t i) const { return dims_[i]; }
  std::uint64_t back() const { return dims_[size_ - 1]; }
  const std::uint64_t* begin() const { return dims_.data(); }
  const std::uint64_t* end() const { return dims_.data() + size_; }
  operator std::span<const std::uint64_t>() const { return {begin(), end()}; }
  bool operator==(const TensorDims& other) const { return std::ranges::equal(*this, other); }

 private:
  std::array<std::uint64_t, kGgufMaxDims> dims_{};
  std::uint32_t size_ = 0;
};

struct GgufTensor {
  std::string name;
  TensorDims dims;
  const GgmlType* type = nullptr;
  std::uint64_t offset = 0;         // from the start of the data section (of its shard's file)
  std::uint64_t bytes = 0;          // size of its data
  std::uint32_t shard = 0;          // a split model: the shard holding it (llama.cpp's split.no)

  double rows() const;              // the product of the dimensions past the first
};

struct GgufFile {
  std::uint32_t version = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata;  // in file order
  std::vector<GgufTensor> tensors;                          // in file order
  std::uint64_t alignment = 32;     // general.alignment
  std::uint64_t data_offset = 0;    // where the data section starts
  std::uint64_t file_bytes = 0;     // a split model: every shard's bytes
  std::uint32_t shards = 1;         // files the model was read from (llama.cpp's split.count)

  const GgufValue* find(std::string_view key) const;  // nullptr when absent
  std::optional<std::string> string(std::string_view key) const;  // nullopt when absent or not a string
};

// Reads from memory (the test seam); `display` names the input in messages.
Result<GgufFile> read_gguf(std::span<const std::byte> bytes, const std::string& display);

// Reads the header of a file on disk.
Result<GgufFile> read_gguf_file(const std::string& path);

// The shard names of a model split by llama.cpp (llama_split_path, as gguf-split writes them):
// PREFIX-00001-of-0000N.gguf ... PREFIX-0000N-of-0000N.gguf. nullopt when `path` is not named that way.
std::optional<std::vector<std::string>> gguf_split_paths(const std::string& path);

// A model file on disk, whole: a file that is not split as read_gguf_file reads it; given any shard of a split
// model (split.count > 1), every shard of its set, as one GgufFile: the metadata of shard 1 (gguf-split
// writes it there), the tensors of all shards in order, file_bytes summed. An error names a missing shard, a
// shard whose split.no or split.count disagrees with its name, and a set whose tensors do not add up to
// split.tensors.count. Source: llama.cpp's tools/gguf-split/gguf-split.cpp and src/llama.cpp (llama_split_path).
Result<GgufFile> read_gguf_model(const std::string& path);

}  // namespace edgeplan::io
