#include "edgeplan/core/runtime_class.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

namespace edgeplan {
namespace {

// The p-quantile (0..1) of sorted values, linear between ranks (as numpy's default).
double quantile(const std::vector<double>& sorted, double p) {
  const double at = p * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - static_cast<double>(below));
}

}  // namespace

ErrorBand error_band(std::vector<double> errors) {
  if (errors.empty()) return {};
  std::sort(errors.begin(), errors.end());
  std::vector<double> abs;
  for (double e : errors) abs.push_back(std::abs(e));
  std::sort(abs.begin(), abs.end());
  return ErrorBand{.low = std::min(0.0, quantile(errors, 0.1)), .high = std::max(0.0, quantile(errors, 0.9)),
                   .figures = static_cast<std::uint32_t>(errors.size()), .median_abs = quantile(abs, 0.5),
                   .max_abs = abs.back()};
}

Interval rate_interval(double predicted_rate, const ErrorBand& band) {
  return {predicted_rate / (1 + band.high), predicted_rate / (1 + band.low)};
}

Interval time_interval(double predicted_s, const ErrorBand& band) {
  return {predicted_s * (1 + band.low), predicted_s * (1 + band.high)};
}

DeviceSpec with_runtime_class(DeviceSpec d, const RuntimeClass& c) {
  if (c.decode_error.figures > 0) d.errors = SpeedErrors{c.decode_error, c.prefill_error};
  if (d.provenance && d.provenance->method == Calibration::fitted && d.provenance->runtime == c.runtime) return d;
  d.utilization = c.utilization;
  d.per_token_overhead_s = c.per_token_overhead_s;
  d.decode.reset();
  d.prefill.reset();
  const auto unit = d.units.find(c.unit);
  if (c.prefill_efficiency && unit != d.units.end() && unit->second.fp16_flops_per_s) {
    PrefillSpec p;
    p.peak_flops = *unit->second.fp16_flops_per_s;
    p.efficiency = *c.prefill_efficiency;
    p.quantized_efficiency = c.quantized_efficiency.value_or(*c.prefill_efficiency);
    p.type_efficiency = c.type_efficiency;
    d.prefill = p;
  }
  Provenance& p = d.provenance.emplace();
  p.method = Calibration::class_model;
  p.runtime = c.runtime;
  p.measurements = c.measurements;
  p.from = c.name;
  return d;
}

Result<DecodeLine> fit_decode_line(std::span<const ClassSample> samples) {
  // Minimise sum (a p + o q - 1)^2, p = x / t and q = 1 / t: the relative error of t = a x + o.
  double pp = 0, pq = 0, qq = 0, sp = 0, sq = 0;
  std::size_t n = 0;
  for (const ClassSample& s : samples) {
    if (!s.decode) continue;
    const double p = s.x / s.seconds, q = 1 / s.seconds;
    pp += p * p;
    pq += p * q;
    qq += q * q;
    sp += p;
    sq += q;
    ++n;
  }
  if (n == 0) return Error{"no decode (tg) figure to fit"};
  const double det = pp * qq - pq * pq;
  double a = 0, o = 0;
  if (n > 1 && det > 1e-12 * pp * qq) {
    a = (sp * qq - sq * pq) / det;
    o = (pp * sq - pq * sp) / det;
  }
  if (o <= 0 || a <= 0) {  // through the origin
    a = sp / pp;
    o = 0;
  }
  if (1 / a > 1) {
    return Error{"the figures need a utilization of " + std::to_string(1 / a) + " (above 1): a device's bandwidth_gbps is "
                 "below what it measured"};
  }
  return DecodeLine{1 / a, o};
}

