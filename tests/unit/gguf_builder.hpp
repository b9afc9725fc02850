// Builds GGUF bytes in memory, for the GGUF reader's tests and the tensor readers'.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "edgeplan/io/gguf.hpp"

namespace edgeplan::io {

class Builder {
 public:
  explicit Builder(std::uint32_t version = 3) { raw("GGUF", 4).u32(version); }
  Builder& u32(std::uint32_t v) { return pod(v); }
  Builder& u64(std::uint64_t v) { return pod(v); }
  Builder& f32(float v) { return pod(v); }
  Builder& str(const std::string& s) { return u64(s.size()).raw(s.data(), s.size()); }
  Builder& kv_string(const std::string& k, const std::string& v) { return str(k).u32(8).str(v); }
  Builder& tensor(const std::string& name, std::vector<std::uint64_t> dims, std::uint32_t type, std::uint64_t offset) {
    str(name).u32(static_cast<std::uint32_t>(dims.size()));
    for (auto d : dims) u64(d);
    return u32(type).u64(offset);
  }
  Builder& pad_to(std::size_t n) {
    bytes_.resize(n);
    return *this;
  }
  Builder& raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
    return *this;
  }
  std::size_t size() const { return bytes_.size(); }
  Result<GgufFile> read() const { return read_gguf(bytes_, "mem.gguf"); }
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  template <class T>
  Builder& pod(T v) {
    return raw(&v, sizeof v);
  }
  std::vector<std::byte> bytes_;
};

// One shard of a model split as llama.cpp's gguf-split writes it: split.no, split.count and split.tensors.count
// in every shard, the model's metadata in the first only; each tensor F32 [32, rows].
inline std::vector<std::byte> split_shard(std::uint16_t no, std::uint16_t count, std::int32_t total,
                                          const std::vector<std::pair<std::string, std::uint64_t>>& tensors) {
  Builder b;
  const bool first = no == 0;
  b.u64(tensors.size()).u64(first ? 9 : 3);
  if (first) {
    b.kv_string("general.architecture", "llama");
    b.str("general.file_type").u32(4).u32(0);  // ALL_F32
    b.str("llama.block_count").u32(4).u32(1);
    b.str("llama.embedding_length").u32(4).u32(32);
    b.str("llama.feed_forward_length").u32(4).u32(64);
    b.str("llama.attention.head_count").u32(4).u32(4);
  }
  b.str("split.no").u32(2).raw(&no, 2);
  b.str("split.count").u32(2).raw(&count, 2);
  b.str("split.tensors.count").u32(5).raw(&total, 4);
  std::uint64_t offset = 0;
  for (const auto& [name, rows] : tensors) {
    b.tensor(name, {32, rows}, 0, offset);
    offset += 128 * rows;
  }
  b.pad_to((b.size() + 31) / 32 * 32 + offset);
  return b.bytes();
}

}  // namespace edgeplan::io
