#include "edgeplan/core/formats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

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
  const TensorRole roles[] = {TensorRole::attn_v, TensorRole::ffn_down, TensorRole::attn_k, TensorRole::attn_output,
                              TensorRole::ffn_gate};
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
              EXPECT_EQ(tensor_type(ft, role, layer, 4096, mix), tensor_type(ft, role, c.first, 4096, mix))
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
  EXPECT_EQ(tensor_type(q4km, TensorRole::attn_v, 0, 4096, mix)->name, "Q6_K");
  EXPECT_EQ(tensor_type(q4km, TensorRole::attn_v, 5, 4096, mix)->name, "Q4_K");
  EXPECT_EQ(tensor_type(q4km, TensorRole::output, 0, 4096, mix)->name, "Q6_K");
  EXPECT_EQ(tensor_type(q4km, TensorRole::token_embd, 0, 4096, mix)->name, "Q4_K");
  EXPECT_EQ(tensor_type(q4km, TensorRole::norm, 0, 4096, mix)->name, "F32");
  // A row of 896 does not split into 256-weight blocks: Q4_K falls back to Q5_0, Q6_K to Q8_0.
  EXPECT_EQ(tensor_type(q4km, TensorRole::attn_q, 3, 896, mix)->name, "Q5_0");
  EXPECT_EQ(tensor_type(q4km, TensorRole::output, 0, 896, mix)->name, "Q8_0");
  const MixContext tied{16, 32, 8, 0, true};
  EXPECT_EQ(tensor_type(q4km, TensorRole::token_embd, 0, 2048, tied)->name, "Q6_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q8_0"), TensorRole::output, 0, 4096, mix)->name, "Q8_0");
  EXPECT_EQ(tensor_type(*find_file_type("F16"), TensorRole::output, 0, 4096, mix)->name, "F16");
  EXPECT_EQ(tensor_type(*find_file_type("Q2_K"), TensorRole::attn_v, 0, 4096, mix)->name, "Q4_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q2_K"), TensorRole::attn_v, 0, 4096, MixContext{32, 32, 32, 0, false})->name,
            "Q3_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q3_K_M"), TensorRole::attn_v, 1, 4096, mix)->name, "Q5_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q3_K_M"), TensorRole::ffn_down, 1, 4096, mix)->name, "Q5_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q3_K_M"), TensorRole::ffn_down, 2, 4096, mix)->name, "Q4_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q4_K_S"), TensorRole::attn_v, 3, 4096, mix)->name, "Q5_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q4_K_S"), TensorRole::ffn_down, 4, 4096, mix)->name, "Q4_K");
  const MixContext moe{32, 32, 8, 8, false};
  EXPECT_EQ(tensor_type(q4km, TensorRole::attn_k, 7, 4096, moe)->name, "Q8_0");
}

// ggml's type_traits in llama.cpp as bundled with node-llama-cpp 3.21.1, as ggml_type_name / ggml_blck_size /
// ggml_type_size print them (scripts/llama-check's check-ggml-types compares the GGUF reader with them too).
TEST(Formats, EveryGgmlTypeHasGgmlsBlockLayout) {
  struct Row {
    const char* name;
    std::uint32_t id, block, bytes;
  };
  const Row ggml[] = {{"F32", 0, 1, 4},        {"F16", 1, 1, 2},        {"Q4_0", 2, 32, 18},     {"Q4_1", 3, 32, 20},
                      {"Q5_0", 6, 32, 22},     {"Q5_1", 7, 32, 24},     {"Q8_0", 8, 32, 34},     {"Q8_1", 9, 32, 36},
                      {"Q2_K", 10, 256, 84},   {"Q3_K", 11, 256, 110},  {"Q4_K", 12, 256, 144},  {"Q5_K", 13, 256, 176},
                      {"Q6_K", 14, 256, 210},  {"Q8_K", 15, 256, 292},  {"IQ2_XXS", 16, 256, 66}, {"IQ2_XS", 17, 256, 74},
                      {"IQ3_XXS", 18, 256, 98}, {"IQ1_S", 19, 256, 50}, {"IQ4_NL", 20, 32, 18},  {"IQ3_S", 21, 256, 110},
                      {"IQ2_S", 22, 256, 82},  {"IQ4_XS", 23, 256, 136}, {"I8", 24, 1, 1},       {"I16", 25, 1, 2},
                      {"I32", 26, 1, 4},       {"I64", 27, 1, 8},       {"F64", 28, 1, 8},       {"IQ1_M", 29, 256, 56},
                      {"BF16", 30, 1, 2},      {"TQ1_0", 34, 256, 54},  {"TQ2_0", 35, 256, 66},  {"MXFP4", 39, 32, 17},
                      {"NVFP4", 40, 64, 36},   {"Q1_0", 41, 128, 18},   {"Q2_0", 42, 64, 18}};
  ASSERT_EQ(ggml_types().size(), std::size(ggml));
  for (const Row& r : ggml) {
    const GgmlType* t = find_ggml_type_id(r.id);
    ASSERT_NE(t, nullptr) << r.name;
    EXPECT_EQ(t->name, r.name);
    EXPECT_EQ(t->block, r.block) << r.name;
    EXPECT_EQ(t->bytes, r.bytes) << r.name;
  }
  for (std::uint32_t removed : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 43u}) EXPECT_EQ(find_ggml_type_id(removed), nullptr);
}

