// bench's quantized matmul kernels (io/quant_matmul.hpp): what they compute, not how fast.
#include "edgeplan/io/quant_matmul.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace edgeplan::io {
namespace {

TEST(QuantMatmul, CountsFlopsAndNamesItsKernel) {
  QuantMatmul q4(QuantKind::q4_0, 64, 512, 8, QuantIsa::scalar);
  EXPECT_DOUBLE_EQ(q4.flops(), 2.0 * 64 * 512 * 8);  // 524,288
  EXPECT_EQ(q4.rows(), 64u);
  EXPECT_EQ(q4.kernel(), "Q4_0 x Q8_0 int8 dot products, 1x8 tile, scalar");
  EXPECT_EQ(QuantMatmul(QuantKind::q4_k, 8, 256, 8, QuantIsa::scalar).kernel(),
            "Q4_K x Q8_K int8 dot products, 1x8 tile, scalar");
  EXPECT_EQ(weight_type(QuantKind::q8_0), "Q8_0");
  EXPECT_EQ(activation_type(QuantKind::q4_k), "Q8_K");
  EXPECT_EQ(weight_type(QuantKind::q6_k), "Q6_K");
  EXPECT_EQ(activation_type(QuantKind::q6_k), "Q8_K");
  EXPECT_EQ(quant_row_bytes(QuantKind::q6_k, 512), 2u * 210);  // block_q6_K: 128 + 64 + 16 + 2 bytes per 256
  const std::string isa(quant_isa());
  EXPECT_TRUE(isa == "AMX" || isa == "AVX-512 VNNI" || isa == "AVX2" || isa == "scalar") << isa;
  const std::string q4k = QuantMatmul(QuantKind::q4_k, 8, 256, 8).kernel();  // no VNNI kernel of Q4_K
  EXPECT_EQ(q4k.find("VNNI"), std::string::npos) << q4k;
  if (cpu_has_avx2()) {  // Q6_K: ggml's AVX2 dot product, one row by one token even in a prompt
    EXPECT_EQ(QuantMatmul(QuantKind::q6_k, 8, 256, 8, QuantIsa::avx2).kernel(),
              "Q6_K x Q8_K int8 dot products, 1x1 tile, AVX2");
  }
  if (isa == "AVX-512 VNNI") {  // a prompt: tinyBLAS's 4 x 4 tile (Q8_0), 2 rows (Q4_0 unrepacked); a token: 1 row
    EXPECT_EQ(QuantMatmul(QuantKind::q8_0, 8, 256, 8).kernel(),
              "Q8_0 x Q8_0 int8 dot products, 4x4 tile, AVX-512 VNNI");
    EXPECT_EQ(QuantMatmul(QuantKind::q4_0, 12, 256, 8).kernel(),
              "Q4_0 x Q8_0 int8 dot products, 2x8 tile, AVX-512 VNNI");  // 12 rows: not whole groups of 8
    EXPECT_EQ(QuantMatmul(QuantKind::q8_0, 8, 256, 1).kernel(), "Q8_0 x Q8_0 int8 dot products, 1x1 tile, AVX-512 VNNI");
    // The K-quants' AVX2 code built for AVX-512, as llama.cpp's AVX-512 builds run it; asked for, AVX2's build.
    EXPECT_EQ(QuantMatmul(QuantKind::q6_k, 8, 256, 8).kernel(),
              "Q6_K x Q8_K int8 dot products, 1x1 tile, AVX2 built for AVX-512");
  }
  // Threads share one token's rows in chunks of 64, as ggml_compute_forward_mul_mat does; a prompt's in slices.
  EXPECT_EQ(QuantMatmul(QuantKind::q4_0, 8, 256, 1, QuantIsa::scalar).chunk_rows(2), 64u);
  EXPECT_EQ(QuantMatmul(QuantKind::q4_0, 8, 256, 8, QuantIsa::scalar).chunk_rows(2), 0u);
  EXPECT_THROW(QuantMatmul(QuantKind::q8_0, 8, 100, 4), std::invalid_argument);  // k not a multiple of 256
  EXPECT_THROW(QuantMatmul(QuantKind::q8_0, 8, 256, 4), std::invalid_argument);  // tokens not 1 or a multiple of 8
}

// The portable loop's products of 32 rows x 1024 for 8 tokens, and the largest of them in magnitude (the scale of
// the fp32 rounding the other kernels may differ by).
struct Reference {
  explicit Reference(QuantKind kind) : mm(kind, 32, 1024, 8, QuantIsa::scalar) {
    mm.run(0, 32);
    for (float v : mm.output()) largest = std::max(largest, static_cast<double>(std::fabs(v)));
  }
  QuantMatmul mm;
  double largest = 0;
};

// The same operands through the ISA's kernels and the portable loop give the same products (to fp32 rounding:
// the AVX2 kernels sum in another order; each quantizes the activations with its own ISA's code), and every
// output is written.
TEST(QuantMatmul, IsaKernelsAgreeWithThePortableLoop) {
  for (QuantKind kind : kQuantKinds) {
    const Reference ref(kind);
    const QuantMatmul& scalar = ref.mm;
    const double largest = ref.largest;
    EXPECT_GT(largest, 0.1) << weight_type(kind);
    for (QuantIsa isa : {QuantIsa::best, QuantIsa::vnni512, QuantIsa::avx2}) {
      QuantMatmul fast(kind, 32, 1024, 8, isa);
      fast.run(0, 15);  // two slices, as two threads run them; odd ones, so a 2- or 4-row tile leaves rows over
      fast.run(15, 32);
      ASSERT_EQ(fast.output().size(), 8u * 32);
      for (std::size_t i = 0; i < scalar.output().size(); ++i) {
        EXPECT_NEAR(fast.output()[i], scalar.output()[i], 1e-5 * largest) << fast.kernel() << " output " << i;
      }
    }
  }
}

// `fast` (run over the slices [0, cut) and [cut, rows)) gives the products of the portable loop `scalar` (run whole),
// to fp32 rounding of the largest product; the products are not all near zero.
void expect_same_products(QuantMatmul& scalar, QuantMatmul& fast, std::uint64_t cut) {
  scalar.run(0, scalar.rows());
  fast.run(0, cut);
  fast.run(cut, fast.rows());
  double largest = 0;
  for (float v : scalar.output()) largest = std::max(largest, static_cast<double>(std::fabs(v)));
  EXPECT_GT(largest, 0.1) << fast.kernel();
  ASSERT_EQ(fast.output().size(), scalar.output().size());
  for (std::size_t i = 0; i < scalar.output().size(); ++i) {
    EXPECT_NEAR(fast.output()[i], scalar.output()[i], 1e-5 * largest) << fast.kernel() << " output " << i;
  }
}

// A prompt of 32 tokens over 64 rows: where the CPU has AMX, `best` runs the AMX tiles (32 x 32 calls) and gives
// the portable loop's products; the slices start inside a block, as bench's threads' may (each block runs once,
// in the slice it starts in). Without AMX `best` names another kernel, and the test says it skipped.
TEST(QuantMatmul, AmxTilesAgreeWithThePortableLoop) {
  for (QuantKind kind : kQuantKinds) {
    QuantMatmul scalar(kind, 64, 1024, 32, QuantIsa::scalar), amx(kind, 64, 1024, 32);
    if (amx.kernel().find("AMX") == std::string::npos) GTEST_SKIP() << "no AMX here: " << amx.kernel();
    EXPECT_EQ(amx.kernel(), std::string(weight_type(kind)) + " x " + std::string(activation_type(kind)) +
                                " int8 dot products, 32x32 tile, AMX");
    EXPECT_EQ(QuantMatmul(kind, 64, 1024, 32, QuantIsa::vnni512).kernel().find("AMX"), std::string::npos);
    EXPECT_EQ(QuantMatmul(kind, 48, 1024, 32).kernel().find("AMX"), std::string::npos);  // rows not a multiple of 32
    ASSERT_EQ(amx.output().size(), 32u * 64);
    expect_same_products(scalar, amx, 20);
  }
}

// One token (a decoded token's matrix-vector product, bench's GEMV) runs tiles of one token: the same products
// as token 0 of the eight-token matmul over the same operands, on every ISA's kernel.
TEST(QuantMatmul, OneTokenIsTheFirstTokenOfTheMatmul) {
  for (QuantKind kind : kQuantKinds) {
    const Reference ref(kind);
    const QuantMatmul& eight = ref.mm;
    const double largest = ref.largest;
    for (QuantIsa isa : {QuantIsa::scalar, QuantIsa::best, QuantIsa::avx2}) {
      QuantMatmul one(kind, 32, 1024, 1, isa);
      EXPECT_DOUBLE_EQ(one.flops(), 2.0 * 32 * 1024);
      EXPECT_NE(one.kernel().find("x1 tile"), std::string::npos) << one.kernel();
      one.run(0, 15);
      one.run(15, 32);
      ASSERT_EQ(one.output().size(), 32u);
      for (std::size_t r = 0; r < 32; ++r) {
        EXPECT_NEAR(one.output()[r], eight.output()[r], 1e-5 * largest) << one.kernel() << " row " << r;
      }
    }
  }
}

// One token over 96 rows (a 64-row call and a 32-row one): where the CPU has AMX, `best` runs llama.cpp's one-token
// path on the AMX-packed weights (AVX-512 VNNI, 16 rows per vector), Q6_K's too, and gives the portable loop's
// products; the slices start inside a block. Without AMX the test says it skipped.
TEST(QuantMatmul, OneTokenOnAmxPackedWeightsAgreesWithThePortableLoop) {
  for (QuantKind kind : kQuantKinds) {
    QuantMatmul scalar(kind, 96, 1024, 1, QuantIsa::scalar), packed(kind, 96, 1024, 1);
    if (packed.kernel().find("AMX") == std::string::npos) GTEST_SKIP() << "no AMX here: " << packed.kernel();
    EXPECT_EQ(packed.kernel(), std::string(weight_type(kind)) + " x " + std::string(activation_type(kind)) +
                                   " int8 dot products, 64x1 tile, AVX-512 VNNI on AMX-packed weights");
    ASSERT_EQ(packed.output().size(), 96u);
    expect_same_products(scalar, packed, 40);
  }
}

// Q4_0 repacked into 8-row records as llama.cpp's CPU_REPACK buffer holds it (AVX-512 VNNI hosts without AMX):
// prompts of 16 and 32 tokens (its AVX-512 GEMM, the activations 4 tokens a block, 16 tokens a tile) and one token
// over 40 rows (five groups: the first slice ends inside the third, which runs alone, 8 rows by 16 tokens) give the
// portable loop's products; 36 rows (not a multiple of 8) are not repacked,
// as llama.cpp repacks only whole groups, nor 8 tokens (the prompt kernel takes 16). Elsewhere the test says it
// skipped.
TEST(QuantMatmul, RepackedQ4_0AgreesWithThePortableLoop) {
  for (std::uint64_t tokens : {16u, 32u, 1u}) {
    QuantMatmul scalar(QuantKind::q4_0, 40, 1024, tokens, QuantIsa::scalar), r8(QuantKind::q4_0, 40, 1024, tokens);
    if (r8.kernel().find("interleaved") == std::string::npos) GTEST_SKIP() << "no repacked Q4_0 here: " << r8.kernel();
    EXPECT_EQ(r8.kernel(), tokens == 1
                               ? "Q4_0 x Q8_0 int8 dot products, 8x1 tile on 8-row interleaved weights, AVX-512 VNNI"
                               : "Q4_0 x Q8_0 int8 dot products, 16x16 tile on 8-row interleaved weights, AVX-512 VNNI");
    EXPECT_EQ(r8.chunk_rows(2), 8u);  // 40 rows in 4 chunks a thread, on 8-row boundaries
    expect_same_products(scalar, r8, 20);
  }
  EXPECT_EQ(QuantMatmul(QuantKind::q4_0, 36, 1024, 16).kernel().find("interleaved"), std::string::npos);
  EXPECT_EQ(QuantMatmul(QuantKind::q4_0, 40, 1024, 8).kernel().find("interleaved"), std::string::npos);
  EXPECT_EQ(QuantMatmul(QuantKind::q4_0, 2816, 1024, 1).chunk_rows(2) % 8, 0u);
}

// Q4_K repacked into 8-row records as llama.cpp's CPU_REPACK buffer holds it (x86 without AMX): one token
// (ggml_gemv_q4_K_8x8_q8_K's AVX2 arithmetic) and, on AVX-512 hosts, prompts of 8 and 24 tokens (its AVX-512 GEMM,
// the activations 4 tokens a block: 16 tokens a tile, the tokens left 4 at a time) over 40 rows, sliced inside the
// third group (which runs alone), give the portable loop's products. Elsewhere the test says it skipped.
TEST(QuantMatmul, RepackedQ4_KAgreesWithThePortableLoop) {
  for (std::uint64_t tokens : {1u, 8u, 24u}) {
    QuantMatmul scalar(QuantKind::q4_k, 40, 1024, tokens, QuantIsa::scalar), r8(QuantKind::q4_k, 40, 1024, tokens);
    if (r8.kernel().find("interleaved") == std::string::npos) GTEST_SKIP() << "no repacked Q4_K here: " << r8.kernel();
    const std::string avx2 = std::string(quant_isa()) == "AVX2" ? "AVX2" : "AVX2 built for AVX-512";
    EXPECT_EQ(r8.kernel(),
              tokens == 1 ? "Q4_K x Q8_K int8 dot products, 8x1 tile on 8-row interleaved weights, " + avx2
                          : "Q4_K x Q8_K int8 dot products, 16x16 tile on 8-row interleaved weights, AVX-512");
    EXPECT_EQ(r8.chunk_rows(2), 8u);
    expect_same_products(scalar, r8, 20);
  }
  EXPECT_EQ(QuantMatmul(QuantKind::q4_k, 40, 1024, 8, QuantIsa::avx2).kernel().find("interleaved"), std::string::npos);
  EXPECT_EQ(QuantMatmul(QuantKind::q4_k, 40, 1024, 1, QuantIsa::avx2).kernel(),
            "Q4_K x Q8_K int8 dot products, 8x1 tile on 8-row interleaved weights, AVX2");
}

// The K-quants' plain tiles (36 rows: not repacked, nor AMX's) built for AVX-512 give the portable loop's products,
// a prompt's and a token's, sliced inside a row group. Where the host has no AVX-512 VNNI the test says it skipped.
TEST(QuantMatmul, KQuantTilesBuiltForAvx512AgreeWithThePortableLoop) {
  for (QuantKind kind : {QuantKind::q4_k, QuantKind::q6_k}) {
    for (std::uint64_t tokens : {8u, 1u}) {
      QuantMatmul scalar(kind, 36, 1024, tokens, QuantIsa::scalar), evex(kind, 36, 1024, tokens);
      if (evex.kernel().find("built for AVX-512") == std::string::npos) GTEST_SKIP() << "not here: " << evex.kernel();
      expect_same_products(scalar, evex, 13);
    }
  }
}

// The operands are fixed: the first product of each kind is always the same.
TEST(QuantMatmul, OperandsAreFixed) {
  QuantMatmul a(QuantKind::q8_0, 8, 256, 8, QuantIsa::scalar), b(QuantKind::q8_0, 8, 256, 8, QuantIsa::scalar);
  a.run(0, 8);
  b.run(0, 8);
  EXPECT_TRUE(std::equal(a.output().begin(), a.output().end(), b.output().begin()));
}

}  // namespace
}  // namespace edgeplan::io
