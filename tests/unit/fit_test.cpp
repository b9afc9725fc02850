#include "edgeplan/core/fit.hpp"

#include <gtest/gtest.h>

namespace edgeplan {
namespace {

TEST(Fit, PerplexitySlopeFromLlama2SevenAndSeventyB) {
  EXPECT_NEAR(perplexity_slope(), 0.22530, 5e-5);  // ln(5.7946 / 3.4313) / ln(68.98 / 6.74)
}

TEST(Fit, QualityProxyIsEffectiveParameters) {
  EXPECT_DOUBLE_EQ(*quality_proxy(8e9, "F16"), 8.0);  // float formats count as lossless
  EXPECT_DOUBLE_EQ(*quality_proxy(8e9, "BF16"), 8.0);
  EXPECT_NEAR(*quality_proxy(8e9, "Q8_0"), 7.985, 5e-4);    // 99.8%
  EXPECT_NEAR(*quality_proxy(8e9, "Q4_K_M"), 7.072, 5e-4);  // 88.4%: dPPL 0.1755 on 6.2316
  EXPECT_NEAR(*quality_proxy(8e9, "Q3_K_M"), 5.128, 5e-4);  // 64.1%
  EXPECT_NEAR(*quality_proxy(8e9, "Q2_K"), 1.096, 5e-4);    // 13.7%: perplexity x 1.565
  // The defect this proxy fixes: params x bits/weight rated an 8B at Q2_K (3.17 B) like a 3B at Q8_0 (3.21 B).
  EXPECT_LT(*quality_proxy(8.03e9, "Q2_K"), *quality_proxy(3.21e9, "Q8_0"));
  EXPECT_FALSE(quality_proxy(8e9, "TQ1_0").has_value());  // no published figure
}

TEST(Fit, QualityTableIsOrderedByLossAndMarksImatrixRows) {
  const auto q = format_qualities();
  for (std::size_t i = 1; i < q.size(); ++i) EXPECT_LE(q[i - 1].delta_ppl, q[i].delta_ppl) << q[i].format;
  EXPECT_TRUE(format_quality("IQ4_XS")->imatrix);
  EXPECT_FALSE(format_quality("Q4_K_M")->imatrix);
  EXPECT_DOUBLE_EQ(format_quality("Q6_K")->delta_ppl, 0.021748);
}

TEST(Fit, RankingIsHighestQualityThenFastestWithoutQualityLast) {
  const std::vector<FitCandidate> c{{1.0, 40, 8192}, {std::nullopt, 90, 9000}, {7.1, 12, 4096},
                                    {1.0, 41, 8192}, {3.0, 25, 8192},          {7.1, 20, 4096}};
  EXPECT_EQ(fit_ranking(c), (std::vector<std::size_t>{5, 2, 4, 3, 0, 1}));
  EXPECT_TRUE(fit_ranking({}).empty());
}

TEST(Fit, ParetoFrontKeepsWhatNothingBeats) {
  const std::vector<FitCandidate> c{
      {8.0, 7, 4096},             // best quality: on the front
      {7.1, 12, 4096},            // faster than the 8.0: on the front
      {1.0, 40, 8192},            // beaten by the next in rate and context at equal quality
      {1.0, 41, 9000},            // on the front
      {1.2, 20, 8192},            // more quality than the 1.0s: on the front
      {1.2, 20, 8192},            // an exact tie does not dominate: both stay
      {std::nullopt, 1, 1024},    // no quality: compared with none that has one, so on the front
  };
  EXPECT_EQ(pareto_front(c), (std::vector<bool>{true, true, false, true, true, true, true}));
  EXPECT_TRUE(dominates(c[3], c[2]));
  EXPECT_FALSE(dominates(c[4], c[5]));
  EXPECT_FALSE(dominates(c[0], c[1]));
  EXPECT_FALSE(dominates(c[1], c[0]));
  EXPECT_FALSE(dominates(c[0], c[6]));
}

}  // namespace
}  // namespace edgeplan
