// bench's flash attention kernel (io/attention.hpp): what it computes, not how fast.
#include "edgeplan/io/attention.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "edgeplan/core/float16.hpp"

namespace edgeplan::io {
namespace {

// Causal softmax attention the plain way: for query t of head h, softmax over keys 0..t of q.k / sqrt(dim), then
// the weighted sum of the values, the KV head shared by heads / kv_heads query heads.
std::vector<double> reference(const FlashAttention& fa, std::uint64_t heads, std::uint64_t kv_heads,
                              std::uint64_t dim, std::uint64_t tokens) {
  std::vector<double> out(tokens * heads * dim, 0.0);
  for (std::uint64_t h = 0; h < heads; ++h) {
    const std::uint64_t kvh = h / (heads / kv_heads);
    for (std::uint64_t t = 0; t < tokens; ++t) {
      std::vector<double> score(t + 1);
      double max = -1e300, sum = 0;
      for (std::uint64_t j = 0; j <= t; ++j) {
        double dot = 0;
        for (std::uint64_t c = 0; c < dim; ++c) {
          dot += fa.queries()[(t * heads + h) * dim + c] * f16_to_f32(fa.keys()[(j * kv_heads + kvh) * dim + c]);
        }
        score[j] = dot / std::sqrt(static_cast<double>(dim));
        max = std::max(max, score[j]);
      }
      for (double& s : score) sum += s = std::exp(s - max);
      for (std::uint64_t j = 0; j <= t; ++j) {
        for (std::uint64_t c = 0; c < dim; ++c) {
          out[(t * heads + h) * dim + c] += score[j] / sum * f16_to_f32(fa.values()[(j * kv_heads + kvh) * dim + c]);
        }
      }
    }
  }
  return out;
}

// 100 tokens cross the 64-token tiles both ways (a partial tile of queries and of keys, a tile the mask hides);
// 4 query heads over 2 KV heads; split over two calls as two threads run them.
TEST(FlashAttention, TilesGivePlainCausalAttention) {
  for (QuantIsa isa : {QuantIsa::best, QuantIsa::scalar}) {
    FlashAttention fa(4, 2, 16, 100, isa);
    fa.run(0, 1);
    fa.run(1, 4);
    const std::vector<double> want = reference(fa, 4, 2, 16, 100);
    ASSERT_EQ(fa.output().size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(fa.output()[i], want[i], 1e-5) << fa.kernel() << " " << i;
    EXPECT_EQ(fa.rows(), 4u);
  }
  EXPECT_EQ(FlashAttention(4, 2, 16, 100, QuantIsa::scalar).kernel(), "tiled flash attention, F16 K/V, 64x64 tiles, scalar");
  EXPECT_THROW(FlashAttention(4, 3, 16, 100), std::invalid_argument);  // heads not a multiple of the KV heads
  EXPECT_THROW(FlashAttention(4, 2, 12, 100), std::invalid_argument);  // head_dim not a multiple of 8
}

}  // namespace
}  // namespace edgeplan::io
