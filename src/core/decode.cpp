#include "edgeplan/core/decode.hpp"

#include <algorithm>

#include "edgeplan/core/model.hpp"
#include "edgeplan/core/prefill.hpp"

namespace edgeplan {

DecodeResult decode(const DeviceSpec& device, const DecodeInputs& in) {
  DecodeResult r;
  r.bytes_per_token = in.weight_bytes + in.kv_bytes;
  const double effective_bandwidth = device.bandwidth_bytes_per_s * device.utilization;
  r.ceiling_tok_per_s = effective_bandwidth / r.bytes_per_token;
  r.s_per_token = decode_work_s(r.bytes_per_token, effective_bandwidth, in.compute_s) + device.per_token_overhead_s;
  r.tok_per_s = 1.0 / r.s_per_token;
  return r;
}

double decode_work_s(double bytes, double bandwidth_bytes_per_s, double compute_s) {
  return std::max(bytes / bandwidth_bytes_per_s, compute_s);
}

double measured_overhead_s(double run_s, double bytes, double bandwidth_bytes_per_s, double compute_s, double scale) {
  return std::max(0.0, run_s - decode_work_s(bytes, bandwidth_bytes_per_s, compute_s)) * scale;
}

double decode_attention_flops(const ModelSpec& m, std::uint64_t context_tokens) {
  const std::uint32_t n = attention_layers(m);
  const std::uint32_t pattern = m.sliding_window ? m.sliding_window->pattern : 0;
  const std::uint32_t global = pattern == 0 ? n : n / pattern;  // layer i is global at i % pattern == pattern - 1
  const double context = static_cast<double>(context_tokens);
  double keys = context * global;
  if (global < n) keys += std::min(context, static_cast<double>(m.sliding_window->window_tokens)) * (n - global);
  return 4.0 * m.heads * m.head_dim * keys;
}

double slowest_decode_rate(const DecodeRates& rates) {
  double slowest = 0;
  for (const std::optional<double>& r : rates.type_flops) {
    if (r) slowest = slowest > 0 ? std::min(slowest, *r) : *r;
  }
  return slowest;
}

TypeRate decode_type_rate(const DecodeRates& rates, std::string_view type) {
  if (const std::optional<std::size_t> i = prefill_type_index(type); i && rates.type_flops[*i]) {
    return {*rates.type_flops[*i], true};
  }
  return {slowest_decode_rate(rates), false};
}

double decode_compute_s(const DecodeRates& rates, const ModelSpec& m, const FileType& ft, std::uint64_t context_tokens) {
  if (slowest_decode_rate(rates) <= 0) return 0;
  const auto rate = [&](std::string_view type) { return decode_type_rate(rates, type).flops_per_s; };
  double s = rates.attention_flops ? decode_attention_flops(m, context_tokens) / *rates.attention_flops : 0;
  if (!m.vocab) return s + 2 * matmul_params(m) / rate(ft.base);
  for (const TypedWeights& w : token_matmul_weights(m, ft)) s += 2 * w.weights / rate(w.type->name);
  return s;
}

double ttft_s(double prefill_s, double decode_s_per_token) { return prefill_s + decode_s_per_token; }

double spec_draft_cost(const DeviceSpec* device, double draft_bytes, double target_bytes) {
  if (!device) return draft_bytes / target_bytes;
  return decode(*device, {draft_bytes, 0}).s_per_token / decode(*device, {target_bytes, 0}).s_per_token;
}

}  // namespace edgeplan
