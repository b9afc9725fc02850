#include "edgeplan/core/kv.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace edgeplan {
namespace {

using fixtures::ref_8b;

TEST(Kv, BytesPerTokenPerType) {
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(ref_8b(), *find_kv_type("f16")), 131072);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(ref_8b(), *find_kv_type("int8")), 65536);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(ref_8b(), *find_kv_type("int4")), 32768);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(ref_8b(), *find_kv_type("q8_0")), 69632);  // 34 B per 32 values
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(ref_8b(), *find_kv_type("Q4_0")), 36864);  // 18 B per 32 values
  EXPECT_EQ(find_kv_type("fp8"), nullptr);
}

TEST(Kv, ReferenceBudgetAndContexts) {
  const double budget = kv_budget_bytes(8 * 1073741824.0, 0.8 * 1073741824.0, 5.184e9);
  EXPECT_NEAR(budget / 1073741824.0, 2.37, 0.005);
  EXPECT_NEAR(5.184e9 / 1073741824.0, 4.83, 0.005);
  EXPECT_EQ(max_context(budget, 131072), 19431u);
  EXPECT_EQ(max_context(budget, 65536), 38863u);
  EXPECT_EQ(max_context(budget, 32768), 77726u);
}

TEST(Kv, NoBudgetNoContext) {
  EXPECT_EQ(max_context(0, 131072), 0u);
  EXPECT_EQ(max_context(-5e9, 131072), 0u);
  EXPECT_LT(kv_budget_bytes(4e9, 1e9, 16e9), 0);
}

TEST(Kv, RecomputeSaving) {
  EXPECT_DOUBLE_EQ(kv_recompute_token_steps(100), 5050);
  EXPECT_DOUBLE_EQ(kv_recompute_ratio(100), 50.5);
  EXPECT_DOUBLE_EQ(kv_recompute_ratio(500), 250.5);
  EXPECT_DOUBLE_EQ(kv_recompute_ratio(1), 1);
}

}  // namespace
}  // namespace edgeplan
