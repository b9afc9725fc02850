#include "edgeplan/core/calibrate.hpp"
#include "edgeplan/util/units.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>
#include <string>

namespace edgeplan {
namespace {

std::string number(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.ends_with('.')) s.pop_back();
  return s;
}

// The decode fit. kept_utilization > 0 (a measured bandwidth): on a narrow span of bytes the bandwidth is kept at
// that utilization and the overhead fitted; 0: the overhead is kept (overhead_s) and the utilization fitted.
Result<DecodeFit> fit_decode_keeping(std::span<const DecodeSample> samples, double bandwidth_bytes_per_s,
                                     double overhead_s, double kept_utilization, bool capped) {
  if (samples.empty()) return Error{"no decode (tg) measurement to fit"};
  const auto n = static_cast<double>(samples.size());
  const bool computed = std::any_of(samples.begin(), samples.end(), [](const DecodeSample& s) { return s.compute_s > 0; });
  if (computed && kept_utilization > 0) {  // decode's own form around each token's compute term
    DecodeFit fit{.utilization = kept_utilization, .overhead_fitted = true, .utilization_fitted = false,
                  .with_compute = true};
    double sum = 0;
    for (const DecodeSample& s : samples) {
      sum += s.s_per_token - std::max(s.bytes_per_token / (bandwidth_bytes_per_s * kept_utilization), s.compute_s);
    }
    fit.per_token_overhead_s = std::max(0.0, sum / n);
    return fit;
  }
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
  // Wide enough a span of bytes: the free line (slope and intercept), unless time does not grow with bytes.
  const bool wide = kept_utilization > 0 ? hi >= kMinDecodeBytesSpread * lo : hi > lo;
  if (wide) {
    slope = (n * sbt - sb * st) / (n * sbb - sb * sb);
    fit.per_token_overhead_s = (st - slope * sb) / n;
    fit.overhead_fitted = true;
    if (fit.per_token_overhead_s < 0) {
      fit.per_token_overhead_s = 0;
      slope = sbt / sbb;
    }
  }
  if (!wide || slope <= 0) {
    fit.overhead_fitted = false;
    if (kept_utilization > 0) {
      // The bandwidth is measured: keep it (slope 1 / (bandwidth x utilization)) and fit the overhead alone,
      // o = mean(t - b x slope); below 0, no overhead and the slope through the origin.
      slope = 1.0 / (bandwidth_bytes_per_s * kept_utilization);
      fit.per_token_overhead_s = (st - slope * sb) / n;
      fit.utilization_fitted = false;
      fit.overhead_fitted = true;
      if (fit.per_token_overhead_s < 0) {
        fit.per_token_overhead_s = 0;
        slope = sbt / sbb;
        fit.utilization_fitted = true;
      }
    } else {
      fit.per_token_overhead_s = overhead_s;
      slope = (sbt - overhead_s * sb) / sbb;
    }
  }
  if (slope <= 0) {
    return Error{"the per-token overhead (" + number(overhead_s * units::kMsPerS) +
                 " ms) alone is longer than the measured time per token"};
  }
  fit.utilization = fit.utilization_fitted ? 1.0 / (slope * bandwidth_bytes_per_s) : kept_utilization;
  if (capped && fit.utilization > 1) {
    return Error{"the measurements need a utilization of " + number(fit.utilization) +
                 " (above 1): the device's bandwidth_gbps (" + number(bandwidth_bytes_per_s / units::kGBps) +
                 ") is below the measured rate"};
  }
  return fit;
}

}  // namespace

BenchTest bench_test_kind(std::uint64_t n_prompt, std::uint64_t n_gen, std::uint64_t n_depth, bool shaped) {
  if (n_prompt > 0 && n_gen > 0) return BenchTest::not_fitted;
  if (n_depth > 0 && (n_gen == 0 || !shaped)) return BenchTest::not_fitted;
  return n_gen > 0 ? BenchTest::decode : BenchTest::prefill;
}

std::uint64_t bench_context(std::uint64_t n_depth, std::uint64_t n_gen) { return n_depth + (n_gen + 1) / 2; }

DecodeSample decode_sample(double bytes_per_token, double measured_tok_per_s, double compute_s) {
  return {bytes_per_token, 1.0 / measured_tok_per_s, compute_s};
}

