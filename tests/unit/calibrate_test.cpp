#include "edgeplan/core/calibrate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace edgeplan {
namespace {

// A pp sample of a file whose prompt matrices are all in its base type.
QuantizedPrefillSample at(PrefillSample sample, const FileType& format) {
  return {sample, &format, {{find_ggml_type(format.base), 1}}};
}

TEST(Calibrate, DecodeLineThroughTwoSizes) {
  // t = b / (100 GB/s x 0.8) + 5 ms, exactly, at 4 GB and 8 GB per token.
  const std::vector<DecodeSample> s{{4e9, 4e9 / 80e9 + 0.005}, {8e9, 8e9 / 80e9 + 0.005}};
  auto fit = fit_decode(s, 100e9, 0);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  EXPECT_NEAR(fit->utilization, 0.8, 1e-12);
  EXPECT_NEAR(fit->per_token_overhead_s, 0.005, 1e-12);
  EXPECT_TRUE(fit->overhead_fitted);
}

TEST(Calibrate, DecodeOnM1) {
  // llama-bench on M1, Llama-2-7B: Q8_0 7.91 tok/s (7,160,348,672 B), Q4_0 14.15 tok/s (3,825,065,984 B).
  const std::vector<DecodeSample> s{{7160348672.0, 1 / 7.91}, {3825065984.0, 1 / 14.15}};
  auto fit = fit_decode(s, 68.25e9, 0);
  const double slope = (1 / 7.91 - 1 / 14.15) / (7160348672.0 - 3825065984.0);
  EXPECT_NEAR(fit->utilization, 1 / (slope * 68.25e9), 1e-12);
  EXPECT_NEAR(fit->utilization, 0.8766, 1e-4);
  EXPECT_NEAR(fit->per_token_overhead_s * 1e3, 6.734, 1e-3);
}

TEST(Calibrate, NegativeInterceptRefitsThroughTheOrigin) {
  // Time grows faster than bytes: the free intercept is negative, so overhead 0 and a = sum bt / sum b^2.
  const std::vector<DecodeSample> s{{1e9, 0.01}, {2e9, 0.03}};
  auto fit = fit_decode(s, 1e12, 0);
  EXPECT_EQ(fit->per_token_overhead_s, 0);
  const double a = (1e9 * 0.01 + 2e9 * 0.03) / (1e18 + 4e18);
  EXPECT_NEAR(fit->utilization, 1 / (a * 1e12), 1e-12);
}

TEST(Calibrate, OneSizeKeepsTheOverhead) {
  const std::vector<DecodeSample> s{{4e9, 0.06}, {4e9, 0.07}};
  auto fit = fit_decode(s, 100e9, 0.005);
  EXPECT_FALSE(fit->overhead_fitted);
  EXPECT_EQ(fit->per_token_overhead_s, 0.005);
  EXPECT_NEAR(fit->utilization, 4e9 / (0.06 * 100e9), 1e-12);  // mean time 0.065 - 0.005 overhead
}

TEST(Calibrate, DecodeErrors) {
  EXPECT_EQ(fit_decode({}, 1e9, 0).error().message, "no decode (tg) measurement to fit");
  const std::vector<DecodeSample> fast{{8e9, 0.05}};
  EXPECT_EQ(fit_decode(fast, 100e9, 0).error().message,
            "the measurements need a utilization of 1.6 (above 1): the device's bandwidth_gbps (100) is below the "
            "measured rate");
  EXPECT_EQ(fit_decode(fast, 100e9, 0.06).error().message,
            "the per-token overhead (60 ms) alone is longer than the measured time per token");
}

TEST(Calibrate, TimeNotGrowingWithBytesKeepsTheOverhead) {
  // The free line's slope is negative: fitted as one size is, overhead 0.01 kept, a = sum b (t - o) / sum b^2 =
  // (1e9 x 0.04 + 2e9 x 0.02) / 5e18 = 1.6e-11 s/B, utilization 1 / (1.6e-11 x 100e9) = 0.625.
  const std::vector<DecodeSample> shrinking{{1e9, 0.05}, {2e9, 0.03}};
  auto fit = fit_decode(shrinking, 100e9, 0.01);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  EXPECT_FALSE(fit->overhead_fitted);
  EXPECT_EQ(fit->per_token_overhead_s, 0.01);
  EXPECT_NEAR(fit->utilization, 0.625, 1e-12);
}

TEST(Calibrate, MeasuredBandwidthOnANarrowSpanFitsTheOverhead) {
  // Bench read 14.7 GB/s. llama.cpp's tg on 103.1 MB and 108.0 MB per token (Q4_0 and Q4_K_M of a 0.2B model):
  // 10.734 and 11.373 ms. 108.0 / 103.1 < 1.5, so the bandwidth is kept and o = mean(t - b / 14.7e9).
  const double bw = 14.7e9;
  const std::vector<DecodeSample> narrow{{103.1e6, 10.734e-3}, {108.0e6, 11.373e-3}};
  auto fit = fit_measured_decode(narrow, bw, 1);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  EXPECT_FALSE(fit->utilization_fitted);
  EXPECT_TRUE(fit->overhead_fitted);
  EXPECT_EQ(fit->utilization, 1);
  EXPECT_NEAR(fit->per_token_overhead_s, ((10.734e-3 - 103.1e6 / bw) + (11.373e-3 - 108.0e6 / bw)) / 2, 1e-15);
  EXPECT_NEAR(fit->per_token_overhead_s * 1e3, 3.8732, 1e-4);

  // With Q8_0's 178.6 MB at 14.993 ms the span is wide (1.73x): the free line, as fit_decode draws it, uncapped.
  const std::vector<DecodeSample> wide{{103.1e6, 10.734e-3}, {178.6e6, 14.993e-3}};
  auto line = fit_measured_decode(wide, bw, 1);
  EXPECT_TRUE(line->utilization_fitted);
  EXPECT_TRUE(line->overhead_fitted);
  const double slope = (14.993e-3 - 10.734e-3) / (178.6e6 - 103.1e6);
  EXPECT_NEAR(line->utilization, 1 / (slope * bw), 1e-12);
  EXPECT_NEAR(line->per_token_overhead_s, 10.734e-3 - slope * 103.1e6, 1e-15);
  EXPECT_NEAR(line->utilization, 1.2059, 1e-4);  // the runtime reads faster than bench's loop: uncapped

  // Faster than the measured bandwidth on a narrow span: no overhead, the utilization through the origin.
  const std::vector<DecodeSample> quick{{100e6, 5e-3}, {110e6, 5.5e-3}};
  // At 10 GB/s the bytes alone take 10 and 11 ms: a = sum bt / sum b^2 = 5e-11 s/B, utilization 2.
  auto origin = fit_measured_decode(quick, 10e9, 1);
  EXPECT_EQ(origin->per_token_overhead_s, 0);
  EXPECT_TRUE(origin->utilization_fitted);
  EXPECT_NEAR(origin->utilization, 1 / ((100e6 * 5e-3 + 110e6 * 5.5e-3) / (1e16 + 1.21e16) * 10e9), 1e-12);
  EXPECT_NEAR(origin->utilization, 2.0, 1e-12);
}

TEST(Calibrate, ComputeTermsKeepTheBandwidthAndFitTheOverhead) {
  // llama.cpp's tg on the development VM (2026-12-03): Q4_0, Q8_0 and Q4_K_M of the 0.2B model at 6.58, 8.45 and
  // 9.97 ms per token; bench read 26.78 GB/s and its one-token rates give the tokens' matmuls 5.00, 5.97 and 7.28 ms.
  // Decode's form t = o + max(b / bw, compute): o = mean(t - max(b / bw, compute)), the wide span notwithstanding.
  const double bw = 26.78e9;
  const std::vector<DecodeSample> s{{103.0e6, 6.58e-3, 5.00e-3}, {178.6e6, 8.45e-3, 5.97e-3},
                                    {105.0e6, 9.97e-3, 7.28e-3}};
  auto fit = fit_measured_decode(s, bw, 1);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  EXPECT_TRUE(fit->with_compute);
  EXPECT_TRUE(fit->overhead_fitted);
  EXPECT_FALSE(fit->utilization_fitted);
  EXPECT_EQ(fit->utilization, 1);
  const double q8_bandwidth = 178.6e6 / bw;  // 6.669 ms: Q8_0 reads longer than it computes
  EXPECT_NEAR(fit->per_token_overhead_s, ((6.58e-3 - 5.00e-3) + (8.45e-3 - q8_bandwidth) + (9.97e-3 - 7.28e-3)) / 3,
              1e-15);
  EXPECT_NEAR(fit->per_token_overhead_s * 1e3, 2.0169, 1e-4);
  // Compute terms longer than the measured times: no overhead, not below 0.
  const std::vector<DecodeSample> slow{{103.0e6, 4e-3, 5e-3}};
  EXPECT_EQ(fit_measured_decode(slow, bw, 1)->per_token_overhead_s, 0);
}

TEST(Calibrate, PrefillEfficiency) {
  // 1 TFLOP in 4 s and 2 TFLOP in 8 s on a 1 TFLOPS peak: efficiency 0.25.
  const std::vector<PrefillSample> s{{1e12, 4}, {2e12, 8}};
  EXPECT_NEAR(*fit_prefill_efficiency(s, 1e12), 0.25, 1e-12);
  EXPECT_EQ(fit_prefill_efficiency({}, 1e12).error().message, "no prefill (pp) measurement to fit");
  const std::vector<PrefillSample> fast{{4e12, 2}};
  EXPECT_EQ(fit_prefill_efficiency(fast, 1e12).error().message,
            "the measurements need a prefill efficiency of 2 (above 1): the device's prefill.tflops (1) is below the "
            "measured rate");
}

TEST(Calibrate, QuantizedTypesScaleTogether) {
  // A profile with one quantized efficiency (0.5 of 1 TFLOPS): Q4_0 at 0.2 and Q8_0 at 0.4 of the peak pool to
  // sum F^2 / (peak sum F T) = 2e24 / (1e12 x (5 + 2.5) x 1e12) = 0.2667, and nothing per type.
  const PrefillSpec pooled{1e12, 0.9, 0.5};
  const FileType& q4 = *find_file_type("Q4_0");
  const FileType& q8 = *find_file_type("Q8_0");
  const FileType& q4k = *find_file_type("Q4_K_M");
  const std::vector<QuantizedPrefillSample> s{at({1e12, 5}, q4), at({1e12, 2.5}, q8)};
  const QuantizedPrefillFit one = *fit_quantized_prefill(s, pooled);
  EXPECT_NEAR(one.quantized_efficiency, 2.0 / 7.5, 1e-12);
  for (const auto& e : one.type_efficiency) EXPECT_FALSE(e);

  // A profile with per-type efficiencies (a bench profile: Q4_0 0.25, Q8_0 0.5, Q4_K 0.3): each measured type is
  // fitted apart, and Q4_K, not measured, scales with the pooled fit. Scaled to quantized_efficiency 0.5, the
  // FLOPs become 2e12 (Q4_0) and 1e12 (Q8_0): 5e24 / (1e12 x (10 + 2.5) x 1e12) = 0.4, so Q4_K 0.3 x 0.4 / 0.5.
  PrefillSpec typed = pooled;
  typed.type_efficiency[*prefill_type_index("Q4_0")] = 0.25;
  typed.type_efficiency[*prefill_type_index("Q8_0")] = 0.5;
  typed.type_efficiency[*prefill_type_index("Q4_K")] = 0.3;
  const QuantizedPrefillFit apart = *fit_quantized_prefill(s, typed);
  EXPECT_NEAR(apart.quantized_efficiency, 0.4, 1e-12);
  EXPECT_NEAR(*apart.type_efficiency[*prefill_type_index("Q4_0")], 0.2, 1e-12);
  EXPECT_NEAR(*apart.type_efficiency[*prefill_type_index("Q8_0")], 0.4, 1e-12);
  EXPECT_NEAR(*apart.type_efficiency[*prefill_type_index("Q4_K")], 0.24, 1e-12);
  EXPECT_EQ(apart.measured[*prefill_type_index("Q4_0")], 1u);
  EXPECT_EQ(apart.measured[*prefill_type_index("Q4_K")], 0u);
  EXPECT_FALSE(apart.type_efficiency[*prefill_type_index("Q5_0")]);
  // Left out of the fit, Q4_K_M is predicted at 0.24 of the peak.
  PrefillSpec after = typed;
  after.quantized_efficiency = apart.quantized_efficiency;
  after.type_efficiency = apart.type_efficiency;
  EXPECT_NEAR(prefill_efficiency(after, *find_ggml_type(q4k.base)), 0.24, 1e-12);

  EXPECT_DOUBLE_EQ(apart.type_spread, 1.0);  // both measured types moved by 0.8: the profile's ratios kept

  EXPECT_EQ(fit_quantized_prefill({}, typed).error().message, "no prefill (pp) measurement of quantized weights to fit");
  const std::vector<QuantizedPrefillSample> fast{at({4e12, 2}, q8)};
  EXPECT_EQ(fit_quantized_prefill(fast, typed).error().message,
            "the measurements need a prefill efficiency of 2 (above 1): the device's prefill.tflops (1) is below the "
            "measured rate");
}

// A Q4_K_M sample fits Q4_K on its Q4_K matrices alone: 1 TFLOP in 5 s, a fifth of the weights in Q6_K, which take
// 0.2e12 / (1e12 x 0.15) = 1.333 s at the profile's Q6_K efficiency; Q4_K gets 0.8e12 FLOPs in the 3.667 s left,
// 0.218 of the peak. Q6_K, not measured, moves as the pooled fit did (one measured type): the blend of
// 1 / (0.8 / 0.3 + 0.2 / 0.15) = 0.25 measured at 0.2, so 0.15 x 0.8 = 0.12.
TEST(Calibrate, OwnTypeFitLeavesOutTheMatricesOfOtherTypes) {
  PrefillSpec typed{1e12, 0.9, 0.15};
  typed.type_efficiency[*prefill_type_index("Q4_K")] = 0.3;
  typed.type_efficiency[*prefill_type_index("Q6_K")] = 0.15;
  const FileType& q4_k_m = *find_file_type("Q4_K_M");
  const std::vector<QuantizedPrefillSample> s{
      {{1e12, 5}, &q4_k_m, {{find_ggml_type("Q4_K"), 0.8}, {find_ggml_type("Q6_K"), 0.2}}}};
  const QuantizedPrefillFit fit = *fit_quantized_prefill(s, typed);
  const double q4_k = 0.8 / (5 - 0.2 / 0.15);
  EXPECT_NEAR(*fit.type_efficiency[*prefill_type_index("Q4_K")], q4_k, 1e-12);
  EXPECT_NEAR(q4_k, 0.218, 1e-3);
  EXPECT_EQ(fit.measured[*prefill_type_index("Q4_K")], 1u);
  EXPECT_EQ(fit.measured[*prefill_type_index("Q6_K")], 0u);
  EXPECT_NEAR(fit.quantized_efficiency, 0.12, 1e-12);
  EXPECT_NEAR(*fit.type_efficiency[*prefill_type_index("Q6_K")], 0.12, 1e-12);
  // A model too narrow for Q4_K's blocks keeps no matrix in it (llama.cpp's fallback, Q5_0 here): its sample says
  // nothing of Q4_K, which is left to follow (pooled: 1e12 x 0.15 / 0.15 FLOPs in 5 s).
  const std::vector<QuantizedPrefillSample> narrow{{{1e12, 5}, &q4_k_m, {{find_ggml_type("Q5_0"), 1}}}};
  const QuantizedPrefillFit none = *fit_quantized_prefill(narrow, typed);
  EXPECT_EQ(none.measured[*prefill_type_index("Q4_K")], 0u);
  EXPECT_NEAR(none.quantized_efficiency, 0.2, 1e-12);
  // The Q6_K matrices alone would take longer than measured: their efficiency is too low for the sample.
  typed.type_efficiency[*prefill_type_index("Q6_K")] = 0.01;
  EXPECT_EQ(fit_quantized_prefill(s, typed).error().message,
            "Q4_K_M: its matrices in types other than Q4_K alone take the measured 5 s at the profile's efficiencies: "
            "those are too low for these measurements");
}

TEST(Calibrate, UnmeasuredTypeFollowsTheMeasuredOnes) {
  // A bench profile ranks Q8_0 (0.5) above Q4_0 (0.25) and Q4_K (0.3); the runtime runs Q4_0 at 0.4 and Q8_0 at 0.4
  // of the peak (1 TFLOP in 2.5 s each): the measured types do not keep the profile's ratio. On log e: x = log 0.25,
  // log 0.5; y = log 0.4 twice: slope 0, so alpha 0 and Q4_K is predicted at the measured types' 0.4.
  PrefillSpec typed{1e12, 0.9, 0.25};
  typed.type_efficiency[*prefill_type_index("Q4_0")] = 0.25;
  typed.type_efficiency[*prefill_type_index("Q8_0")] = 0.5;
  typed.type_efficiency[*prefill_type_index("Q4_K")] = 0.3;
  const FileType& q4 = *find_file_type("Q4_0");
  const FileType& q8 = *find_file_type("Q8_0");
  const std::vector<QuantizedPrefillSample> alike{at({1e12, 2.5}, q4), at({1e12, 2.5}, q8)};
  const QuantizedPrefillFit flat = *fit_quantized_prefill(alike, typed);
  EXPECT_DOUBLE_EQ(flat.type_spread, 0.0);
  EXPECT_NEAR(*flat.type_efficiency[*prefill_type_index("Q4_K")], 0.4, 1e-12);

  // Q4_0 at 0.2 and Q8_0 at 0.2 x sqrt(2) (1 TFLOP in 5 s and 5 / sqrt 2 s): half the profile's ratio of 2 on the
  // log scale, alpha 0.5; Q4_K = exp(mean y + 0.5 (log 0.3 - mean x)) = 0.2 x 2^0.25 x sqrt(0.3 / sqrt(0.125)).
  const std::vector<QuantizedPrefillSample> half{at({1e12, 5}, q4), at({1e12, 5 / std::sqrt(2.0)}, q8)};
  const QuantizedPrefillFit partly = *fit_quantized_prefill(half, typed);
  EXPECT_NEAR(partly.type_spread, 0.5, 1e-12);
  EXPECT_NEAR(*partly.type_efficiency[*prefill_type_index("Q4_K")],
              0.2 * std::pow(2.0, 0.25) * std::sqrt(0.3 / std::sqrt(0.125)), 1e-12);

  // The runtime spreads the types the other way (Q4_0 above Q8_0): alpha clamps to 0, the measured types' mean.
  const std::vector<QuantizedPrefillSample> reversed{at({1e12, 2.5}, q4), at({1e12, 5}, q8)};
  const QuantizedPrefillFit against = *fit_quantized_prefill(reversed, typed);
  EXPECT_DOUBLE_EQ(against.type_spread, 0.0);
  EXPECT_NEAR(*against.type_efficiency[*prefill_type_index("Q4_K")], std::sqrt(0.4 * 0.2), 1e-12);

  // Measured types the profile put within 1.25x of each other (0.5 and 0.49, as bench's AMX Q4_0 and Q8_0) give no
  // slope: alpha 1, and Q4_K moves as the pooled fit did. Pooled: F' = 0.98e12 in 2.5 s and 1e12 in 2 s,
  // (0.98^2 + 1) / (0.98 x 2.5 + 2) = 0.4405 of the peak against 0.49 before.
  PrefillSpec close{1e12, 0.9, 0.49};
  close.type_efficiency[*prefill_type_index("Q4_0")] = 0.5;
  close.type_efficiency[*prefill_type_index("Q8_0")] = 0.49;
  close.type_efficiency[*prefill_type_index("Q4_K")] = 0.3;
  const std::vector<QuantizedPrefillSample> near{at({1e12, 2.5}, q4), at({1e12, 2}, q8)};
  const QuantizedPrefillFit kept = *fit_quantized_prefill(near, close);
  EXPECT_DOUBLE_EQ(kept.type_spread, 1.0);
  const double together = (0.98 * 0.98 + 1) / (0.98 * 2.5 + 2);
  EXPECT_NEAR(kept.quantized_efficiency, together, 1e-12);
  EXPECT_NEAR(*kept.type_efficiency[*prefill_type_index("Q4_K")], 0.3 * together / 0.49, 1e-12);
}

// A measured profile is fitted uncapped, then its peaks rise to the fastest fitted rate: utilization 1.5 of 10 GB/s
// becomes 15 GB/s at 1; efficiencies 1.25 (Q4_0), 0.5 and 0.8 of 0.1 TFLOPS become 0.125 TFLOPS x 1, 0.4 and 0.64.
TEST(Calibrate, MeasuredPeaksRiseToTheFastestRate) {
  const std::vector<PrefillSample> fast{{4e12, 2}};
  EXPECT_NEAR(*fit_prefill_efficiency(fast, 1e12, false), 2.0, 1e-12);
  const std::vector<DecodeSample> quick{{1e9, 0.05}};
  EXPECT_NEAR(fit_decode(quick, 10e9, 0, false)->utilization, 2.0, 1e-12);

  DeviceSpec d;
  d.bandwidth_bytes_per_s = 10e9;
  d.utilization = 1.5;
  d.prefill = PrefillSpec{0.1e12, 0.5, 0.8};
  d.prefill->type_efficiency[*prefill_type_index("Q4_0")] = 1.25;
  raise_measured_peaks(d);
  EXPECT_DOUBLE_EQ(d.bandwidth_bytes_per_s, 15e9);
  EXPECT_DOUBLE_EQ(d.utilization, 1.0);
  EXPECT_DOUBLE_EQ(d.prefill->peak_flops, 0.125e12);
  EXPECT_DOUBLE_EQ(d.prefill->efficiency, 0.4);
  EXPECT_DOUBLE_EQ(d.prefill->quantized_efficiency, 0.64);
  EXPECT_DOUBLE_EQ(*d.prefill->type_efficiency[*prefill_type_index("Q4_0")], 1.0);

  DeviceSpec within = d;  // nothing above 1: unchanged
  raise_measured_peaks(within);
  EXPECT_DOUBLE_EQ(within.prefill->peak_flops, 0.125e12);
  EXPECT_DOUBLE_EQ(within.bandwidth_bytes_per_s, 15e9);
}

}  // namespace
}  // namespace edgeplan
