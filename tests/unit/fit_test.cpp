#include "edgeplan/core/fit.hpp"

#include <gtest/gtest.h>

namespace edgeplan {
namespace {

TEST(Fit, QualityProxyDiscountsBelowEightBits) {
  EXPECT_DOUBLE_EQ(quality_proxy(8e9, 16), 8.0);    // 8 bits and more count in full
  EXPECT_DOUBLE_EQ(quality_proxy(8e9, 8.5), 8.0);
  EXPECT_DOUBLE_EQ(quality_proxy(8e9, 4.0), 4.0);   // half the bits: half the quality
  EXPECT_DOUBLE_EQ(quality_proxy(1.24e9, 4.85), 1.24 * 4.85 / 8);
}

TEST(Fit, RankingIsLargestModelThenMostBitsStable) {
  const std::vector<FitCandidate> c{{1e9, 4.5, 40, 8192},   {8e9, 4.5, 12, 4096}, {8e9, 8.5, 7, 4096},
                                    {1e9, 16, 20, 8192},    {3e9, 4.5, 25, 8192}, {1e9, 4.5, 41, 9000}};
  EXPECT_EQ(fit_ranking(c), (std::vector<std::size_t>{2, 1, 4, 3, 0, 5}));
  EXPECT_TRUE(fit_ranking({}).empty());
}

TEST(Fit, ParetoFrontKeepsWhatNothingBeats) {
  const std::vector<FitCandidate> c{
      {8e9, 8.5, 7, 4096},   // best quality: on the front
      {8e9, 4.5, 12, 4096},  // faster than the 8.5-bit one: on the front
      {1e9, 4.5, 40, 8192},  // beaten by the next in rate and context at equal quality
      {1e9, 4.5, 41, 9000},  // on the front
      {1e9, 16, 20, 8192},   // more quality than the 4.5-bit 1B: on the front
      {1e9, 16, 20, 8192},   // an exact tie does not dominate: both stay
  };
  EXPECT_EQ(pareto_front(c), (std::vector<bool>{true, true, false, true, true, true}));
  EXPECT_TRUE(dominates(c[3], c[2]));
  EXPECT_FALSE(dominates(c[4], c[5]));
  EXPECT_FALSE(dominates(c[0], c[1]));
  EXPECT_FALSE(dominates(c[1], c[0]));
}

}  // namespace
}  // namespace edgeplan
