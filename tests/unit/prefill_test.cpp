#include "edgeplan/core/prefill.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace edgeplan {
namespace {

using fixtures::llama2_7b;

TEST(Prefill, MatmulParamsAreTheBlocksMatrices) {
  // Per layer: 4 x 4096^2 attention + 3 x 4096 x 11008 FFN = 202,375,168; x 32 layers.
  EXPECT_DOUBLE_EQ(matmul_params(llama2_7b()), 32.0 * 202375168);
  ModelSpec stated;
  stated.params = 8e9;
  EXPECT_DOUBLE_EQ(matmul_params(stated), 8e9);
}

TEST(Prefill, FlopsAreWeightsPlusCausalAttention) {
  const ModelSpec m = llama2_7b();
  EXPECT_DOUBLE_EQ(prefill_flops(m, 1), 2.0 * matmul_params(m) + 2.0 * 1 * 2 * 32 * 32 * 128);
  EXPECT_DOUBLE_EQ(prefill_flops(m, 512), 2.0 * 512 * matmul_params(m) + 2.0 * 512 * 513 * 32 * 32 * 128);
}

TEST(Prefill, RateFromPeakAndEfficiency) {
  const ModelSpec m = llama2_7b();
  const PrefillResult r = prefill({2.6e12, 0.6}, m, 512);
  EXPECT_DOUBLE_EQ(r.seconds, prefill_flops(m, 512) / 1.56e12);
  EXPECT_DOUBLE_EQ(r.tok_per_s, 512 / r.seconds);
  EXPECT_NEAR(r.tok_per_s, 119.2, 0.05);
}

}  // namespace
}  // namespace edgeplan
