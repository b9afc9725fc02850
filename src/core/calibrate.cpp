#include "edgeplan/core/calibrate.hpp"
#include "edgeplan/util/units.hpp"

#include <algorithm>
#include <string>

namespace edgeplan {
namespace {

std::string number(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.ends_with('.')) s.pop_back();
  return s;
}

}  // namespace

BenchTest bench_test_kind(std::uint64_t n_prompt, std::uint64_t n_gen, std::uint64_t n_depth) {
  if (n_depth > 0 || (n_prompt > 0 && n_gen > 0)) return BenchTest::not_fitted;
  return n_gen > 0 ? BenchTest::decode : BenchTest::prefill;
}

DecodeSample decode_sample(double bytes_per_token, double measured_tok_per_s) {
  return {bytes_per_token, 1.0 / measured_tok_per_s};
}

PrefillSample prefill_sample(double flops, std::uint64_t prompt_tokens, double measured_tok_per_s) {
  return {flops, static_cast<double>(prompt_tokens) / measured_tok_per_s};
}

Result<DecodeFit> fit_decode(std::span<const DecodeSample> samples, double bandwidth_bytes_per_s, double overhead_s) {
  if (samples.empty()) return Error{"no decode (tg) measurement to fit"};
  const auto n = static_cast<double>(samples.size());
  double sb = 0, st = 0, sbb = 0, sbt = 0;
  double lo = samples.front().bytes_per_token, hi = lo;
  for (const DecodeSample& s : samples) {
    sb += s.bytes_per_token;
    st += s.s_per_token;
    sbb += s.bytes_per_token * s.bytes_per_token;
    sbt += s.bytes_per_token * s.s_per_token;
    lo = std::min(lo, s.bytes_per_token);
    hi = std::max(hi, s.bytes_per_token);
  }
  DecodeFit fit;
  double slope = 0;
  if (hi > lo) {
    slope = (n * sbt - sb * st) / (n * sbb - sb * sb);
    fit.per_token_overhead_s = (st - slope * sb) / n;
    fit.overhead_fitted = true;
    if (fit.per_token_overhead_s < 0) {
      fit.per_token_overhead_s = 0;
      slope = sbt / sbb;
    }
  } else {
    fit.per_token_overhead_s = overhead_s;
    slope = (sbt - overhead_s * sb) / sbb;
  }
  if (slope <= 0) {
    return Error{hi > lo ? "the measured time per token does not grow with the bytes read per token"
                         : "the per-token overhead (" + number(overhead_s * units::kMsPerS) +
                               " ms) alone is longer than the measured time per token"};
  }
  fit.utilization = 1.0 / (slope * bandwidth_bytes_per_s);
  if (fit.utilization > 1) {
    return Error{"the measurements need a utilization of " + number(fit.utilization) +
                 " (above 1): the device's bandwidth_gbps (" + number(bandwidth_bytes_per_s / units::kGBps) +
                 ") is below the measured rate"};
  }
  return fit;
}

Result<double> fit_prefill_efficiency(std::span<const PrefillSample> samples, double peak_flops) {
  if (samples.empty()) return Error{"no prefill (pp) measurement to fit"};
  double sff = 0, sft = 0;
  for (const PrefillSample& s : samples) {
    sff += s.flops * s.flops;
    sft += s.flops * s.seconds;
  }
  const double efficiency = sff / (sft * peak_flops);
  if (efficiency > 1) {
    return Error{"the measurements need a prefill efficiency of " + number(efficiency) +
                 " (above 1): the device's prefill.tflops (" + number(peak_flops / units::kTera) +
                 ") is below the measured rate"};
  }
  return efficiency;
}

}  // namespace edgeplan
