#include "edgeplan/core/prefill.hpp"

namespace edgeplan {

double matmul_params(const ModelSpec& m) {
  if (!m.vocab) return m.params.value_or(0);
  double n = 0;
  for (const TensorShape& t : llama_tensors(m)) {
    if (prompt_matmul(t)) n += tensor_weights(t) * active_fraction(m, t);
  }
  return n;
}

double attention_flops(const ModelSpec& m, std::uint64_t prompt_tokens) {
  const double s = static_cast<double>(prompt_tokens);
  // Only the layers with attention attend (a hybrid's state layers cost their projections alone).
  return 2.0 * s * (s + 1) * attention_layers(m) * m.heads * m.head_dim;
}

double prefill_flops(const ModelSpec& m, std::uint64_t prompt_tokens) {
  return 2.0 * static_cast<double>(prompt_tokens) * matmul_params(m) + attention_flops(m, prompt_tokens);
}

std::optional<std::size_t> prefill_type_index(std::string_view ggml_type) {
  for (std::size_t i = 0; i < kPrefillTypes.size(); ++i) {
    if (kPrefillTypes[i] == ggml_type) return i;
  }
  return std::nullopt;
}

double prefill_efficiency(const PrefillSpec& unit, const GgmlType& type) {
  if (!is_quantized(type)) return unit.efficiency;
  const std::optional<std::size_t> i = prefill_type_index(type.name);
  return i && unit.type_efficiency[*i] ? *unit.type_efficiency[*i] : unit.quantized_efficiency;
}

double prefill_efficiency(const PrefillSpec& unit, std::span<const TypedWeights> matmuls) {
  double weights = 0, time = 0;  // time: weights over efficiency
  for (const TypedWeights& t : matmuls) {
    weights += t.weights;
    time += t.weights / prefill_efficiency(unit, *t.type);
  }
  if (weights > 0) return weights / time;
  return matmuls.empty() ? unit.efficiency : prefill_efficiency(unit, *matmuls.front().type);
}

PrefillResult prefill(const PrefillSpec& unit, const ModelSpec& m, const FileType& ft, std::uint64_t prompt_tokens) {
  return prefill(unit, prefill_flops(m, prompt_tokens), attention_flops(m, prompt_tokens), matmul_weights(m, ft),
                 prompt_tokens);
}

PrefillResult prefill(const PrefillSpec& unit, double flops, double attention, std::span<const TypedWeights> matmuls,
                      std::uint64_t prompt_tokens) {
  PrefillResult r;
  r.flops = flops;
  const double efficiency = prefill_efficiency(unit, matmuls);
  r.seconds = unit.attention_efficiency
                  ? (flops - attention) / (unit.peak_flops * efficiency) +
                        attention / (unit.peak_flops * *unit.attention_efficiency)
                  : flops / (unit.peak_flops * efficiency);
  r.tok_per_s = static_cast<double>(prompt_tokens) / r.seconds;
  return r;
}

}  // namespace edgeplan
