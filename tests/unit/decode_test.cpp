#include "edgeplan/core/decode.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

#include "edgeplan/core/spec.hpp"

namespace edgeplan {
namespace {

using fixtures::phone8g;

TEST(Decode, ReferenceQ4AndF16) {
  const DecodeResult q4 = decode(phone8g(), {5.184e9, 0});
  const DecodeResult f16 = decode(phone8g(), {16e9, 0});
  EXPECT_NEAR(q4.tok_per_s, 57.8 / 5.184, 1e-12);
  EXPECT_NEAR(q4.tok_per_s, 11.15, 0.005);
  EXPECT_NEAR(f16.tok_per_s, 3.6125, 1e-12);
  EXPECT_NEAR(q4.tok_per_s / f16.tok_per_s, 3.09, 0.005);
  EXPECT_DOUBLE_EQ(q4.ceiling_tok_per_s, q4.tok_per_s);
}

// A type without a one-token rate of its own runs at the slowest given, and says so; none given: none at all.
TEST(Decode, ATypeWithoutARateTakesTheSlowest) {
  DecodeRates rates;
  EXPECT_EQ(decode_type_rate(rates, "Q4_0").flops_per_s, 0);
  rates.type_flops[*prefill_type_index("Q8_0")] = 50e9;
  rates.type_flops[*prefill_type_index("Q4_0")] = 100e9;
  EXPECT_EQ(decode_type_rate(rates, "Q4_0").flops_per_s, 100e9);
  EXPECT_TRUE(decode_type_rate(rates, "Q4_0").own);
  EXPECT_EQ(decode_type_rate(rates, "Q5_K").flops_per_s, 50e9);
  EXPECT_FALSE(decode_type_rate(rates, "Q5_K").own);
  EXPECT_FALSE(decode_type_rate(rates, "F16").own);
  EXPECT_EQ(slowest_decode_rate(rates), 50e9);
}

TEST(Decode, OverheadAddsToEveryToken) {
  DeviceSpec d = phone8g();
  d.per_token_overhead_s = 0.010;
  const DecodeResult r = decode(d, {5.78e9, 0});  // 0.1 s of bytes at 57.8 GB/s effective
  EXPECT_NEAR(r.s_per_token, 0.110, 1e-12);
  EXPECT_NEAR(r.tok_per_s, 1 / 0.110, 1e-9);
  EXPECT_NEAR(r.ceiling_tok_per_s, 10.0, 1e-9);
}

// bench's measured overhead: 12 of a model's 24 layers' matrices, 76.1 MB, ran in 3.2 ms; at 53 GB/s they read in
// 1.436 ms, their 1.828 ms of compute is the larger bound, so the run's own cost is 1.372 ms, twice over the model's
// layers 2.744 ms. A run no slower than the model's time gives no overhead, never a negative one.
TEST(Decode, MeasuredOverheadIsTheRunLessDecodesTime) {
  EXPECT_NEAR(measured_overhead_s(3.2e-3, 76.1e6, 53e9, 1.828e-3, 24.0 / 12), 2.744e-3, 1e-12);
  EXPECT_NEAR(measured_overhead_s(3.2e-3, 76.1e6, 53e9, 1.0e-3, 1), 3.2e-3 - 76.1e6 / 53e9, 1e-15);
  EXPECT_EQ(measured_overhead_s(1.5e-3, 76.1e6, 53e9, 1.828e-3, 2), 0.0);
}

TEST(Decode, KvReadsCountAtContext) {
  const DecodeResult r = decode(phone8g(), {5.184e9, 8192 * 131072.0});
  EXPECT_DOUBLE_EQ(r.bytes_per_token, 5.184e9 + 8192 * 131072.0);
  EXPECT_NEAR(r.tok_per_s, 57.8e9 / (5.184e9 + 1073741824.0), 1e-9);
}

TEST(Decode, TheSlowerOfBandwidthAndCompute) {
  DeviceSpec d = phone8g();
  d.per_token_overhead_s = 0.010;
  // 5.78 GB at 57.8 GB/s effective is 0.1 s: a 0.04 s compute bound leaves it bandwidth-bound, 0.25 s takes over.
  EXPECT_NEAR(decode(d, {5.78e9, 0, 0.04}).s_per_token, 0.110, 1e-12);
  const DecodeResult slow = decode(d, {5.78e9, 0, 0.25});
  EXPECT_NEAR(slow.s_per_token, 0.260, 1e-12);
  EXPECT_NEAR(slow.tok_per_s, 1 / 0.260, 1e-9);
  EXPECT_NEAR(slow.ceiling_tok_per_s, 10.0, 1e-9);  // the bandwidth's ceiling
}

// A decoded token's matmuls at the one-token rates: the 0.2B model of check-speed (12 layers of 1024, 16 / 4 heads
// of 64, FFN 2816, vocabulary 32000) in Q4_0 has 135,266,304 Q4_0 weights in its layers (11,272,192 each) and an
// output matrix of 32,768,000 in Q6_K (llama.cpp's rule for Q4_0 files); the untied token_embd is looked up.
TEST(Decode, ComputeTermRunsEachMatrixAtItsTypesRate) {
  const ModelSpec m = fixtures::dense("check", 12, 1024, 16, 4, 64, 2816, 32000);
  const FileType& q4_0 = *find_file_type("Q4_0");
  DecodeRates rates;
  rates.type_flops[*prefill_type_index("Q4_0")] = 100e9;
  rates.type_flops[*prefill_type_index("Q6_K")] = 25e9;
  EXPECT_NEAR(decode_compute_s(rates, m, q4_0, 0), 2 * 135266304 / 100e9 + 2 * 32768000 / 25e9, 1e-15);
  EXPECT_NEAR(decode_compute_s(rates, m, q4_0, 0) * 1e3, 5.32676608, 1e-9);
  // A type without a rate runs at the slowest given: Q6_K at Q4_0's when only that is given.
  DecodeRates only_q4;
  only_q4.type_flops[*prefill_type_index("Q4_0")] = 100e9;
  EXPECT_NEAR(decode_compute_s(only_q4, m, q4_0, 0), 2 * (135266304 + 32768000) / 100e9, 1e-15);
  EXPECT_EQ(decode_compute_s(DecodeRates{}, m, q4_0, 0), 0);

  // Tied embeddings: token_embd is the output matrix, multiplied in full. Llama 3.2 1B in Q8_0: 16 layers of
  // 60,817,408 weights and 128,256 x 2048 of token_embd, all Q8_0.
  DecodeRates q8;
  q8.type_flops[*prefill_type_index("Q8_0")] = 50e9;
  EXPECT_NEAR(decode_compute_s(q8, fixtures::llama32_1b(), *find_file_type("Q8_0"), 0),
              2 * (16 * 60817408.0 + 128256 * 2048.0) / 50e9, 1e-15);
  // Without a tensor list: 2 x params at the file type's base type (Q4_K for Q4_K_M).
  DecodeRates q4k;
  q4k.type_flops[*prefill_type_index("Q4_K")] = 80e9;
  EXPECT_NEAR(decode_compute_s(q4k, fixtures::ref_8b(), *find_file_type("Q4_K_M"), 0), 0.2, 1e-15);
}

// One token's attention: 4 x heads x head_dim FLOPs per cached key and attention layer. The check model at 512
// cached tokens: 4 x 16 x 64 x 512 x 12 = 25,165,824 FLOPs; a sliding layer sees at most its window.
TEST(Decode, AttentionOverTheContext) {
  const ModelSpec m = fixtures::dense("check", 12, 1024, 16, 4, 64, 2816, 32000);
  EXPECT_EQ(decode_attention_flops(m, 512), 25165824.0);
  EXPECT_EQ(decode_attention_flops(m, 0), 0.0);
  ModelSpec swa = m;
  swa.sliding_window = SlidingWindow{128, 3};  // 4 global layers of 12, 8 sliding
  EXPECT_EQ(decode_attention_flops(swa, 512), 4.0 * 16 * 64 * (4 * 512 + 8 * 128));
  EXPECT_EQ(decode_attention_flops(swa, 100), 4.0 * 16 * 64 * 12 * 100);  // within the window: every layer alike

  // In the compute term at the attention rate, beside the matmuls: 25,165,824 FLOPs at 50 GFLOPS is 0.50331648 ms.
  DecodeRates rates;
  rates.type_flops[*prefill_type_index("Q4_0")] = 100e9;
  rates.type_flops[*prefill_type_index("Q6_K")] = 25e9;
  const FileType& q4_0 = *find_file_type("Q4_0");
  const double matmuls = decode_compute_s(rates, m, q4_0, 512);  // no attention rate: the matmuls alone
  EXPECT_NEAR(matmuls * 1e3, 5.32676608, 1e-9);
  rates.attention_flops = 50e9;
  EXPECT_NEAR(decode_compute_s(rates, m, q4_0, 512) * 1e3, 5.32676608 + 0.50331648, 1e-9);
  EXPECT_NEAR(decode_compute_s(rates, m, q4_0, 0) * 1e3, 5.32676608, 1e-9);
}

TEST(Spec, ReferenceSpeedupAndRate) {
  const SpecParams p{0.75, 4, 0.15};
  EXPECT_NEAR(spec_expected_tokens(0.75, 4), 3.05078125, 1e-12);
  EXPECT_NEAR(spec_speedup(p), 3.05078125 / 1.6, 1e-12);
  EXPECT_NEAR(spec_speedup(p) * 57.8 / 5.184, 21.26, 0.005);
}

TEST(Spec, EdgeCases) {
  EXPECT_DOUBLE_EQ(spec_expected_tokens(1.0, 4), 5.0);   // every draft accepted
  EXPECT_DOUBLE_EQ(spec_expected_tokens(0.0, 4), 1.0);   // none accepted: the target's own token
  EXPECT_DOUBLE_EQ(spec_expected_tokens(0.6, 0), 1.0);   // gamma 0 is plain decoding
  EXPECT_DOUBLE_EQ(spec_speedup({0.9, 0, 0.5}), 1.0);
  EXPECT_LT(spec_speedup({0.5, 4, 1.0}), 1.0);           // a draft as costly as the target never pays
}

}  // namespace
}  // namespace edgeplan
