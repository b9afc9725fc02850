#include "edgeplan/core/decode.hpp"

#include <algorithm>

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

double ttft_s(double prefill_s, double decode_s_per_token) { return prefill_s + decode_s_per_token; }

double spec_draft_cost(const DeviceSpec* device, double draft_bytes, double target_bytes) {
  if (!device) return draft_bytes / target_bytes;
  return decode(*device, {draft_bytes, 0}).s_per_token / decode(*device, {target_bytes, 0}).s_per_token;
}

}  // namespace edgeplan
