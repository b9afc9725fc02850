// KV-cache capacity: bytes per token for each cache type, the memory left for the cache, and the longest
// context that fits. KV bytes/token = layers x kv_heads x head_dim x (bytes per K element + bytes per V
// element), a row of kv_heads x head_dim values stored in whole blocks of its ggml type (llama.cpp's
// ggml_row_size); with multi-head latent attention one vector of kv_lora_rank + rope_dim per layer (the K
// side only, as llama.cpp stores it). As llama.cpp allocates it, the cache holds the context padded to a multiple of
// pad_tokens (256), and a sliding-window layer holds min(padded context, pad(window + ubatch)) cells.
// Budget = usable memory - reserved - weights; max context = the longest context whose cache fits.
// Source: reference chapter section 7.3 (memory.py); the cache types and block sizes llama.cpp accepts for
// -ctk/-ctv (common/arg.cpp kv_cache_types, ggml's type traits; src/llama-kv-cache.cpp allocates one
// [row, cells] tensor per layer for K and one for V; src/llama-context.cpp pads the context to 256 and
// refuses a quantized type whose block does not divide the head size, or K and V types that differ under
// latent attention); the recompute saving from the deployment walkthrough (docs/model.md,
// "The reference scenario"). Documented in docs/model.md, "kv".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "edgeplan/core/model.hpp"

namespace edgeplan {

// A KV-cache element type: llama.cpp's cache types store blocks, the reference's int8/int4 plain values
// (the chapter's idealised types: no runtime offers them).
struct KvType {
  std::string_view name;       // "f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1", "int8", "int4"
  std::uint32_t block;         // values per block
  std::uint32_t block_bytes;   // bytes per block
  std::string_view counted_as; // "llama.cpp" or "reference"
  [[nodiscard]] double bytes_per_element() const { return static_cast<double>(block_bytes) / block; }
  [[nodiscard]] bool quantized() const { return block > 1; }
};

// llama.cpp's -ctk/-ctv types in its order, then the reference's int8 and int4.
std::span<const KvType> kv_types();
const KvType* find_kv_type(std::string_view name);  // case-insensitive; nullptr when unknown

// The cache's K and V types (llama.cpp's -ctk and -ctv): the same type, or two.
struct KvCacheType {
  const KvType* k = nullptr;
  const KvType* v = nullptr;
  KvCacheType() = default;
  KvCacheType(const KvType& both) : k(&both), v(&both) {}  // NOLINT(google-explicit-constructor): one type for K and V
  KvCacheType(const KvType& k_type, const KvType& v_type) : k(&k_type), v(&v_type) {}
  [[nodiscard]] std::string name() const;  // "q8_0" when K and V share it, else "k=q8_0,v=q4_0"
  [[nodiscard]] bool operator==(const KvCacheType&) const = default;
};

// Why llama.cpp would refuse this cache for m (nullopt when it accepts it): a quantized type whose block
// does not divide the head size (K: head_dim, or kv_lora_rank + rope_dim with latent attention), a K type
// that differs from the V type under latent attention.
std::optional<std::string> kv_cache_refusal(const ModelSpec& m, const KvCacheType& t);

// How the runtime sizes the cache (a device profile's [kv_cache] section; llama.cpp's values by default).
struct KvCacheSettings {
  std::uint32_t pad_tokens = 256;     // context rounded up to a multiple of this (1: no padding)
  std::uint32_t ubatch_tokens = 512;  // micro-batch a sliding-window layer keeps beyond its window
};

// Bytes of K and V cached per token over all layers, as if every layer were global.
double kv_bytes_per_token(const ModelSpec& m, const KvCacheType& t);

// Cells (tokens) layer `layer` holds for a context of `context_tokens`.
std::uint64_t kv_cells(const ModelSpec& m, std::uint32_t layer, std::uint64_t context_tokens,
                       const KvCacheSettings& s);

// Bytes of the whole cache for a context of `context_tokens` (padding and sliding windows applied).
double kv_cache_bytes(const ModelSpec& m, const KvCacheType& t, std::uint64_t context_tokens, const KvCacheSettings& s);

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
std::uint64_t max_context(const ModelSpec& m, const KvCacheType& t, double budget_bytes, const KvCacheSettings& s);

// Whether a context runs past the length m was trained for (its context_length); false when that is not known.
// Such a context fits in memory but the model was not trained for it (fit leaves it out unless asked).
bool beyond_trained(const ModelSpec& m, std::uint64_t context_tokens);
// The context a model with YaRN rope scaling runs (Qwen2.5's long-context recipe): factor x the original
// context (the stated context when no original is given), or the stated context when that is longer.
// Source: transformers' rope_scaling {"rope_type": "yarn", "factor", "original_max_position_embeddings"};
// llama.cpp's GGUF keys {arch}.rope.scaling.type/factor/original_context_length.
double yarn_context(double stated_tokens, double original_tokens, double factor);

// The longest context m runs: max_context_tokens (what memory holds) capped at its trained context.
std::uint64_t trained_cap(const ModelSpec& m, std::uint64_t max_context_tokens);

// Without a KV cache, token i recomputes K/V for all i tokens so far: n(n+1)/2 token-steps for n tokens,
// against n with the cache. Returns the ratio (n+1)/2: 50.5x at n = 100, 250.5x at n = 500.
double kv_recompute_ratio(std::uint64_t tokens);
double kv_recompute_token_steps(std::uint64_t tokens);  // n(n+1)/2

}  // namespace edgeplan
