#include "edgeplan/core/runtime.hpp"

#include <algorithm>
#include <array>

#include "edgeplan/util/names.hpp"

namespace edgeplan {
namespace {

constexpr std::uint64_t kBatchTokens = 2048;  // llama.cpp's default n_batch (-b)

struct IsaName {
  std::string_view name;
  RepackIsa isa;
};
constexpr std::array<IsaName, 5> kIsas{{{"none", RepackIsa::none},
                                         {"x86-avx2", RepackIsa::x86_avx2},
                                         {"x86-avx512", RepackIsa::x86_avx512},
                                         {"arm-dotprod", RepackIsa::arm_dotprod},
                                         {"arm-i8mm", RepackIsa::arm_i8mm}}};

struct FlashName {
  std::string_view name;
  FlashAttn f;
};
constexpr std::array<FlashName, 3> kFlash{{{"auto", FlashAttn::automatic}, {"on", FlashAttn::on}, {"off", FlashAttn::off}}};

// The interleave (rows per repacked group) llama.cpp uses for a weight type on isa; 0 when it does not repack it.
// ggml/src/ggml-cpu/repack.cpp, ggml_repack_get_optimal_repack_type: x86 with AVX2 repacks Q4_0, Q4_K, IQ4_NL and
// MXFP4 in groups of 8 rows (AVX-512 also Q2_K); ARM with dot-product repacks Q4_0, IQ4_NL, MXFP4 and Q8_0 in
// groups of 4 and Q4_K, Q5_K, Q6_K in groups of 8 (with i8mm the same types and groups).
std::uint32_t interleave(RepackIsa isa, std::string_view type) {
  const auto is = [&](std::initializer_list<std::string_view> names) {
    return std::ranges::find(names, type) != names.end();
  };
  switch (isa) {
    case RepackIsa::none: return 0;
    case RepackIsa::x86_avx512:
      if (type == "Q2_K") return 8;
      [[fallthrough]];
    case RepackIsa::x86_avx2: return is({"Q4_0", "Q4_K", "IQ4_NL", "MXFP4"}) ? 8 : 0;
    case RepackIsa::arm_dotprod:
    case RepackIsa::arm_i8mm:
      if (is({"Q4_0", "IQ4_NL", "MXFP4", "Q8_0"})) return 4;
      return is({"Q4_K", "Q5_K", "Q6_K"}) ? 8 : 0;
  }
  return 0;
}

// The 2-D weights a matmul reads (the token embedding is a row lookup, norms and biases are vectors); `other` is
// the projections of the layers beyond llama's (a hybrid's shortconv in/out_proj, ssm_in, ssm_out, attn_gate,
// ssm_ba; latent attention's down-projections; Gemma 3n's per-layer gate and projection): llama.cpp repacks them
// as it does every weight of a MUL_MAT (measured: tests/llamacpp/check-runtime, h-lfm2-q4).
bool matmul_weight(TensorRole r) {
  switch (r) {
    case TensorRole::other:
    case TensorRole::output:
    case TensorRole::attn_q:
    case TensorRole::attn_k:
    case TensorRole::attn_v:
    case TensorRole::attn_qkv:
    case TensorRole::attn_kv_b:
    case TensorRole::attn_output:
    case TensorRole::ffn_gate:
    case TensorRole::ffn_up:
    case TensorRole::ffn_down: return true;
    default: return false;
  }
}

}  // namespace

std::vector<std::string> repack_isa_names() {
  return util::names_of(kIsas, [](const IsaName& i) { return i.name; });
}

std::optional<RepackIsa> find_repack_isa(std::string_view name) {
  const IsaName* i = util::find_named(kIsas, name, [](const IsaName& x) { return x.name; });
  return i ? std::optional(i->isa) : std::nullopt;
}

std::string_view to_string(RepackIsa isa) {
  for (const IsaName& i : kIsas) {
    if (i.isa == isa) return i.name;
  }
  return "none";
}

std::optional<FlashAttn> find_flash_attn(std::string_view name) {
  const FlashName* f = util::find_named(kFlash, name, [](const FlashName& x) { return x.name; });
  return f ? std::optional(f->f) : std::nullopt;
}

Result<bool> flash_attn_on(FlashAttn f, const KvCacheType& t) {
  if (f != FlashAttn::off) return true;
  if (t.v->quantized()) {
    return Error{"a quantized V cache (" + std::string(t.v->name) + ") needs flash attention: llama.cpp refuses "
                 "--flash-attn off with it"};
  }
  return false;
}

double repack_bytes(const ModelSpec& m, const FileType& ft, RepackIsa isa) {
  if (isa == RepackIsa::none || !m.vocab) return 0;
  double bytes = 0;
  for (const TypedTensor& t : typed_tensors(m, ft)) {
    if (!t.type || !matmul_weight(t.shape.role)) continue;
    const std::uint32_t group = interleave(isa, t.type->name);
    const std::uint64_t rows = t.shape.rows / std::max<std::uint64_t>(1, t.shape.routed_experts);  // ne[1]
    if (group > 0 && rows % group == 0) bytes += t.bytes;
  }
  return bytes;
}

Result<RuntimeBuffers> runtime_buffers(const ModelSpec& m, const FileType& ft, const KvCacheType& t,
                                       std::uint64_t context_tokens, const KvCacheSettings& s, const RuntimeSpec& spec,
                                       const RuntimeOptions& o) {
  RuntimeBuffers b;
  const Result<bool> fa = flash_attn_on(o.flash_attn, t);
  if (!fa) return fa.error();
  b.flash_attn = *fa;
  if (!spec.buffers) return b;
  // One sequence's cells: the padded context (a sliding layer's window is no longer).
  std::uint64_t cells = 0;
  const std::uint32_t kinds = m.sliding_window ? std::max<std::uint32_t>(1, m.sliding_window->pattern) : 1;
  for (std::uint32_t layer = 0; layer < std::min(kinds, m.layers); ++layer) {
    cells = std::max(cells, kv_cells(m, layer, context_tokens, s));
  }
  // llama.cpp reserves the graph of min(n_ctx, n_ubatch) tokens, n_ubatch capped by n_batch = min(n_ctx, 2048).
  const double tokens = static_cast<double>(
      std::min({std::uint64_t{s.ubatch_tokens}, kBatchTokens, context_tokens * o.parallel}));
  const double vocab = m.vocab.value_or(0), h = m.hidden, f = m.ffn;
  const double q = static_cast<double>(m.heads) * m.head_dim, kv = static_cast<double>(m.kv_heads) * m.head_dim;
  const double c = static_cast<double>(cells);
  const double mask = (b.flash_attn ? 2 : 4) * tokens * c;
  const double scores = b.flash_attn ? 0 : 4 * tokens * c * m.heads;
  // With a quantized cache the output phase keeps one more row of hidden states per token live (measured: one
  // T x hidden F32 tensor more at every shape, tests/llamacpp/check-runtime).
  const double quantized_cache = t.k->quantized() || t.v->quantized() ? 1 : 0;
  // A graph that marks the last hidden state an output (t_h_nextn) keeps it beside the rows GET_ROWS takes from
  // it: ggml-alloc frees no graph output (ggml_gallocr_free_node) and reuses none in place
  // (ggml_gallocr_allocate_node), so one more T x hidden F32 tensor is live under the logits.
  const double hidden_output = keeps_hidden_output(m) ? 1 : 0;
  const double output_phase = 4 * tokens * (vocab + (2 + quantized_cache + hidden_output) * h);
  const double attention_phase = scores + mask + 4 * tokens * (3 * h + 2 * q + 2 * kv);
  const double ffn_phase = mask + 4 * tokens * (3 * f + 4 * h);
  b.compute_bytes = std::max({output_phase, attention_phase, ffn_phase});
  b.output_bytes = 4 * vocab * o.parallel;
  b.repack_bytes = repack_bytes(m, ft, spec.repack);
  b.added_bytes = b.compute_bytes + b.output_bytes + (o.mmap ? b.repack_bytes : 0);
  return b;
}

double sequence_fixed_bytes(double memory_bytes, double reserved_bytes, double weight_bytes, const RuntimeBuffers& b,
                            std::uint32_t parallel) {
  const double free = memory_bytes - reserved_bytes;
  return free - (free - weight_bytes - b.added_bytes) / std::max<std::uint32_t>(1, parallel);
}

double sequences_cache_bytes(const ModelSpec& m, const KvCacheType& t, std::uint64_t context_tokens,
                             const KvCacheSettings& s, std::uint32_t parallel) {
  return kv_cache_bytes(m, t, context_tokens, s) * parallel;
}

}  // namespace edgeplan
