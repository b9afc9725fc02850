// Builds GGUF bytes in memory, for the GGUF reader's tests and the tensor readers'.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
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

}  // namespace edgeplan::io
