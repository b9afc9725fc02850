#include "edgeplan/core/formats.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace edgeplan {
namespace {

TEST(Formats, BlockLayoutsMatchGgml) {
  EXPECT_EQ(find_ggml_type("Q4_0")->bytes, 18u);
  EXPECT_EQ(find_ggml_type("Q4_K")->bytes, 144u);
  EXPECT_EQ(find_ggml_type("Q6_K")->bytes, 210u);
  EXPECT_DOUBLE_EQ(find_ggml_type("Q6_K")->bits_per_weight(), 6.5625);
  EXPECT_DOUBLE_EQ(find_ggml_type("q8_0")->bits_per_weight(), 8.5);
  EXPECT_EQ(find_ggml_type_id(30)->name, "BF16");
  EXPECT_EQ(find_ggml_type_id(4), nullptr);  // removed Q4_2: unknown ids are rejected, not guessed
  EXPECT_EQ(find_ggml_type("Q9_9"), nullptr);
}

TEST(Formats, TensorBytesNeedWholeBlocks) {
  EXPECT_EQ(tensor_bytes(*find_ggml_type("Q4_0"), 4096, 2), 2u * 128 * 18);
  EXPECT_FALSE(tensor_bytes(*find_ggml_type("Q4_K"), 896, 1).has_value());
}

// Every layer is in exactly one class, and the rules give each tensor role of a layer the type they give the
// class's first layer: sizes summed over classes are the sums over layers.
TEST(Formats, LayerClassesPartitionTheLayersAsTheRulesDo) {
  const TensorRole roles[] = {TensorRole::attn_v, TensorRole::ffn_down, TensorRole::attn_k, TensorRole::attn_output};
  for (std::uint32_t layers = 1; layers <= 130; ++layers) {
    for (std::uint32_t split : {0u, 1u, 3u, layers / 2}) {
      std::vector<int> seen(layers, 0);
      const auto classes = layer_classes(layers, split);
      EXPECT_LE(classes.size(), 27u);
      for (const LayerClass& c : classes) {
        for (std::uint32_t k = 0; k < c.count; ++k) {
          const std::uint32_t layer = c.first + k * c.step;
          ASSERT_LT(layer, layers);
          ++seen[layer];
          EXPECT_EQ(layer < split, c.first < split);
          const MixContext mix{layers, 32, 8, 0, false};
          for (const FileType& ft : file_types()) {
            for (TensorRole role : roles) {
              EXPECT_EQ(&tensor_type(ft, role, layer, 4096, mix), &tensor_type(ft, role, c.first, 4096, mix))
                  << layers << " layers, layer " << layer << ", " << ft.name;
            }
          }
        }
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(layers)) << layers;
    }
  }
  EXPECT_LE(layer_classes(65536, 1).size(), 27u);
}

TEST(Formats, UseMoreBitsForThirtyTwoLayersIsSixteenLayers) {
  int n = 0;
  for (std::uint32_t i = 0; i < 32; ++i) n += use_more_bits(i, 32) ? 1 : 0;
  EXPECT_EQ(n, 16);
  EXPECT_TRUE(use_more_bits(0, 16));
  EXPECT_TRUE(use_more_bits(4, 16));
  EXPECT_FALSE(use_more_bits(3, 16));
  EXPECT_TRUE(use_more_bits(15, 16));
}

TEST(Formats, PerTensorRules) {
  const FileType& q4km = *find_file_type("Q4_K_M");
  const MixContext mix{32, 32, 8, 0, false};
  EXPECT_EQ(tensor_type(q4km, TensorRole::attn_v, 0, 4096, mix).name, "Q6_K");
  EXPECT_EQ(tensor_type(q4km, TensorRole::attn_v, 5, 4096, mix).name, "Q4_K");
  EXPECT_EQ(tensor_type(q4km, TensorRole::output, 0, 4096, mix).name, "Q6_K");
  EXPECT_EQ(tensor_type(q4km, TensorRole::token_embd, 0, 4096, mix).name, "Q4_K");
  EXPECT_EQ(tensor_type(q4km, TensorRole::norm, 0, 4096, mix).name, "F32");
  // A row of 896 does not split into 256-weight blocks: Q4_K falls back to Q5_0, Q6_K to Q8_0.
  EXPECT_EQ(tensor_type(q4km, TensorRole::attn_q, 3, 896, mix).name, "Q5_0");
  EXPECT_EQ(tensor_type(q4km, TensorRole::output, 0, 896, mix).name, "Q8_0");
  const MixContext tied{16, 32, 8, 0, true};
  EXPECT_EQ(tensor_type(q4km, TensorRole::token_embd, 0, 2048, tied).name, "Q6_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q8_0"), TensorRole::output, 0, 4096, mix).name, "Q8_0");
  EXPECT_EQ(tensor_type(*find_file_type("F16"), TensorRole::output, 0, 4096, mix).name, "F16");
  EXPECT_EQ(tensor_type(*find_file_type("Q2_K"), TensorRole::attn_v, 0, 4096, mix).name, "Q4_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q2_K"), TensorRole::attn_v, 0, 4096, MixContext{32, 32, 32, 0, false}).name,
            "Q3_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q3_K_M"), TensorRole::attn_v, 1, 4096, mix).name, "Q5_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q3_K_M"), TensorRole::ffn_down, 1, 4096, mix).name, "Q5_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q3_K_M"), TensorRole::ffn_down, 2, 4096, mix).name, "Q4_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q4_K_S"), TensorRole::attn_v, 3, 4096, mix).name, "Q5_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q4_K_S"), TensorRole::ffn_down, 4, 4096, mix).name, "Q4_K");
  const MixContext moe{32, 32, 8, 8, false};
  EXPECT_EQ(tensor_type(q4km, TensorRole::attn_k, 7, 4096, moe).name, "Q8_0");
}

}  // namespace
}  // namespace edgeplan
