#include "edgeplan/core/kv.hpp"
#include "edgeplan/util/names.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <tuple>

namespace edgeplan {
namespace {

// ggml's type traits (block size, bytes per block) of llama.cpp's kv_cache_types (common/arg.cpp), in its order.
constexpr std::array kKvTypes{
    KvType{"f32", 1, 4, "llama.cpp"},     KvType{"f16", 1, 2, "llama.cpp"},   KvType{"bf16", 1, 2, "llama.cpp"},
    KvType{"q8_0", 32, 34, "llama.cpp"},  KvType{"q4_0", 32, 18, "llama.cpp"}, KvType{"q4_1", 32, 20, "llama.cpp"},
    KvType{"iq4_nl", 32, 18, "llama.cpp"}, KvType{"q5_0", 32, 22, "llama.cpp"}, KvType{"q5_1", 32, 24, "llama.cpp"},
    KvType{"int8", 1, 1, "reference"},    KvType{"int4", 2, 1, "reference"},
};

}  // namespace

std::span<const KvType> kv_types() { return kKvTypes; }

const KvType* find_kv_type(std::string_view name) {
  return util::find_named(kKvTypes, name, [](const KvType& t) { return t.name; });
}

std::string KvCacheType::name() const {
  if (k == v) return std::string(k->name);
  return "k=" + std::string(k->name) + ",v=" + std::string(v->name);
}

std::optional<std::string> kv_cache_refusal(const ModelSpec& m, const KvCacheType& t) {
  if (m.mla && t.k != t.v) {
    return "latent attention caches one vector per token: K and V take one type, not " + t.name();
  }
  const std::uint32_t k_head = m.mla ? m.mla->kv_lora_rank + m.mla->rope_dim : m.head_dim;
  for (const auto& [side, type, head] : {std::tuple{"K", t.k, k_head}, std::tuple{"V", t.v, m.mla ? m.mla->kv_lora_rank : m.head_dim}}) {
    if (type->quantized() && head % type->block != 0) {
      return std::string(side) + " cache type " + std::string(type->name) + " with block size " +
             std::to_string(type->block) + " does not divide the head size " + std::to_string(head);
    }
  }
  return std::nullopt;
}

namespace {

// Bytes one layer caches per token: a K row and a V row of kv_heads x head_dim values each, or one K row
// of kv_lora_rank + rope_dim values with latent attention.
double layer_bytes_per_token(const ModelSpec& m, const KvCacheType& t) {
  if (m.mla) return (static_cast<double>(m.mla->kv_lora_rank) + m.mla->rope_dim) * t.k->bytes_per_element();
  const double row = static_cast<double>(m.kv_heads) * m.head_dim;
  return row * t.k->bytes_per_element() + row * t.v->bytes_per_element();
}

std::uint64_t pad(std::uint64_t tokens, std::uint32_t to) { return (tokens + to - 1) / to * to; }

}  // namespace

double kv_bytes_per_token(const ModelSpec& m, const KvCacheType& t) { return kv_layers(m) * layer_bytes_per_token(m, t); }

double state_bytes(const ModelSpec& m) {
  if (!m.state) return 0;
  const StateSpec& s = *m.state;
  const double conv_rows = s.conv_kernel > 0 ? s.conv_kernel - 1.0 : 0.0;
  // n_embd_r: the last conv_kernel - 1 inputs of the convolution; n_embd_s: the SSM / delta-net state.
  const double r = s.kind == StateKind::shortconv
                       ? conv_rows * m.hidden
                       : conv_rows * (s.inner + 2.0 * s.groups * s.state_dim);
  const double ssm = static_cast<double>(s.state_dim) * s.inner;
  return s.layers * (r + ssm) * kStateElementBytes;
}

std::uint64_t kv_cells(const ModelSpec& m, std::uint32_t layer, std::uint64_t context_tokens,
                       const KvCacheSettings& s) {
  const std::uint64_t cells = pad(context_tokens, s.pad_tokens);
  if (!is_sliding_layer(m, layer)) return cells;
  return std::min(cells, pad(std::uint64_t{m.sliding_window->window_tokens} + s.ubatch_tokens, s.pad_tokens));
}

double kv_cache_bytes(const ModelSpec& m, const KvCacheType& t, std::uint64_t context_tokens, const KvCacheSettings& s) {
  // Every global layer holds the padded context and every sliding one its window: one term per kind of layer.
  // The layers with a cache of their own are the first kv_layers (the rest share it or keep a state instead).
  const std::uint32_t n = kv_layers(m);
  const std::uint32_t pattern = m.sliding_window ? m.sliding_window->pattern : 0;
  const std::uint32_t global = pattern == 0 ? n : n / pattern;  // layer i is global at i % pattern == pattern - 1
  double cells = static_cast<double>(kv_cells(m, pattern == 0 ? 0 : pattern - 1, context_tokens, s)) * global;
  if (global < n) cells += static_cast<double>(kv_cells(m, 0, context_tokens, s)) * (n - global);
  return cells * layer_bytes_per_token(m, t) + state_bytes(m);
}

double kv_budget_bytes(double memory_bytes, double reserved_bytes, double weight_bytes) {
  return memory_bytes - reserved_bytes - weight_bytes;
}

MemoryFit memory_fit(double memory_bytes, double reserved_bytes, double weight_bytes, double kv_cache_bytes) {
  MemoryFit f;
  f.budget_bytes = kv_budget_bytes(memory_bytes, reserved_bytes, weight_bytes);
  f.headroom_bytes = f.budget_bytes - kv_cache_bytes;
  f.fits = f.headroom_bytes >= 0;
  return f;
}

bool weights_fit(double memory_bytes, double reserved_bytes, double weight_bytes) {
  return kv_budget_bytes(memory_bytes, reserved_bytes, weight_bytes) >= 0;
}

std::uint64_t max_context(const ModelSpec& m, const KvCacheType& t, double budget_bytes, const KvCacheSettings& s) {
  // The constant state is held whatever the context: what is left of the budget holds the KV cache.
  const double state = state_bytes(m);
  if (budget_bytes - state <= 0) return 0;
  if (!m.sliding_window) {
    // The cache is proportional to the padded context: start from the whole pads the budget holds and step to
    // the last one that fits. Contexts between two pads cost the upper pad, so that pad decides them.
    const std::uint64_t p = s.pad_tokens, last_pad = kMaxContextTokens / p * p;
    const double per_token = kv_bytes_per_token(m, t);
    const double pads = std::floor((budget_bytes - state) / per_token / static_cast<double>(p));
    std::uint64_t c = pads * static_cast<double>(p) >= static_cast<double>(last_pad)
                          ? last_pad
                          : static_cast<std::uint64_t>(pads) * p;
    while (c + p <= kMaxContextTokens && kv_cache_bytes(m, t, c + p, s) <= budget_bytes) c += p;
    while (c > 0 && kv_cache_bytes(m, t, c, s) > budget_bytes) c -= p;
    if (c + p > kMaxContextTokens && kv_cache_bytes(m, t, kMaxContextTokens, s) <= budget_bytes) return kMaxContextTokens;
    return c;
  }
  // The cache grows monotonically with the context: binary search for the last context that fits.
  std::uint64_t lo = 0, hi = kMaxContextTokens;
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo + 1) / 2;
    if (kv_cache_bytes(m, t, mid, s) <= budget_bytes) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

bool beyond_trained(const ModelSpec& m, std::uint64_t context_tokens) {
  return m.context_tokens && context_tokens > *m.context_tokens;
}

double yarn_context(double stated_tokens, double original_tokens, double factor) {
  return std::max(stated_tokens, (original_tokens > 0 ? original_tokens : stated_tokens) * factor);
}

std::uint64_t trained_cap(const ModelSpec& m, std::uint64_t max_context_tokens) {
  return m.context_tokens ? std::min<std::uint64_t>(max_context_tokens, *m.context_tokens) : max_context_tokens;
}

double kv_recompute_token_steps(std::uint64_t tokens) {
  const double n = static_cast<double>(tokens);
  return n * (n + 1) / 2;
}

double kv_recompute_ratio(std::uint64_t tokens) {
  return kv_recompute_token_steps(tokens) / static_cast<double>(tokens);
}

}  // namespace edgeplan
