#include "edgeplan/core/limits.hpp"
#include "edgeplan/core/model.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace edgeplan {
namespace {

using fixtures::llama2_7b;
using fixtures::llama32_1b;

TEST(Model, ParamCountFromTensors) { EXPECT_EQ(*param_count(llama2_7b()), 6738415616.0); }

TEST(Model, Llama2Q4_0MatchesLlamaCpp) {
  auto w = weight_size(llama2_7b(), *find_file_type("Q4_0"));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->bytes, 3825065984.0);
  EXPECT_EQ(w->source, SizeSource::tensor_rules);
}

TEST(Model, Llama32_1BQ4KMMatchesLlamaCpp) {
  auto w = weight_size(llama32_1b(), *find_file_type("Q4_K_M"));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->bytes, 799862912.0);
}

// A decoded token multiplies the blocks' matrices and the output matrix, not token_embd: Llama-2-7B in Q4_0 has
// 32 x (4 x 4096^2 + 3 x 4096 x 11008) block weights in Q4_0 and its output matrix (4096 x 32000) in Q6_K.
TEST(Model, ATokensMatricesUnderTheRules) {
  const std::vector<TypedWeights> w = token_matmul_weights(llama2_7b(), *find_file_type("Q4_0"));
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].type, find_ggml_type("Q4_0"));
  EXPECT_EQ(w[0].weights, 32 * (4 * 4096.0 * 4096 + 3 * 4096.0 * 11008));
  EXPECT_EQ(w[1].type, find_ggml_type("Q6_K"));
  EXPECT_EQ(w[1].weights, 4096.0 * 32000);
}

// A decoded token looks up one row of an untied token_embd (ggml_get_rows) and multiplies by the output matrix
// whole: Llama-2-7B's Q4_0 token_embd is 32,000 rows of 4,096 weights at 18 B per 32 (2,304 B a row).
TEST(Model, ATokenReadsOneRowOfAnUntiedTokenEmbd) {
  const ModelSpec m = llama2_7b();
  EXPECT_TRUE(row_lookup(m, "token_embd.weight"));
  EXPECT_FALSE(row_lookup(m, "output.weight"));
  const WeightSize w = *weight_size(m, *find_file_type("Q4_0"));
  EXPECT_EQ(w.active_bytes, 3825065984.0 - 31999 * 2304.0);
  // A stated size is read in the same share.
  ModelSpec stated = m;
  stated.formats["Q4_0"] = FormatSize{std::nullopt, 4e9, std::nullopt};
  EXPECT_DOUBLE_EQ(weight_size(stated, *find_file_type("Q4_0"))->active_bytes,
                   4e9 * (3825065984.0 - 31999 * 2304.0) / 3825065984.0);
  // The conventional active count keeps token_embd whole: a dense model's is its parameter count.
  EXPECT_EQ(*active_param_count(m), *param_count(m));
  // Tied, token_embd is the output matrix too, read whole every token.
  const ModelSpec tied = llama32_1b();
  EXPECT_TRUE(tied.tied_embeddings);
  EXPECT_FALSE(row_lookup(tied, "token_embd.weight"));
  EXPECT_TRUE(row_lookup(tied, "per_layer_token_embd.weight"));
  EXPECT_EQ(weight_size(tied, *find_file_type("Q4_K_M"))->active_bytes, 799862912.0);
}

// Sizes are sums over layer classes: the tensor list of the largest model edgeplan takes is as short as a
// small one's, and its sizes are the per-layer sums (a layer's tensors times the layer count, for F16).
TEST(Model, SizesCostTheSameForAnyLayerCount) {
  ModelSpec m = llama32_1b();
  const std::size_t small = llama_tensors(m).size();
  m.layers = limits::kLayers;
  EXPECT_LE(llama_tensors(m).size(), small * 2);
  ModelSpec one = m;
  one.layers = 1;
  one.vocab = 0;
  const double layer = *param_count(one) - 2048 - 32;  // less output_norm and rope_freqs
  EXPECT_EQ(*param_count(m), 2048.0 * 128256 + 2048 + 32 + layer * limits::kLayers);
  EXPECT_EQ(weight_size(m, *find_file_type("F32"))->bytes, *param_count(m) * 4);
}

TEST(Model, StatedBitsWinOverRules) {
  ModelSpec m;
  m.name = "ref";
  m.params = 8e9;
  m.formats["Q4_K_M"] = FormatSize{5.184, std::nullopt, std::nullopt};
  auto q4 = weight_size(m, *find_file_type("Q4_K_M"));
  EXPECT_DOUBLE_EQ(q4->bytes, 5.184e9);
  EXPECT_EQ(q4->source, SizeSource::stated_bits);
  auto f16 = weight_size(m, *find_file_type("F16"));
  EXPECT_DOUBLE_EQ(f16->bytes, 16e9);
  EXPECT_EQ(f16->source, SizeSource::params_times_bits);
}

TEST(Model, StatedBytes) {
  ModelSpec m = llama2_7b();
  m.formats["q8_0"] = FormatSize{std::nullopt, 7.0e9, std::nullopt};
  EXPECT_DOUBLE_EQ(weight_size(m, *find_file_type("Q8_0"))->bytes, 7.0e9);
}

TEST(Model, NoSizeIsAnError) {
  ModelSpec m;
  m.name = "empty";
  auto w = weight_size(m, *find_file_type("F16"));
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().message, "model 'empty' has no size for F16: give params, vocab, or formats.F16 in its profile");
}

TEST(Model, EffectiveBitsOnLlama2Shape) {
  // Q4_0: the matrices' bytes (all but the 65 F32 norm vectors of 4096) over their 6,738,149,376 weights.
  EXPECT_DOUBLE_EQ(effective_bits_per_weight(*find_file_type("Q4_0")),
                   (3825065984.0 - 65 * 4096 * 4) * 8 / (6738415616.0 - 65 * 4096));
  EXPECT_DOUBLE_EQ(effective_bits_per_weight(*find_file_type("F16")), 16.0);
  EXPECT_DOUBLE_EQ(effective_bits_per_weight(*find_file_type("Q8_0")), 8.5);
}

TEST(Model, EffectiveBitsAndQuantizedAreKeptPerFileType) {
  // A file type of the table is worked out once and then read back; a copy of it (not in the table) is worked
  // out every time: the same figures either way, asked once or again.
  for (const FileType& ft : file_types()) {
    const FileType copy = ft;
    const double bits = effective_bits_per_weight(ft);
    EXPECT_EQ(effective_bits_per_weight(ft), bits) << ft.name;
    EXPECT_EQ(effective_bits_per_weight(copy), bits) << ft.name;
    EXPECT_EQ(is_quantized(ft), is_quantized(copy)) << ft.name;
  }
  EXPECT_FALSE(is_quantized(*find_file_type("F16")));
  EXPECT_FALSE(is_quantized(*find_file_type("BF16")));
  EXPECT_TRUE(is_quantized(*find_file_type("Q4_K_M")));
}

TEST(Model, QkvBiasAddsF32Tensors) {
  ModelSpec m = llama2_7b();
  const double base = *param_count(m);
  m.qkv_bias = true;
  EXPECT_EQ(*param_count(m) - base, 32.0 * (4096 * 3));
}

}  // namespace
}  // namespace edgeplan
