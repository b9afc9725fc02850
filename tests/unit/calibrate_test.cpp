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

}  // namespace
}  // namespace edgeplan