// llama-quantize's targets (tools/quantize/quantize.cpp, QUANT_OPTIONS) with their llama_ftype ids.
TEST(Formats, EveryLlamaQuantizeTargetIsAFileType) {
  const std::pair<const char*, std::uint32_t> targets[] = {
      {"Q1_0", 40},    {"Q2_0", 41},   {"Q4_0", 2},     {"Q4_1", 3},     {"MXFP4_MOE", 38}, {"Q5_0", 8},
      {"Q5_1", 9},     {"IQ2_XXS", 19}, {"IQ2_XS", 20}, {"IQ2_S", 28},   {"IQ2_M", 29},     {"IQ1_S", 24},
      {"IQ1_M", 31},   {"TQ1_0", 36},  {"TQ2_0", 37},   {"Q2_K", 10},    {"Q2_K_S", 21},    {"IQ3_XXS", 23},
      {"IQ3_S", 26},   {"IQ3_M", 27},  {"IQ3_XS", 22},  {"Q3_K_S", 11},  {"Q3_K_M", 12},    {"Q3_K_L", 13},
      {"IQ4_NL", 25},  {"IQ4_XS", 30}, {"Q4_K_S", 14},  {"Q4_K_M", 15},  {"Q5_K_S", 16},    {"Q5_K_M", 17},
      {"Q6_K", 18},    {"Q8_0", 7},    {"F16", 1},      {"BF16", 32},    {"F32", 0}};
  for (const auto& [name, id] : targets) {
    const FileType* ft = find_file_type(name);
    ASSERT_NE(ft, nullptr) << name;
    EXPECT_EQ(ft->gguf_id, id) << name;
    EXPECT_TRUE(ft->quantize_target) << name;
    EXPECT_EQ(find_file_type_id(id), ft);
  }
  EXPECT_EQ(find_file_type_id(30)->name, "IQ4_XS");  // inspect printed "file type 30 (not a file type edgeplan names)"
  EXPECT_FALSE(find_file_type("NVFP4")->quantize_target);
}

// tensor_requires_imatrix: a target whose non-embedding tensors get IQ1/IQ2/IQ3_XXS types (or Q2_K in Q2_K_S).
TEST(Formats, TargetsThatNeedAnImportanceMatrix) {
  std::vector<std::string_view> needs;
  for (const FileType& ft : file_types()) {
    if (ft.needs_imatrix) needs.push_back(ft.name);
  }
  EXPECT_EQ(needs, (std::vector<std::string_view>{"IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ1_S", "IQ1_M", "Q2_K_S",
                                                   "IQ3_XXS", "IQ3_XS"}));
  EXPECT_EQ(file_types().size(), 36u);
}

// tensor_type_fallback: a row that 256 does not divide takes the type llama.cpp names, Q4_0 for Q2_K and Q3_K
// (edgeplan said IQ4_NL: the same bytes, the wrong label); a 32-weight row no block fits is F16; Q1_0 has no
// fallback, so llama.cpp refuses the tensor.
TEST(Formats, FallbacksCarryLlamaCppsNames) {
  const MixContext mix{16, 8, 8, 0, false};
  EXPECT_EQ(tensor_type(*find_file_type("Q2_K"), TensorRole::ffn_up, 3, 896, mix)->name, "Q4_0");
  EXPECT_EQ(tensor_type(*find_file_type("Q3_K_S"), TensorRole::ffn_up, 3, 896, mix)->name, "Q4_0");
  EXPECT_EQ(tensor_type(*find_file_type("TQ2_0"), TensorRole::ffn_up, 3, 896, mix)->name, "Q4_0");
  EXPECT_EQ(tensor_type(*find_file_type("IQ4_XS"), TensorRole::ffn_up, 3, 896, mix)->name, "IQ4_NL");
  EXPECT_EQ(tensor_type(*find_file_type("Q5_K_S"), TensorRole::ffn_up, 3, 896, mix)->name, "Q5_1");
  EXPECT_EQ(tensor_type(*find_file_type("Q4_K_M"), TensorRole::ffn_up, 3, 744, mix)->name, "F16");
  EXPECT_EQ(tensor_type(*find_file_type("Q2_0"), TensorRole::ffn_up, 3, 96, mix)->name, "Q4_0");
  EXPECT_EQ(tensor_type(*find_file_type("Q1_0"), TensorRole::ffn_up, 3, 352, mix), nullptr);
  EXPECT_EQ(tensor_type(*find_file_type("Q1_0"), TensorRole::ffn_up, 3, 384, mix)->name, "Q1_0");
}

