// core/roofline.hpp: operational intensity of decode and prefill, the device's roofs and the attainable rate
// (Williams, Waterman, Patterson, CACM 2009), against values worked out by hand.
#include "edgeplan/core/roofline.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace edgeplan {
namespace {

using fixtures::llama2_7b;

TEST(Roofline, DecodeFlopsAreTheMatmulsAttentionAndTheLmHead) {
  // Llama 2 7B: 2 x 6,476,005,376 matmul weights, attention over one position (4 x 32 layers x 32 heads x 128),
  // the LM head 2 x 4096 x 32,000.
  EXPECT_DOUBLE_EQ(decode_token_flops(llama2_7b(), 0), 12952010752.0 + 524288.0 + 262144000.0);
  // After 4,095 tokens of context the token attends to 4,096 positions: 4 x 4096 x 32 x 32 x 128.
  EXPECT_DOUBLE_EQ(decode_token_flops(llama2_7b(), 4095), 12952010752.0 + 2147483648.0 + 262144000.0);
}

TEST(Roofline, DecodeReadsItsBytesPerTokenInItsTime) {
  DecodeResult d;
  d.bytes_per_token = 3.8e9;
  d.s_per_token = 0.05;
  const RooflineWork w = decode_work(llama2_7b(), 0, d);
  EXPECT_DOUBLE_EQ(w.flops, 13214679040.0);
  EXPECT_DOUBLE_EQ(w.bytes, 3.8e9);
  EXPECT_NEAR(operational_intensity(w), 3.4775, 1e-4);        // FLOP per byte: bandwidth-bound
  EXPECT_DOUBLE_EQ(achieved_flops_per_s(w), 264293580800.0);  // 13.2 GFLOP in 50 ms
}

TEST(Roofline, PrefillReadsTheWeightsOncePerMicroBatch) {
  const RooflineWork one = prefill_work(7e12, 512, 512, 3.8e9, 2.0);
  EXPECT_DOUBLE_EQ(one.bytes, 3.8e9);
  EXPECT_NEAR(operational_intensity(one), 1842.1, 0.05);
  EXPECT_DOUBLE_EQ(achieved_flops_per_s(one), 3.5e12);
  EXPECT_DOUBLE_EQ(prefill_work(7e12, 1000, 512, 3.8e9, 2.0).bytes, 2 * 3.8e9);  // two micro-batches
  EXPECT_DOUBLE_EQ(prefill_work(7e12, 1024, 512, 3.8e9, 2.0).bytes, 2 * 3.8e9);
}

TEST(Roofline, AttainableIsTheLowerOfBandwidthTimesIntensityAndThePeak) {
  EXPECT_DOUBLE_EQ(ridge_intensity(68e9, 2e12), 2e12 / 68e9);
  EXPECT_DOUBLE_EQ(attainable_flops_per_s(10, 68e9, 2e12), 6.8e11);
  EXPECT_DOUBLE_EQ(attainable_flops_per_s(100, 68e9, 2e12), 2e12);
}

TEST(Roofline, RoofsComeFromTheUnitsElseThePrefillPeakElseNone) {
  DeviceSpec d = fixtures::phone8g();
  Roofs r = device_roofs(d);
  EXPECT_EQ(r.source, RoofSource::none);
  EXPECT_TRUE(r.compute.empty());
  EXPECT_DOUBLE_EQ(r.bandwidth_bytes_per_s, 68e9);
  d.prefill = PrefillSpec{2.6e12, 0.6, 0.5};
  r = device_roofs(d);
  EXPECT_EQ(r.source, RoofSource::prefill);
  ASSERT_EQ(r.compute.size(), 1u);
  EXPECT_EQ(r.compute[0].name, "[prefill]");
  EXPECT_DOUBLE_EQ(r.compute[0].flops_per_s, 2.6e12);
  // Units win over [prefill]: npu before gpu, int8 before fp16; a unit without matmul rates has no roof.
  d.units[UnitKind::gpu] = ComputeUnit{4e12, 2e12, 60e9, {OpKind::matmul}};
  d.units[UnitKind::npu] = ComputeUnit{35e12, std::nullopt, 50e9, {OpKind::matmul}};
  d.units[UnitKind::cpu] = ComputeUnit{std::nullopt, std::nullopt, 40e9, {OpKind::elementwise}};
  r = device_roofs(d);
  EXPECT_EQ(r.source, RoofSource::units);
  ASSERT_EQ(r.compute.size(), 3u);
  EXPECT_EQ(r.compute[0].name, "npu int8");
  EXPECT_DOUBLE_EQ(r.compute[0].flops_per_s, 35e12);
  EXPECT_EQ(r.compute[1].name, "gpu int8");
  EXPECT_EQ(r.compute[2].name, "gpu fp16");
  EXPECT_DOUBLE_EQ(r.compute[2].flops_per_s, 2e12);
  // Equal int8 and fp16 peaks (Apple's GPUs) are one roof.
  d.units[UnitKind::gpu].fp16_flops_per_s = 4e12;
  r = device_roofs(d);
  ASSERT_EQ(r.compute.size(), 2u);
  EXPECT_EQ(r.compute[1].name, "gpu int8 = fp16");
  EXPECT_DOUBLE_EQ(r.compute[1].flops_per_s, 4e12);
}

}  // namespace
}  // namespace edgeplan
