#include "edgeplan/core/prefill.hpp"

namespace edgeplan {

double matmul_params(const ModelSpec& m) {
  if (!m.vocab) return m.params.value_or(0);
  double n = 0;
  for (const TensorShape& t : llama_tensors(m)) {
    if (t.layer >= 0 && t.rows > 1) n += tensor_weights(t) * active_fraction(m, t);
  }
  return n;
}

double prefill_flops(const ModelSpec& m, std::uint64_t prompt_tokens) {
  const double s = static_cast<double>(prompt_tokens);
  // Only the layers with attention attend (a hybrid's state layers cost their projections alone).
  const double attention = 2.0 * s * (s + 1) * attention_layers(m) * m.heads * m.head_dim;
  return 2.0 * s * matmul_params(m) + attention;
}

PrefillResult prefill(const PrefillSpec& unit, const ModelSpec& m, const FileType& ft, std::uint64_t prompt_tokens) {
  return prefill(unit, prefill_flops(m, prompt_tokens), ft, prompt_tokens);
}

PrefillResult prefill(const PrefillSpec& unit, double flops, const FileType& ft, std::uint64_t prompt_tokens) {
  PrefillResult r;
  r.flops = flops;
  r.seconds = r.flops / (unit.peak_flops * (is_quantized(ft) ? unit.quantized_efficiency : unit.efficiency));
  r.tok_per_s = static_cast<double>(prompt_tokens) / r.seconds;
  return r;
}

}  // namespace edgeplan
