#include "edgeplan/core/spec.hpp"

#include <gtest/gtest.h>

namespace edgeplan {
namespace {

TEST(Spec, ChapterSpeedup) {
  EXPECT_DOUBLE_EQ(spec_expected_tokens(0.75, 4), 3.05078125);
  EXPECT_DOUBLE_EQ(spec_speedup({0.75, 4, 0.15}), 3.05078125 / 1.6);
  EXPECT_NEAR(spec_speedup({0.75, 4, 0.15}), 1.91, 0.005);
  EXPECT_NEAR(11.152 * spec_speedup({0.75, 4, 0.15}), 21.26, 0.01);
}

TEST(Spec, EdgeCases) {
  EXPECT_EQ(spec_expected_tokens(1, 4), 5);   // every draft accepted: gamma + 1
  EXPECT_EQ(spec_expected_tokens(0, 4), 1);   // none accepted: the target's own token
  EXPECT_EQ(spec_expected_tokens(0.6, 0), 1); // no draft
  EXPECT_EQ(spec_speedup({0.6, 0, 0.5}), 1);
  EXPECT_EQ(spec_speedup({1, 4, 0}), 5);
  EXPECT_DOUBLE_EQ(spec_speedup({0, 4, 0.1}), 1 / 1.4);
  EXPECT_DOUBLE_EQ(spec_speedup({1, 3, 1}), 1);  // cost 1: at best break-even
}

TEST(Spec, BestGamma) {
  const SpecBest b = spec_best_gamma(0.75, 0.15);
  EXPECT_EQ(b.gamma, 4u);
  EXPECT_DOUBLE_EQ(b.speedup, spec_speedup({0.75, 4, 0.15}));
  EXPECT_FALSE(b.at_limit);
  EXPECT_EQ(spec_best_gamma(0.5, 0.15).gamma, 2u);
  EXPECT_EQ(spec_best_gamma(0.9, 0.15).gamma, 8u);
}

TEST(Spec, BestGammaIsZeroWhenNothingPays) {
  EXPECT_EQ(spec_best_gamma(0.9, 1.0).gamma, 0u);
  EXPECT_EQ(spec_best_gamma(0.9, 1.0).speedup, 1);
  EXPECT_EQ(spec_best_gamma(0, 0.1).gamma, 0u);
  EXPECT_EQ(spec_best_gamma(0.1, 0.5).gamma, 0u);
}

TEST(Spec, BestGammaStopsAtTheLimit) {
  const SpecBest b = spec_best_gamma(1, 0);
  EXPECT_EQ(b.gamma, kSpecMaxGamma);
  EXPECT_TRUE(b.at_limit);
  EXPECT_EQ(b.speedup, 65);
}

TEST(Spec, AlphaRange) {
  const std::vector<double> a = spec_alpha_range(0.5, 0.9, 0.05);
  ASSERT_EQ(a.size(), 9u);
  EXPECT_EQ(a[2], 0.6);
  EXPECT_EQ(a.back(), 0.9);
  EXPECT_EQ(spec_alpha_range(0.5, 0.5, 0.1), std::vector<double>{0.5});
  EXPECT_EQ(spec_alpha_range(0.5, 0.75, 0.1), (std::vector<double>{0.5, 0.6, 0.7}));
}

}  // namespace
}  // namespace edgeplan
