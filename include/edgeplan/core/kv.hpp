// KV-cache capacity: bytes per token for each cache type, the memory left for the cache, and the longest
// context that fits. KV bytes/token = 2 (K and V) x layers x kv_heads x head_dim x bytes per element.
// Budget = usable memory - reserved - weights; max context = floor(budget / bytes per token).
// Source: reference chapter section 7.3 (memory.py); llama.cpp block sizes for q8_0 / q4_0 from
// accuracy.md; the recompute saving from the deployment walkthrough. Documented in docs/model.md, "kv".
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "edgeplan/core/model.hpp"

namespace edgeplan {

// A KV-cache element type: llama.cpp's cache types store blocks, the reference's int8/int4 plain values.
struct KvType {
  std::string_view name;       // "f16", "q8_0", "q4_0", "int8", "int4"
  std::uint32_t block;         // values per block
  std::uint32_t block_bytes;   // bytes per block
  std::string_view counted_as; // "llama.cpp" or "reference"
  [[nodiscard]] double bytes_per_element() const { return static_cast<double>(block_bytes) / block; }
};

std::span<const KvType> kv_types();
const KvType* find_kv_type(std::string_view name);  // case-insensitive; nullptr when unknown

// Bytes of K and V cached per token over all layers.
double kv_bytes_per_token(const ModelSpec& m, const KvType& t);

// Memory left for the KV cache (may be negative when the weights alone do not fit).
double kv_budget_bytes(double memory_bytes, double reserved_bytes, double weight_bytes);

// Longest context whose cache fits the budget; 0 when the budget is not positive.
std::uint64_t max_context(double budget_bytes, double kv_bytes_per_token);

// Without a KV cache, token i recomputes K/V for all i tokens so far: n(n+1)/2 token-steps for n tokens,
// against n with the cache. Returns the ratio (n+1)/2: 50.5x at n = 100, 250.5x at n = 500.
double kv_recompute_ratio(std::uint64_t tokens);
double kv_recompute_token_steps(std::uint64_t tokens);  // n(n+1)/2

}  // namespace edgeplan
