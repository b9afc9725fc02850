// KV-cache capacity: bytes per token for each cache type, the memory left for the cache, and the longest
// context that fits. KV bytes/token = 2 (K and V) x layers x kv_heads x head_dim x bytes per element;
// with multi-head latent attention one vector of kv_lora_rank + rope_dim per layer (the K side only, as
// llama.cpp stores it). As llama.cpp allocates it, the cache holds the context padded to a multiple of
// pad_tokens (256), and a sliding-window layer holds min(padded context, pad(window + ubatch)) cells.
// Budget = usable memory - reserved - weights; max context = the longest context whose cache fits.
// Source: reference chapter section 7.3 (memory.py); ggml's block sizes for q8_0 / q4_0
// (docs/model.md, "Weight sizes"); the recompute saving from the deployment walkthrough (docs/model.md,
// "The reference scenario"). Documented in docs/model.md, "kv".
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

// How the runtime sizes the cache (a device profile's [kv_cache] section; llama.cpp's values by default).
struct KvCacheSettings {
  std::uint32_t pad_tokens = 256;     // context rounded up to a multiple of this (1: no padding)
  std::uint32_t ubatch_tokens = 512;  // micro-batch a sliding-window layer keeps beyond its window
};

// Bytes of K and V cached per token over all layers, as if every layer were global.
double kv_bytes_per_token(const ModelSpec& m, const KvType& t);

// Cells (tokens) layer `layer` holds for a context of `context_tokens`.
std::uint64_t kv_cells(const ModelSpec& m, std::uint32_t layer, std::uint64_t context_tokens,
                       const KvCacheSettings& s);

// Bytes of the whole cache for a context of `context_tokens` (padding and sliding windows applied).
double kv_cache_bytes(const ModelSpec& m, const KvType& t, std::uint64_t context_tokens, const KvCacheSettings& s);

// Memory left for the KV cache (may be negative when the weights alone do not fit).
double kv_budget_bytes(double memory_bytes, double reserved_bytes, double weight_bytes);

// Whether a pair runs at a context: the weights, the KV cache at that context and the reserved memory together
// within memory. `fits` means this everywhere (decode, kv, report, check, fit); `weights_fit` (stream) asks
// about the weights alone.
struct MemoryFit {
  double budget_bytes = 0;    // memory - reserved - weights (kv_budget_bytes)
  double headroom_bytes = 0;  // budget - KV cache bytes at the context: what is left over (negative: short by)
  bool fits = false;          // headroom >= 0
};
MemoryFit memory_fit(double memory_bytes, double reserved_bytes, double weight_bytes, double kv_cache_bytes);
// The weights alone within memory - reserved (no KV cache).
bool weights_fit(double memory_bytes, double reserved_bytes, double weight_bytes);

// Longest context whose cache fits the budget; 0 when the budget is not positive. Capped at
// kMaxContextTokens, which a model whose every layer is sliding reaches.
inline constexpr std::uint64_t kMaxContextTokens = std::uint64_t{1} << 40;
std::uint64_t max_context(const ModelSpec& m, const KvType& t, double budget_bytes, const KvCacheSettings& s);

// Without a KV cache, token i recomputes K/V for all i tokens so far: n(n+1)/2 token-steps for n tokens,
// against n with the cache. Returns the ratio (n+1)/2: 50.5x at n = 100, 250.5x at n = 500.
double kv_recompute_ratio(std::uint64_t tokens);
double kv_recompute_token_steps(std::uint64_t tokens);  // n(n+1)/2

}  // namespace edgeplan
