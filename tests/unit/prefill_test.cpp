#include "edgeplan/core/prefill.hpp"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "fixtures.hpp"

namespace edgeplan {
namespace {

using fixtures::llama2_7b;

// A prompt whose matrices are all stored in one ggml type.
std::vector<TypedWeights> all_in(std::string_view type) { return {{find_ggml_type(type), 1}}; }

TEST(Prefill, MatmulParamsAreTheBlocksMatrices) {
  // Per layer: 4 x 4096^2 attention + 3 x 4096 x 11008 FFN = 202,375,168; x 32 layers.
  EXPECT_DOUBLE_EQ(matmul_params(llama2_7b()), 32.0 * 202375168);
  ModelSpec stated;
  stated.params = 8e9;
  EXPECT_DOUBLE_EQ(matmul_params(stated), 8e9);
}

TEST(Prefill, FlopsAreWeightsPlusCausalAttention) {
  const ModelSpec m = llama2_7b();
  EXPECT_DOUBLE_EQ(prefill_flops(m, 1), 2.0 * matmul_params(m) + 2.0 * 1 * 2 * 32 * 32 * 128);
  EXPECT_DOUBLE_EQ(prefill_flops(m, 512), 2.0 * 512 * matmul_params(m) + 2.0 * 512 * 513 * 32 * 32 * 128);
}

TEST(Prefill, RateFromPeakAndEfficiency) {
  const ModelSpec m = llama2_7b();
  const PrefillResult r = prefill({2.6e12, 0.6, 0.5}, m, *find_file_type("F16"), 512);
  EXPECT_DOUBLE_EQ(r.seconds, prefill_flops(m, 512) / 1.56e12);
  EXPECT_DOUBLE_EQ(r.tok_per_s, 512 / r.seconds);
  EXPECT_NEAR(r.tok_per_s, 119.2, 0.05);
  // Quantized weights run at quantized_efficiency.
  const PrefillResult q = prefill({2.6e12, 0.6, 0.5}, m, *find_file_type("Q4_0"), 512);
  EXPECT_DOUBLE_EQ(q.seconds, prefill_flops(m, 512) / 1.3e12);
}

TEST(Prefill, WeightTypesMayHaveTheirOwnEfficiency) {
  PrefillSpec unit{1e11, 0.9, 0.5};
  unit.type_efficiency[*prefill_type_index("Q8_0")] = 0.8;
  unit.type_efficiency[*prefill_type_index("Q4_K")] = 0.4;
  EXPECT_EQ(prefill_type_index("Q4_0"), 0u);
  EXPECT_EQ(prefill_type_index("Q6_K"), 9u);
  EXPECT_FALSE(prefill_type_index("F16"));
  EXPECT_FALSE(prefill_type_index("IQ2_XXS"));
  EXPECT_DOUBLE_EQ(prefill_efficiency(unit, *find_ggml_type("F16")), 0.9);
  EXPECT_DOUBLE_EQ(prefill_efficiency(unit, *find_ggml_type("Q8_0")), 0.8);
  EXPECT_DOUBLE_EQ(prefill_efficiency(unit, *find_ggml_type("Q4_K")), 0.4);
  EXPECT_DOUBLE_EQ(prefill_efficiency(unit, *find_ggml_type("Q4_0")), 0.5);  // none of its own
  // 1e11 FLOP/s: a 0.25e12-FLOP prompt of 512 tokens takes 0.25e12 / 0.8e11 = 3.125 s in Q8_0, 6.25 s in Q4_K.
  EXPECT_DOUBLE_EQ(prefill(unit, 0.25e12, 0.05e12, all_in("Q8_0"), 512).seconds, 3.125);
  EXPECT_DOUBLE_EQ(prefill(unit, 0.25e12, 0.05e12, all_in("Q4_K"), 512).tok_per_s, 512 / 6.25);
}

// Each matrix runs at its own type's efficiency: the prompt's weights over the sum of each type's over its
// efficiency. Llama 2 7B in Q4_K_M keeps attn_v and ffn_down in Q6_K in 16 of its 32 layers (llama.cpp's
// use_more_bits: layers 0-3, 28-31 and every third from 6 to 27): 16 x (4096^2 + 11008 x 4096) = 989,855,744
// weights in Q6_K, the other 32 x 202,375,168 - 989,855,744 = 5,486,149,632 in Q4_K.
TEST(Prefill, MatricesRunAtTheirTypesEfficiency) {
  const std::vector<TypedWeights> q4_k_m = matmul_weights(llama2_7b(), *find_file_type("Q4_K_M"));
  ASSERT_EQ(q4_k_m.size(), 2u);
  EXPECT_EQ(q4_k_m[0].type->name, "Q4_K");
  EXPECT_DOUBLE_EQ(q4_k_m[0].weights, 5486149632.0);
  EXPECT_EQ(q4_k_m[1].type->name, "Q6_K");
  EXPECT_DOUBLE_EQ(q4_k_m[1].weights, 989855744.0);
  const std::vector<TypedWeights> q4_0 = matmul_weights(llama2_7b(), *find_file_type("Q4_0"));
  ASSERT_EQ(q4_0.size(), 1u);  // the Q6_K output matrix is not a prompt matrix
  EXPECT_EQ(q4_0[0].type->name, "Q4_0");
  EXPECT_DOUBLE_EQ(q4_0[0].weights, matmul_params(llama2_7b()));
  ModelSpec stated;  // no tensor list: all of params at the base type
  stated.params = 8e9;
  const std::vector<TypedWeights> base = matmul_weights(stated, *find_file_type("Q4_K_M"));
  ASSERT_EQ(base.size(), 1u);
  EXPECT_EQ(base[0].type->name, "Q4_K");
  EXPECT_DOUBLE_EQ(base[0].weights, 8e9);
  for (const FileType& ft : file_types()) {  // every file type's base is a ggml type
    ASSERT_NE(matmul_weights(stated, ft).front().type, nullptr) << ft.name;
  }

  PrefillSpec unit{1e11, 0.9, 0.5};
  unit.type_efficiency[*prefill_type_index("Q4_K")] = 0.4;
  unit.type_efficiency[*prefill_type_index("Q6_K")] = 0.2;
  EXPECT_DOUBLE_EQ(prefill_efficiency(unit, q4_k_m),
                   6476005376.0 / (5486149632.0 / 0.4 + 989855744.0 / 0.2));
  EXPECT_NEAR(prefill_efficiency(unit, q4_k_m), 0.3470, 1e-4);  // below Q4_K's 0.4: 15% of the weights at half of it
  unit.type_efficiency[*prefill_type_index("Q6_K")].reset();  // Q6_K at quantized_efficiency
  EXPECT_NEAR(prefill_efficiency(unit, q4_k_m), 6476005376.0 / (5486149632.0 / 0.4 + 989855744.0 / 0.5), 1e-15);
  EXPECT_DOUBLE_EQ(prefill_efficiency(unit, std::vector<TypedWeights>{}), 0.9);  // no matrices: as float weights
}

// With an attention efficiency the attention term runs at it, the rest at the weights' efficiency; without one,
// the whole prompt runs at the weights' (above).
TEST(Prefill, AttentionMayHaveItsOwnEfficiency) {
  PrefillSpec unit{1e11, 0.9, 0.5};
  unit.attention_efficiency = 0.1;
  // 0.2e12 FLOPs of weights at 0.5e11 FLOP/s (4 s) and 0.05e12 of attention at 1e10 (5 s).
  EXPECT_DOUBLE_EQ(prefill(unit, 0.25e12, 0.05e12, all_in("Q4_0"), 512).seconds, 9.0);
  // The model form: attention_flops is prefill_flops' attention term, 2 S (S + 1) x layers x heads x head_dim.
  const ModelSpec m = llama2_7b();
  EXPECT_DOUBLE_EQ(attention_flops(m, 512), 2.0 * 512 * 513 * 32 * 32 * 128);
  EXPECT_DOUBLE_EQ(prefill_flops(m, 512) - attention_flops(m, 512), 2.0 * 512 * matmul_params(m));
  const PrefillResult r = prefill(unit, m, *find_file_type("Q4_0"), 512);
  EXPECT_DOUBLE_EQ(r.seconds, 2.0 * 512 * matmul_params(m) / 0.5e11 + attention_flops(m, 512) / 1e10);
}

TEST(Prefill, ExpertsCountAtTheirActiveShare) {
  ModelSpec m = llama2_7b();
  m.moe = MoeSpec{8, 2, 11008, 0, 0};
  // Attention 4 x 4096^2 plus a quarter of 8 experts of 3 x 4096 x 11008, plus the router (4096 x 8).
  EXPECT_DOUBLE_EQ(matmul_params(m), 32.0 * (4.0 * 4096 * 4096 + 2.0 * 3 * 4096 * 11008 + 4096 * 8));
}

}  // namespace
}  // namespace edgeplan