Result<double> fit_prefill_efficiency_relative(std::span<const ClassSample> samples, bool quantized,
                                               std::optional<std::size_t> type) {
  // Minimise sum (k r - 1)^2, r = x / T: the relative error of T = k x, k = 1 / efficiency.
  double sr = 0, rr = 0;
  for (const ClassSample& s : samples) {
    if (s.decode || s.quantized != quantized || (type && s.type != type)) continue;
    const double r = s.x / s.seconds;
    sr += r;
    rr += r * r;
  }
  if (rr == 0) return Error{"no prefill (pp) figure to fit"};
  const double efficiency = rr / sr;
  if (efficiency > 1) {
    return Error{"the figures need a prefill efficiency of " + std::to_string(efficiency) + " (above 1): a device's "
                 "fp16 peak is below what it measured"};
  }
  return efficiency;
}

Result<RuntimeClass> fit_runtime_class(std::span<const ClassSample> samples) {
  auto line = fit_decode_line(samples);
  if (!line) return line.error();
  RuntimeClass c;
  c.utilization = line->utilization;
  c.per_token_overhead_s = line->overhead_s;
  c.measurements = static_cast<std::uint32_t>(samples.size());
  // Float and quantized weights apart; either alone stands for both.
  std::optional<double> f, q;
  const auto has = [&](bool quantized) {
    return std::any_of(samples.begin(), samples.end(),
                       [&](const ClassSample& s) { return !s.decode && s.quantized == quantized; });
  };
  for (const bool quantized : {false, true}) {
    if (!has(quantized)) continue;
    auto e = fit_prefill_efficiency_relative(samples, quantized);
    if (!e) return e.error();
    (quantized ? q : f) = *e;
  }
  if (f || q) {
    c.prefill_efficiency = f ? f : q;
    c.quantized_efficiency = q ? q : f;
  }
  for (std::size_t i = 0; i < kPrefillTypes.size(); ++i) {
    if (std::none_of(samples.begin(), samples.end(),
                     [&](const ClassSample& s) { return !s.decode && s.quantized && s.type == i; })) {
      continue;
    }
    auto e = fit_prefill_efficiency_relative(samples, true, i);
    if (!e) return e.error();
    c.type_efficiency[i] = *e;
  }
  std::set<std::string> devices;
  for (const ClassSample& s : samples) devices.insert(s.device);
  c.fitted_on.assign(devices.begin(), devices.end());
  return c;
}

std::optional<double> predicted_over_measured(const RuntimeClass& c, const ClassSample& s) {
  if (s.decode) return s.seconds / (s.x / c.utilization + c.per_token_overhead_s);
  if (!c.prefill_efficiency) return std::nullopt;
  const double e = !s.quantized                               ? *c.prefill_efficiency
                   : s.type && c.type_efficiency[*s.type] ? *c.type_efficiency[*s.type]
                                                          : *c.quantized_efficiency;
  return s.seconds / (s.x / e);
}

std::vector<std::optional<double>> left_out_ratios(std::span<const ClassSample> samples) {
  std::vector<std::optional<double>> out(samples.size());
  std::set<std::string> devices;
  for (const ClassSample& s : samples) devices.insert(s.device);
  for (const std::string& left_out : devices) {
    std::vector<ClassSample> others;
    for (const ClassSample& s : samples) {
      if (s.device != left_out) others.push_back(s);
    }
    const auto fit = fit_runtime_class(others);
    if (!fit) continue;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      if (samples[i].device == left_out) out[i] = predicted_over_measured(*fit, samples[i]);
    }
  }
  return out;
}

Result<RuntimeClass> fit_with_bands(std::span<const ClassSample> samples) {
  auto all = fit_runtime_class(samples);
  if (!all) return all.error();
  const std::vector<std::optional<double>> ratios = left_out_ratios(samples);
  std::vector<double> decode_errors, prefill_errors;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (ratios[i]) (samples[i].decode ? decode_errors : prefill_errors).push_back(*ratios[i] - 1);
  }
  all->decode_error = error_band(decode_errors);
  if (all->prefill_efficiency) all->prefill_error = error_band(prefill_errors);
  return all;
}

}  // namespace edgeplan
