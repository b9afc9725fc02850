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
  r.s_per_token = std::max(r.bytes_per_token / effective_bandwidth, in.compute_s) + device.per_token_overhead_s;
  r.tok_per_s = 1.0 / r.s_per_token;
  return r;
}

double decode_compute_s(const DecodeRates& rates, const ModelSpec& m, const FileType& ft) {
  double slowest = 0;
  for (const std::optional<double>& r : rates.type_flops) {
    if (r) slowest = slowest > 0 ? std::min(slowest, *r) : *r;
  }
  if (slowest <= 0) return 0;
  const auto rate = [&](std::string_view type) {
    const std::optional<std::size_t> i = prefill_type_index(type);
    return i && rates.type_flops[*i] ? *rates.type_flops[*i] : slowest;
  };
  if (!m.vocab) return 2 * matmul_params(m) / rate(ft.base);
  double s = 0;
  for (const TypedTensor& t : typed_tensors(m, ft)) {
    const bool lookup = t.shape.role == TensorRole::token_embd && !(m.tied_embeddings && t.shape.name == "token_embd.weight");
    if (!t.type || t.shape.rows <= 1 || lookup) continue;
    s += 2 * tensor_weights(t.shape) * active_fraction(m, t.shape) / rate(t.type->name);
  }
  return s;
}

double ttft_s(double prefill_s, double decode_s_per_token) { return prefill_s + decode_s_per_token; }

double spec_draft_cost(const DeviceSpec* device, double draft_bytes, double target_bytes) {
  if (!device) return draft_bytes / target_bytes;
  return decode(*device, {draft_bytes, 0}).s_per_token / decode(*device, {target_bytes, 0}).s_per_token;
}

}  // namespace edgeplan
