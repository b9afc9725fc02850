#include "edgeplan/core/runtime_class.hpp"

#include <gtest/gtest.h>

namespace edgeplan {
namespace {

// Figures of a class whose devices all decode at utilization 0.8 with a 5 ms overhead and prefill at efficiency 0.5
// (float) and 0.4 (quantized) of their peak: the fits find those, and every device left out is predicted exactly.
std::vector<ClassSample> exact_samples() {
  std::vector<ClassSample> out;
  const double u = 0.8, o = 0.005;
  int i = 0;
  for (const char* device : {"a", "b", "c"}) {
    for (double x : {0.02, 0.05, 0.1}) {  // bytes / bandwidth: 20 to 100 ms a token at full bandwidth
      const double scaled = x * (1 + i);
      out.push_back({.device = device, .decode = true, .x = scaled, .seconds = scaled / u + o});
    }
    out.push_back({.device = device, .decode = false, .quantized = false, .x = 1.0 + i, .seconds = (1.0 + i) / 0.5});
    out.push_back({.device = device, .decode = false, .quantized = true, .x = 2.0 + i, .seconds = (2.0 + i) / 0.4});
    ++i;
  }
  return out;
}

TEST(RuntimeClass, TheFitsFindTheLineThroughExactFigures) {
  auto c = fit_with_bands(exact_samples());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_NEAR(c->utilization, 0.8, 1e-9);
  EXPECT_NEAR(c->per_token_overhead_s, 0.005, 1e-9);
  EXPECT_NEAR(*c->prefill_efficiency, 0.5, 1e-9);
  EXPECT_NEAR(*c->quantized_efficiency, 0.4, 1e-9);
  EXPECT_EQ(c->fitted_on, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(c->measurements, 15u);
  EXPECT_EQ(c->decode_error.figures, 9u);
  EXPECT_NEAR(c->decode_error.max_abs, 0, 1e-9);
  ASSERT_TRUE(c->prefill_error);
  EXPECT_EQ(c->prefill_error->figures, 6u);
}

// A quantized base type with figures of its own gets its own efficiency (Q4_0 at 0.6 beside the other quantized
// figures' 0.4), which its figures are then predicted at; types without figures keep the quantized efficiency.
TEST(RuntimeClass, AQuantizedTypeWithFiguresOfItsOwnGetsItsOwnEfficiency) {
  std::vector<ClassSample> samples = exact_samples();
  const std::size_t q4_0 = *prefill_type_index("Q4_0");
  for (const char* device : {"a", "b"}) {
    samples.push_back({.device = device, .decode = false, .quantized = true, .x = 3.0, .seconds = 3.0 / 0.6, .type = q4_0});
  }
  auto c = fit_runtime_class(samples);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->type_efficiency[q4_0]);
  EXPECT_NEAR(*c->type_efficiency[q4_0], 0.6, 1e-9);
  EXPECT_FALSE(c->type_efficiency[*prefill_type_index("Q4_K")]);
  EXPECT_NEAR(*predicted_over_measured(*c, samples.back()), 1.0, 1e-9);
  // Under the class a device prefills Q4_0 weights at it.
  DeviceSpec d;
  d.units[UnitKind::gpu].fp16_flops_per_s = 1e12;
  const DeviceSpec classed = with_runtime_class(d, *c);
  ASSERT_TRUE(classed.prefill);
  EXPECT_EQ(classed.prefill->type_efficiency[q4_0], c->type_efficiency[q4_0]);
}

// Each figure counts by its relative error: a device 10x faster weighs as much as a slow one. A line through the
// origin (overhead 0) when the free one's overhead comes out below 0.
TEST(RuntimeClass, DecodeLineWeighsRelativeErrors) {
  // t = x / 0.5 exactly for one figure, and 20% slow for the other: the relative fit splits the difference.
  const std::vector<ClassSample> two{{.device = "a", .x = 1, .seconds = 2}, {.device = "b", .x = 0.01, .seconds = 0.024}};
  auto line = fit_decode_line(two);
  ASSERT_TRUE(line.ok());
  // Through two points the free line is exact: slope (2 - 0.024) / 0.99, overhead 0.024 - 0.01 x slope > 0.
  EXPECT_NEAR(1 / line->utilization, (2 - 0.024) / 0.99, 1e-9);
  EXPECT_NEAR(line->overhead_s, 0.024 - 0.01 * (2 - 0.024) / 0.99, 1e-9);
  // Time growing faster than the bytes: no overhead, the line through the origin.
  const std::vector<ClassSample> steep{{.device = "a", .x = 1, .seconds = 3}, {.device = "b", .x = 0.1, .seconds = 0.1}};
  auto origin = fit_decode_line(steep);
  ASSERT_TRUE(origin.ok());
  EXPECT_EQ(origin->overhead_s, 0);
  // sum p / sum p^2 with p = x / t = 1/3 and 1: a = (4/3) / (10/9) = 1.2.
  EXPECT_NEAR(1 / origin->utilization, 1.2, 1e-9);
  EXPECT_FALSE(fit_decode_line(std::vector<ClassSample>{}).ok());
  EXPECT_EQ(fit_decode_line(std::vector<ClassSample>{{.device = "a", .x = 2, .seconds = 1}}).error().message,
            "the figures need a utilization of 2.000000 (above 1): a device's bandwidth_gbps is below what it measured");
}

TEST(RuntimeClass, ErrorBandIsThePercentilesOfTheErrors) {
  const ErrorBand b = error_band({0.3, -0.2, 0.1, 0.0, -0.1, 0.2, 0.05, -0.05, 0.15, 0.25, -0.15});
  EXPECT_EQ(b.figures, 11u);
  EXPECT_NEAR(b.low, -0.15, 1e-12);   // 10th percentile of 11 sorted values: the 2nd
  EXPECT_NEAR(b.high, 0.25, 1e-12);   // 90th: the 10th
  EXPECT_NEAR(b.median_abs, 0.15, 1e-12);
  EXPECT_NEAR(b.max_abs, 0.3, 1e-12);
  // A class that only over-predicts still bounds at 0 on the other side.
  EXPECT_EQ(error_band({0.1, 0.2}).low, 0);
  EXPECT_EQ(error_band({}).figures, 0u);
  // A rate over-predicted by up to 25% and under-predicted by up to 15%: the measured rate lies between.
  const Interval r = rate_interval(100, b);
  EXPECT_NEAR(r.low, 80, 1e-9);
  EXPECT_NEAR(r.high, 100 / 0.85, 1e-9);
  const Interval t = time_interval(2, b);
  EXPECT_NEAR(t.low, 1.7, 1e-9);
  EXPECT_NEAR(t.high, 2.5, 1e-9);
}

TEST(RuntimeClass, ADeviceTakesTheClassFigures) {
  RuntimeClass c = *fit_with_bands(exact_samples());
  c.name = "rt-x";
  c.runtime = "llama.cpp Vulkan";
  c.unit = UnitKind::gpu;
  DeviceSpec d;
  d.name = "laptop";
  d.bandwidth_bytes_per_s = 100e9;
  d.utilization = 0.85;
  d.prefill = PrefillSpec{.peak_flops = 1e12};
  d.decode = DecodeRates{};
  ComputeUnit gpu;
  gpu.int8_ops_per_s = 8e12;
  gpu.fp16_flops_per_s = 4e12;
  gpu.ops = {OpKind::matmul};
  d.units[UnitKind::gpu] = gpu;
  const DeviceSpec under = with_runtime_class(d, c);
  EXPECT_NEAR(under.utilization, 0.8, 1e-9);
  EXPECT_NEAR(under.per_token_overhead_s, 0.005, 1e-9);
  ASSERT_TRUE(under.prefill);
  EXPECT_EQ(under.prefill->peak_flops, 4e12);  // the class's unit's fp16 peak, not the profile's [prefill]
  EXPECT_NEAR(under.prefill->efficiency, 0.5, 1e-9);
  EXPECT_FALSE(under.decode);  // bench's one-token rates are not the class's kernels
  EXPECT_EQ(under.provenance->method, Calibration::class_model);
  EXPECT_EQ(under.provenance->from, "rt-x");
  ASSERT_TRUE(under.errors);
  EXPECT_EQ(under.errors->decode, c.decode_error);
  // Without the unit's peak, no prefill: another runtime's [prefill] is not carried over.
  d.units.clear();
  EXPECT_FALSE(with_runtime_class(d, c).prefill);
  // A device fitted to the class's runtime keeps its own figures, with the class's range.
  d.provenance.emplace();
  d.provenance->method = Calibration::fitted;
  d.provenance->runtime = "llama.cpp Vulkan";
  d.provenance->measurements = 3;
  const DeviceSpec own = with_runtime_class(d, c);
  EXPECT_EQ(own.utilization, 0.85);
  EXPECT_EQ(own.provenance->method, Calibration::fitted);
  EXPECT_TRUE(own.errors);
}

}  // namespace
}  // namespace edgeplan