// Branches of llama_tensor_get_type_impl beyond the K-quant mixes.
TEST(Formats, IQuantAndOtherMixRules) {
  const MixContext mha{16, 8, 8, 0, false}, gqa{16, 8, 2, 0, false};
  auto type_of = [](const char* f, TensorRole role, std::uint32_t layer, const MixContext& mix, bool stack = false) {
    return std::string(tensor_type(*find_file_type(f), role, layer, 4096, mix, stack)->name);
  };
  EXPECT_EQ(type_of("IQ2_XXS", TensorRole::token_embd, 0, mha), "Q2_K");
  EXPECT_EQ(type_of("IQ2_M", TensorRole::token_embd, 0, mha), "IQ3_S");
  EXPECT_EQ(type_of("TQ1_0", TensorRole::token_embd, 0, mha), "Q4_K");
  EXPECT_EQ(type_of("IQ1_S", TensorRole::output, 0, mha), "Q5_K");
  EXPECT_EQ(type_of("IQ2_S", TensorRole::ffn_up, 5, mha), "IQ2_XS");  // IQ2_S files are mostly IQ2_XS
  EXPECT_EQ(type_of("IQ2_XS", TensorRole::attn_v, 5, mha), "Q2_K");
  EXPECT_EQ(type_of("IQ2_XS", TensorRole::attn_v, 5, gqa), "Q4_K");
  EXPECT_EQ(type_of("IQ1_M", TensorRole::ffn_down, 1, mha), "Q2_K");
  EXPECT_EQ(type_of("IQ1_M", TensorRole::ffn_down, 2, mha), "IQ1_M");
  EXPECT_EQ(type_of("IQ1_M", TensorRole::attn_output, 2, mha), "IQ2_XXS");
  EXPECT_EQ(type_of("IQ3_XXS", TensorRole::attn_v, 2, mha), "IQ3_XXS");  // made with an importance matrix
  EXPECT_EQ(type_of("IQ3_XXS", TensorRole::attn_q, 2, mha), "IQ2_S");
  EXPECT_EQ(type_of("IQ3_XS", TensorRole::ffn_gate, 2, mha), "IQ3_XXS");
  EXPECT_EQ(type_of("IQ3_XS", TensorRole::ffn_gate, 1, mha), "IQ3_S");
  EXPECT_EQ(type_of("IQ3_M", TensorRole::attn_v, 9, mha), "Q4_K");
  EXPECT_EQ(type_of("IQ4_XS", TensorRole::ffn_down, 1, mha), "Q5_K");  // no importance matrix
  EXPECT_EQ(type_of("IQ4_NL", TensorRole::attn_v, 1, gqa), "Q5_K");
  EXPECT_EQ(type_of("Q3_K_L", TensorRole::attn_output, 1, mha), "Q5_K");
  EXPECT_EQ(type_of("Q2_K_S", TensorRole::ffn_down, 1, mha), "Q4_K");
  EXPECT_EQ(type_of("MXFP4_MOE", TensorRole::ffn_up, 1, mha), "Q8_0");
  EXPECT_EQ(type_of("MXFP4_MOE", TensorRole::ffn_up, 1, mha, true), "MXFP4");
  EXPECT_EQ(type_of("MXFP4_MOE", TensorRole::output, 0, mha), "Q8_0");
  // llama.cpp counts attn_qkv and attn_kv_b as attn_v (category_is_attn_v): Q4_K_M gives layer 0 Q6_K.
  EXPECT_EQ(type_of("Q4_K_M", TensorRole::attn_qkv, 0, mha), "Q6_K");
  EXPECT_EQ(type_of("Q4_K_M", TensorRole::attn_qkv, 5, mha), "Q4_K");
  EXPECT_EQ(type_of("Q4_K_M", TensorRole::attn_kv_b, 0, mha), "Q6_K");
  // The 70B bump: attn_v of Q3_K or Q4_K becomes Q5_K.
  MixContext big{80, 64, 8, 0, false, true};
  EXPECT_EQ(type_of("Q4_K_M", TensorRole::attn_v, 11, big), "Q5_K");  // not a use_more_bits layer
  EXPECT_EQ(type_of("Q4_K_M", TensorRole::attn_v, 12, big), "Q6_K");
  big.size_70b = false;
  EXPECT_EQ(type_of("Q4_K_M", TensorRole::attn_v, 11, big), "Q4_K");
}

}  // namespace
}  // namespace edgeplan
