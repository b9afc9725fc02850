#include "edgeplan/core/calibrate.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace edgeplan {
namespace {

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
  const std::vector<DecodeSample> shrinking{{1e9, 0.05}, {2e9, 0.01}};
  EXPECT_EQ(fit_decode(shrinking, 100e9, 0).error().message,
            "the measured time per token does not grow with the bytes read per token");
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
  const std::vector<QuantizedPrefillSample> s{{{1e12, 5}, &q4}, {{1e12, 2.5}, &q8}};
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
  EXPECT_NEAR(prefill_efficiency(after, q4k), 0.24, 1e-12);

  EXPECT_EQ(fit_quantized_prefill({}, typed).error().message, "no prefill (pp) measurement of quantized weights to fit");
  const std::vector<QuantizedPrefillSample> fast{{{4e12, 2}, &q8}};
  EXPECT_EQ(fit_quantized_prefill(fast, typed).error().message,
            "the measurements need a prefill efficiency of 2 (above 1): the device's prefill.tflops (1) is below the "
            "measured rate");
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
