#include "edgeplan/core/roofline.hpp"

#include <algorithm>
#include <optional>

#include "edgeplan/core/place.hpp"
#include "edgeplan/core/prefill.hpp"

namespace edgeplan {

double operational_intensity(const RooflineWork& w) { return w.flops / w.bytes; }

double achieved_flops_per_s(const RooflineWork& w) { return w.flops / w.seconds; }

double decode_token_flops(const ModelSpec& m, std::uint64_t context_tokens) {
  const std::optional<Op> head = derive_lm_head(m);
  return prefill_flops(m, context_tokens + 1) - prefill_flops(m, context_tokens) + (head ? head->flops : 0.0);
}

RooflineWork decode_work(const ModelSpec& m, std::uint64_t context_tokens, const DecodeResult& d) {
  return {decode_token_flops(m, context_tokens), d.bytes_per_token, d.s_per_token};
}

RooflineWork prefill_work(double prompt_flops, std::uint64_t prompt_tokens, std::uint32_t ubatch_tokens,
                          double weight_bytes, double seconds) {
  const std::uint64_t ubatch = std::max<std::uint32_t>(1, ubatch_tokens);
  const double passes = static_cast<double>((prompt_tokens + ubatch - 1) / ubatch);
  return {prompt_flops, passes * weight_bytes, seconds};
}

Roofs device_roofs(const DeviceSpec& d) {
  Roofs r;
  r.bandwidth_bytes_per_s = d.bandwidth_bytes_per_s;
  for (UnitKind kind : unit_kinds()) {
    const auto unit = d.units.find(kind);
    if (unit == d.units.end()) continue;
    const std::string name = to_string(kind);
    const std::optional<double>& int8 = unit->second.int8_ops_per_s;
    const std::optional<double>& fp16 = unit->second.fp16_flops_per_s;
    if (int8 && fp16 && *int8 == *fp16) {  // one roof, not two drawn on top of each other
      r.compute.push_back({name + " int8 = fp16", *int8});
      continue;
    }
    if (int8) r.compute.push_back({name + " int8", *int8});
    if (fp16) r.compute.push_back({name + " fp16", *fp16});
  }
  if (!r.compute.empty()) {
    r.source = RoofSource::units;
  } else if (d.prefill) {
    r.source = RoofSource::prefill;
    r.compute.push_back({"[prefill]", d.prefill->peak_flops});
  }
  return r;
}

double attainable_flops_per_s(double intensity, double bandwidth_bytes_per_s, double peak_flops_per_s) {
  return std::min(peak_flops_per_s, intensity * bandwidth_bytes_per_s);
}

double ridge_intensity(double bandwidth_bytes_per_s, double peak_flops_per_s) {
  return peak_flops_per_s / bandwidth_bytes_per_s;
}

}  // namespace edgeplan
