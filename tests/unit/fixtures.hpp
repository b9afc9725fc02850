// Shared test fixtures: the reference profiles and real model shapes as core structs, written out by hand
// (the unit tests do not go through the TOML loader).
#pragma once

#include "edgeplan/core/device.hpp"
#include "edgeplan/core/model.hpp"

namespace edgeplan::fixtures {

// The chapter's phone: 8 GiB, 0.8 GiB reserved, 68 GB/s at utilization 0.85, no overhead, none of llama.cpp's
// buffers counted ([runtime] buffers = "none").
inline DeviceSpec phone8g() {
  DeviceSpec d;
  d.runtime.buffers = false;
  d.name = "phone8g";
  d.memory_bytes = 8.0 * 1073741824.0;
  d.reserved_bytes = 0.8 * 1073741824.0;
  d.bandwidth_bytes_per_s = 68e9;
  d.utilization = 0.85;
  return d;
}

// A dense decoder's shape; vocab 0 leaves it unknown.
inline ModelSpec dense(const char* name, std::uint32_t layers, std::uint32_t hidden, std::uint32_t heads,
                       std::uint32_t kv_heads, std::uint32_t head_dim, std::uint32_t ffn, std::uint32_t vocab) {
  ModelSpec m;
  m.name = name;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.head_dim = head_dim;
  m.ffn = ffn;
  if (vocab > 0) m.vocab = vocab;
  return m;
}

// The chapter's 8B model: 8e9 params, GQA 32/8, no vocabulary.
inline ModelSpec ref_8b() {
  ModelSpec m = dense("ref-8b", 32, 4096, 32, 8, 128, 11008, 0);
  m.params = 8e9;
  return m;
}

inline ModelSpec llama2_7b() { return dense("llama-2-7b", 32, 4096, 32, 32, 128, 11008, 32000); }

inline ModelSpec llama32_1b() {
  ModelSpec m = dense("llama-3.2-1b", 16, 2048, 32, 8, 64, 8192, 128256);
  m.tied_embeddings = true;
  m.rope_freqs = true;
  return m;
}

}  // namespace edgeplan::fixtures
