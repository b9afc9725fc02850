// bench's fp16 matmul kernel (io/f16_matmul.hpp): what it computes, not how fast.
#include "edgeplan/io/f16_matmul.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "edgeplan/core/float16.hpp"

namespace edgeplan::io {
namespace {

TEST(F16Matmul, CountsFlopsAndNamesItsKernel) {
  F16Matmul mm(64, 512, 7, QuantIsa::scalar);
  EXPECT_DOUBLE_EQ(mm.flops(), 2.0 * 64 * 512 * 7);  // 458,752
  EXPECT_EQ(mm.rows(), 64u);
  EXPECT_EQ(mm.kernel(), "F16 x F16 fp32 FMA, 4x3 tile, scalar");
  // The best kernel is the AVX2 one wherever the CPU has AVX2, FMA and F16C, whatever the quantized kernels run.
  EXPECT_EQ(F16Matmul(8, 8, 1).kernel(), cpu_has_avx2() ? "F16 x F16 fp32 FMA, 4x3 tile, AVX2"
                                                        : "F16 x F16 fp32 FMA, 4x3 tile, scalar");
  EXPECT_THROW(F16Matmul(8, 0, 4), std::invalid_argument);
  EXPECT_THROW(F16Matmul(0, 8, 4), std::invalid_argument);
}

// Small integers are exact in fp16 and their products' sums exact in fp32, so both kernels give the products to the
// bit: weights w[r][i] = (r + i) % 5 - 2 and activations a[t][i] = (t * 3 + i) % 7 - 3 over k = 21 (two blocks of 8
// and a tail of 5), on 6 rows and 5 tokens (a full 4x3 tile and every smaller edge). Output (t, r) is the sum over i
// of the products; checked against a plain loop and, for (0, 0), by hand: i = 0..20 gives w = -2 -1 0 1 2 -2 ...
// and a = -3 -2 -1 0 1 2 3 -3 ..., whose 21 products sum to -1.
TEST(F16Matmul, MultipliesExactlyOnEveryTileEdge) {
  constexpr std::uint64_t rows = 6, k = 21, tokens = 5;
  for (QuantIsa isa : {QuantIsa::best, QuantIsa::scalar}) {
    F16Matmul mm(rows, k, tokens, isa);
    auto w = mm.weights();
    auto a = mm.activations();
    for (std::uint64_t r = 0; r < rows; ++r) {
      for (std::uint64_t i = 0; i < k; ++i) w[r * k + i] = f32_to_f16(static_cast<float>(int((r + i) % 5) - 2));
    }
    for (std::uint64_t t = 0; t < tokens; ++t) {
      for (std::uint64_t i = 0; i < k; ++i) a[t * k + i] = f32_to_f16(static_cast<float>(int((t * 3 + i) % 7) - 3));
    }
    mm.run(0, 5);  // two slices, as two threads run them: 4 + 1 rows, then 1
    mm.run(5, 6);
    for (std::uint64_t t = 0; t < tokens; ++t) {
      for (std::uint64_t r = 0; r < rows; ++r) {
        int expected = 0;
        for (std::uint64_t i = 0; i < k; ++i) expected += (int((r + i) % 5) - 2) * (int((t * 3 + i) % 7) - 3);
        EXPECT_EQ(mm.output()[t * rows + r], static_cast<float>(expected)) << mm.kernel() << " t " << t << " r " << r;
      }
    }
    EXPECT_EQ(mm.output()[0], -1.0f) << mm.kernel();
  }
}

// The default operands through the ISA's kernel and the portable loop agree to fp32 rounding (the AVX2 kernel fuses
// each multiply-add), and every output is written.
TEST(F16Matmul, IsaKernelAgreesWithThePortableLoop) {
  F16Matmul best(37, 1000, 10), scalar(37, 1000, 10, QuantIsa::scalar);
  best.run(0, 19);
  best.run(19, 37);
  scalar.run(0, 37);
  ASSERT_EQ(best.output().size(), 10u * 37);
  double largest = 0;
  for (float v : scalar.output()) largest = std::max(largest, static_cast<double>(std::fabs(v)));
  EXPECT_GT(largest, 1.0);
  for (std::size_t i = 0; i < scalar.output().size(); ++i) {
    EXPECT_NEAR(best.output()[i], scalar.output()[i], 1e-5 * largest) << "output " << i;
  }
}

}  // namespace
}  // namespace edgeplan::io