PrefillSample prefill_sample(double flops, std::uint64_t prompt_tokens, double measured_tok_per_s) {
  return {flops, static_cast<double>(prompt_tokens) / measured_tok_per_s};
}

Result<PrefillSample> weights_part(const PrefillSample& sample, double attention_flops, const PrefillSpec& unit) {
  if (!unit.attention_efficiency) return sample;
  const double attention_s = attention_flops / (unit.peak_flops * *unit.attention_efficiency);
  if (attention_s >= sample.seconds) {
    return Error{"the prompt's attention alone takes " + number(attention_s) + " s at prefill.attention_efficiency " +
                 number(*unit.attention_efficiency) + ", at least the measured " + number(sample.seconds) +
                 " s: the attention efficiency is too low for these measurements"};
  }
  return PrefillSample{sample.flops - attention_flops, sample.seconds - attention_s};
}

Result<DecodeFit> fit_decode(std::span<const DecodeSample> samples, double bandwidth_bytes_per_s, double overhead_s,
                             bool capped) {
  return fit_decode_keeping(samples, bandwidth_bytes_per_s, overhead_s, 0, capped);
}

Result<DecodeFit> fit_measured_decode(std::span<const DecodeSample> samples, double bandwidth_bytes_per_s,
                                      double utilization) {
  return fit_decode_keeping(samples, bandwidth_bytes_per_s, 0, utilization, false);
}

Result<double> fit_prefill_efficiency(std::span<const PrefillSample> samples, double peak_flops, bool capped) {
  if (samples.empty()) return Error{"no prefill (pp) measurement to fit"};
  double sff = 0, sft = 0;
  for (const PrefillSample& s : samples) {
    sff += s.flops * s.flops;
    sft += s.flops * s.seconds;
  }
  const double efficiency = sff / (sft * peak_flops);
  if (capped && efficiency > 1) {
    return Error{"the measurements need a prefill efficiency of " + number(efficiency) +
                 " (above 1): the device's prefill.tflops (" + number(peak_flops / units::kTera) +
                 ") is below the measured rate"};
  }
  return efficiency;
}

namespace {

// The part of sample s that type i's matrices take: their share of the FLOPs, and the time the matrices stored in
// other types leave at the profile's efficiencies; no FLOPs when none is stored in type i (a model too narrow for
// its blocks: llama.cpp's fallback types). Fails when the other types alone take the measured time.
Result<PrefillSample> own_type_part(const QuantizedPrefillSample& s, std::size_t i, const PrefillSpec& before) {
  double weights = 0, own = 0, other_time = 0;  // other_time: weights over efficiency
  for (const TypedWeights& t : s.matmuls) {
    weights += t.weights;
    if (t.type->name == kPrefillTypes[i]) {
      own += t.weights;
    } else {
      other_time += t.weights / prefill_efficiency(before, *t.type);
    }
  }
  if (weights <= 0 || own >= weights) return s.sample;
  if (own <= 0) return PrefillSample{};
  const double flops_per_weight = s.sample.flops / weights;
  const double seconds = s.sample.seconds - flops_per_weight * other_time / before.peak_flops;
  if (seconds <= 0) {
    return Error{std::string(s.format->name) + ": its matrices in types other than " + std::string(kPrefillTypes[i]) +
                 " alone take the measured " + number(s.sample.seconds) +
                 " s at the profile's efficiencies: those are too low for these measurements"};
  }
  return PrefillSample{flops_per_weight * own, seconds};
}

}  // namespace

