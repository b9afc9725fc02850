// bench's flash attention kernels (io/attention.hpp): what they compute, not how fast.
#include "edgeplan/io/attention.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
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
// 4 query heads over 2 KV heads of 16 and of 24 (a width the 16-lane steps leave to the 8-lane ones); split over
// two calls as two threads run them; AVX-512 (best, where the CPU has it), AVX2 and the portable loop.
TEST(FlashAttention, TilesGivePlainCausalAttention) {
  for (std::uint64_t dim : {16u, 24u}) {
    for (QuantIsa isa : {QuantIsa::best, QuantIsa::avx2, QuantIsa::scalar}) {
      FlashAttention fa(4, 2, dim, 100, isa);
      fa.run(0, 1);
      fa.run(1, 4);
      const std::vector<double> want = reference(fa, 4, 2, dim, 100);
      ASSERT_EQ(fa.output().size(), want.size());
      for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(fa.output()[i], want[i], 1e-5) << fa.kernel() << " " << i;
      EXPECT_EQ(fa.rows(), 4u);
    }
  }
  const std::string best = FlashAttention(4, 2, 16, 100).kernel();
  EXPECT_TRUE(best.ends_with("AVX-512") || best.ends_with("AVX2") || best.ends_with("scalar")) << best;
  EXPECT_EQ(FlashAttention(4, 2, 16, 100, QuantIsa::scalar).kernel(), "tiled flash attention, F16 K/V, 64x64 tiles, scalar");
  EXPECT_THROW(FlashAttention(4, 3, 16, 100), std::invalid_argument);  // heads not a multiple of the KV heads
  EXPECT_THROW(FlashAttention(4, 2, 12, 100), std::invalid_argument);  // head_dim not a multiple of 8
}

// One query per head over every cached key, the plain way, the query rounded to F16 as llama.cpp converts it
// (K's vec_dot_type): softmax of q.k / sqrt(dim) over the context, then the weighted sum of the values.
std::vector<double> token_reference(const TokenAttention& ta, std::uint64_t layers, std::uint64_t heads,
                                    std::uint64_t kv_heads, std::uint64_t dim, std::uint64_t context) {
  std::vector<double> out(layers * heads * dim, 0.0);
  const std::uint64_t cell = kv_heads * dim;
  for (std::uint64_t row = 0; row < layers * heads; ++row) {
    const std::uint64_t layer = row / heads, kvh = row % heads / (heads / kv_heads);
    const std::uint16_t* k = ta.keys().data() + layer * context * cell + kvh * dim;
    const std::uint16_t* v = ta.values().data() + layer * context * cell + kvh * dim;
    std::vector<double> score(context);
    double max = -1e300, sum = 0;
    for (std::uint64_t j = 0; j < context; ++j) {
      double dot = 0;
      for (std::uint64_t c = 0; c < dim; ++c) {
        dot += f16_to_f32(f32_to_f16(ta.queries()[row * dim + c])) * f16_to_f32(k[j * cell + c]);
      }
      score[j] = dot / std::sqrt(static_cast<double>(dim));
      max = std::max(max, score[j]);
    }
    for (double& x : score) sum += x = std::exp(x - max);
    for (std::uint64_t j = 0; j < context; ++j) {
      for (std::uint64_t c = 0; c < dim; ++c) out[row * dim + c] += score[j] / sum * f16_to_f32(v[j * cell + c]);
    }
  }
  return out;
}

// 300 cached keys, 4 query heads over 2 KV heads of 40 (a dot product of one 32-value step and one of 8), 2 layers,
// split over two calls as two threads run them. The accumulator is F16, as llama.cpp's is for F16 values: each of
// the 300 multiply-adds rounds to 11 bits: the outputs (about 0.1) come within 3e-4, hence the tolerance.
TEST(TokenAttention, OneQueryGivesPlainSoftmaxAttention) {
  for (QuantIsa isa : {QuantIsa::best, QuantIsa::scalar}) {
    TokenAttention ta(4, 2, 40, 300, 2, isa);
    ta.run(0, 3);
    ta.run(3, 8);
    const std::vector<double> want = token_reference(ta, 2, 4, 2, 40, 300);
    ASSERT_EQ(ta.output().size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(ta.output()[i], want[i], 5e-4) << ta.kernel() << " " << i;
    EXPECT_EQ(ta.rows(), 8u);
    EXPECT_EQ(ta.flops(), 4.0 * 40 * 300 * 8);
  }
  // One cached key: its weight is exp(0) = 1 and the sum 1, so the output is its value row exactly.
  TokenAttention one(2, 1, 8, 1, 1, QuantIsa::scalar);
  one.run(0, 2);
  for (std::uint64_t c = 0; c < 8; ++c) {
    EXPECT_EQ(one.output()[c], f16_to_f32(one.values()[c]));
    EXPECT_EQ(one.output()[8 + c], f16_to_f32(one.values()[c]));
  }
  EXPECT_EQ(one.kernel(), "one-query flash attention, F16 K/V, F16 accumulator, scalar");
  EXPECT_THROW(TokenAttention(4, 3, 16, 100, 1), std::invalid_argument);  // heads not a multiple of the KV heads
  EXPECT_THROW(TokenAttention(4, 2, 16, 100, 0), std::invalid_argument);  // no layer
}

}  // namespace
}  // namespace edgeplan::io