Result<QuantizedPrefillFit> fit_quantized_prefill(std::span<const QuantizedPrefillSample> samples,
                                                  const PrefillSpec& before, bool capped) {
  if (samples.empty()) return Error{"no prefill (pp) measurement of quantized weights to fit"};
  std::vector<PrefillSample> pooled;  // FLOPs scaled to what they cost at quantized_efficiency
  for (const QuantizedPrefillSample& s : samples) {
    const double scale = before.quantized_efficiency / prefill_efficiency(before, s.matmuls);
    pooled.push_back({s.sample.flops * scale, s.sample.seconds});
  }
  const Result<double> together = fit_prefill_efficiency(pooled, before.peak_flops, capped);
  if (!together) return together.error();
  QuantizedPrefillFit fit;
  fit.quantized_efficiency = *together;
  const bool per_type = std::any_of(before.type_efficiency.begin(), before.type_efficiency.end(),
                                    [](const std::optional<double>& e) { return e.has_value(); });
  // Each measured type on its own samples (per-type profile); x = log of its efficiency before, y = log of the fit.
  std::vector<double> xs, ys;
  for (std::size_t i = 0; i < kPrefillTypes.size(); ++i) {
    std::vector<PrefillSample> own;
    for (const QuantizedPrefillSample& s : samples) {
      if (!per_type || s.format->base != kPrefillTypes[i]) continue;
      const Result<PrefillSample> part = own_type_part(s, i, before);
      if (!part) return part.error();
      if (part->flops > 0) own.push_back(*part);
    }
    if (own.empty()) continue;
    const Result<double> e = fit_prefill_efficiency(own, before.peak_flops, capped);
    if (!e) return Error{std::string(kPrefillTypes[i]) + ": " + e.error().message};
    fit.type_efficiency[i] = *e;
    fit.measured[i] = own.size();
    xs.push_back(std::log(before.type_efficiency[i].value_or(before.quantized_efficiency)));
    ys.push_back(std::log(*e));
  }
  // The types with an efficiency of their own but no samples follow the measured ones: with one measured type, or
  // measured types that had one efficiency or efficiencies within kMinTypeSpread, scaled as the pooled fit moved;
  // with two or more set apart, on the line
  // log e = mean(y) + alpha x (log e_before - mean(x)), alpha the least-squares slope of y on x clamped to [0, 1]
  // (0: the runtime runs every type alike, the measured types' mean; 1: the types keep the profile's ratios).
  const auto types = static_cast<double>(xs.size());
  const double mx = std::accumulate(xs.begin(), xs.end(), 0.0) / std::max(1.0, types);
  const double my = std::accumulate(ys.begin(), ys.end(), 0.0) / std::max(1.0, types);
  double sxx = 0, sxy = 0;
  for (std::size_t j = 0; j < xs.size(); ++j) {
    sxx += (xs[j] - mx) * (xs[j] - mx);
    sxy += (xs[j] - mx) * (ys[j] - my);
  }
  // The line needs measured types the profile set apart: within kMinTypeSpread of each other their slope is timing
  // noise, and the profile's ratios are kept.
  const bool line = xs.size() >= 2 && sxx > 0 &&
                    *std::max_element(xs.begin(), xs.end()) - *std::min_element(xs.begin(), xs.end()) >=
                        std::log(kMinTypeSpread);
  fit.type_spread = line ? std::clamp(sxy / sxx, 0.0, 1.0) : 1.0;
  for (std::size_t i = 0; i < kPrefillTypes.size(); ++i) {
    if (fit.measured[i] > 0 || !before.type_efficiency[i]) continue;
    const double scaled = line ? std::exp(my + fit.type_spread * (std::log(*before.type_efficiency[i]) - mx))
                               : *before.type_efficiency[i] * *together / before.quantized_efficiency;
    if (capped && scaled > 1) {
      return Error{"the measurements scale the " + std::string(kPrefillTypes[i]) + " prefill efficiency to " +
                   number(scaled) + " (above 1): the device's prefill.tflops (" +
                   number(before.peak_flops / units::kTera) + ") is below the rate it implies"};
    }
    fit.type_efficiency[i] = scaled;
  }
  return fit;
}

void raise_measured_peaks(DeviceSpec& fitted) {
  if (fitted.utilization > 1) {
    fitted.bandwidth_bytes_per_s *= fitted.utilization;
    fitted.utilization = 1;
  }
  if (!fitted.prefill) return;
  PrefillSpec& p = *fitted.prefill;
  double most = std::max(p.efficiency, p.quantized_efficiency);
  for (const std::optional<double>& e : p.type_efficiency) most = std::max(most, e.value_or(0));
  if (most <= 1) return;
  p.peak_flops *= most;
  p.efficiency /= most;
  p.quantized_efficiency /= most;
  for (std::optional<double>& e : p.type_efficiency) {
    if (e) *e /= most;
  }
  if (p.attention_efficiency) *p.attention_efficiency /= most;  // the attention keeps its measured rate
}

}  // namespace edgeplan
