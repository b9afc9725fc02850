// Tensor lists per architecture, mixture-of-experts active bytes, and the model-file readers
// (config.json and GGUF headers built in memory).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "edgeplan/core/decode.hpp"
#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/model.hpp"
#include "edgeplan/core/runtime.hpp"
#include "edgeplan/io/model_file.hpp"
#include "fixtures.hpp"

namespace edgeplan {
namespace {

ModelSpec mixtral() {
  ModelSpec m = fixtures::dense("mixtral", 32, 4096, 32, 8, 128, 14336, 32000);
  m.moe = MoeSpec{8, 2, 14336, 0, 0};
  return m;
}

TEST(Architecture, MixtralHoldsAllExpertsAndReadsTwo) {
  const ModelSpec m = mixtral();
  EXPECT_EQ(*param_count(m), 46702792704.0);
  EXPECT_EQ(*active_param_count(m), 12879925248.0);
  const WeightSize w = *weight_size(m, *find_file_type("Q4_K_M"));
  EXPECT_EQ(w.bytes, 28447727616.0);
  // A token reads 2 of 8 experts and one of token_embd's 32,000 Q4_K rows (2,304 B of 73,728,000).
  EXPECT_EQ(w.active_bytes, 7969038336.0 - 73728000.0 + 2304.0);
  // 8 experts: attn_k / attn_v are Q8_0 and attn_output Q5_K.
  const MixContext mix{32, 32, 8, 8, false};
  EXPECT_EQ(tensor_type(*find_file_type("Q4_K_M"), TensorRole::attn_k, 3, 4096, mix)->name, "Q8_0");
  EXPECT_EQ(tensor_type(*find_file_type("Q4_K_M"), TensorRole::attn_output, 3, 4096, mix)->name, "Q5_K");
  EXPECT_EQ(tensor_type(*find_file_type("Q4_K_M"), TensorRole::router, 3, 4096, mix)->name, "F32");
}

TEST(Architecture, StatedBytesOfAMixtureAreReadInTheRulesShare) {
  ModelSpec m = mixtral();
  m.formats["Q4_K_M"] = FormatSize{std::nullopt, 28e9, std::nullopt};
  const WeightSize w = *weight_size(m, *find_file_type("Q4_K_M"));
  EXPECT_DOUBLE_EQ(w.active_bytes, 28e9 * (7969038336.0 - 73728000.0 + 2304.0) / 28447727616.0);
  m.formats["Q4_K_M"] = FormatSize{std::nullopt, 28e9, 8e9};
  EXPECT_DOUBLE_EQ(weight_size(m, *find_file_type("Q4_K_M"))->active_bytes, 8e9);
}

TEST(Architecture, PhiFusesQkvAndGateUp) {
  ModelSpec m = fixtures::dense("phi-3", 32, 3072, 32, 32, 96, 8192, 32064);
  m.arch = "phi3";
  const auto tensors = llama_tensors(m);
  EXPECT_EQ(tensors[2].name, "blk.0.attn_qkv.weight");
  EXPECT_EQ(tensors[2].rows, 9216u);
  EXPECT_EQ(*param_count(m), 3821079552.0);
  // llama.cpp counts attn_qkv as attn_v (category_is_attn_v): Q4_K_M gives it Q6_K in the 16 use_more_bits
  // layers and Q4_K in the others (edgeplan gave all 32 Q5_K, llama.cpp's unreachable attn_qkv branch).
  EXPECT_EQ(weight_size(m, *find_file_type("Q4_K_M"))->bytes, 2396032512.0);
}

TEST(Architecture, GemmaAndQwen3Norms) {
  ModelSpec m = fixtures::dense("gemma-3", 34, 2560, 8, 4, 256, 10240, 262208);
  m.arch = "gemma3";
  m.tied_embeddings = true;
  EXPECT_EQ(*param_count(m), 3880263168.0);  // 4 norms of 2560 and q/k norms of 256 per layer
  EXPECT_EQ(weight_size(m, *find_file_type("Q4_K_M"))->bytes, 2483352832.0);
}

TEST(Architecture, DeepSeekLatentAttentionAndSharedExperts) {
  ModelSpec m = fixtures::dense("deepseek", 27, 2048, 16, 16, 128, 10944, 102400);
  m.arch = "deepseek2";
  m.moe = MoeSpec{64, 6, 1408, 2, 1};
  m.mla = MlaSpec{512, 0, 64, 128, 128};
  EXPECT_EQ(*param_count(m), 15706484224.0);
  EXPECT_EQ(*active_param_count(m), 2661150208.0);
}

TEST(ModelFile, ConfigJsonReadsNestedTextConfig) {
  const std::string text = R"({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text",
    "hidden_size": 2560, "intermediate_size": 10240, "num_attention_heads": 8, "num_key_value_heads": 4,
    "head_dim": 256, "num_hidden_layers": 34, "vocab_size": 262208, "sliding_window": 1024,
    "layer_types": ["sliding_attention", "sliding_attention", "full_attention"]}})";
  const auto m = io::model_from_hf_config(text, "g", "g.json");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->arch, "gemma3");
  EXPECT_EQ(m->hidden, 2560u);
  EXPECT_TRUE(m->tied_embeddings);  // transformers' default
  EXPECT_EQ(m->sliding_window->window_tokens, 1024u);
  EXPECT_EQ(m->sliding_window->pattern, 3u);
  const auto bad = io::model_from_hf_config(R"({"model_type": "llama", "num_hidden_layers": -1})", "x", "x.json");
  EXPECT_EQ(bad.error().message, "x.json: num_hidden_layers must be a whole number of at least 1 (got -1)");
}

// A key a config.json leaves out takes its transformers configuration class's default: LlamaConfig and
// Qwen2Config do not tie embeddings (a config without the key was costed as tied, 11.6% to 12.9% low).
TEST(ModelFile, ConfigJsonDefaultsAreTheModelClasss) {
  const std::string shape = R"("hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
    "num_hidden_layers": 32, "vocab_size": 128256)";
  const auto llama = io::model_from_hf_config(R"({"model_type": "llama", )" + shape + "}", "l", "l.json");
  ASSERT_TRUE(llama.ok()) << llama.error().message;
  EXPECT_FALSE(llama->tied_embeddings);
  EXPECT_EQ(llama->context_tokens, 2048u);  // LlamaConfig max_position_embeddings
  EXPECT_EQ(llama->head_dim, 128u);         // hidden / heads
  const auto qwen = io::model_from_hf_config(R"({"model_type": "qwen2", )" + shape + "}", "q", "q.json");
  EXPECT_FALSE(qwen->tied_embeddings);
  EXPECT_EQ(qwen->context_tokens, 32768u);
  const auto gemma = io::model_from_hf_config(R"({"model_type": "gemma2", )" + shape + "}", "g", "g.json");
  ASSERT_TRUE(gemma.ok()) << gemma.error().message;
  EXPECT_TRUE(gemma->tied_embeddings);
  EXPECT_EQ(gemma->head_dim, 256u);
  EXPECT_EQ(gemma->sliding_window->window_tokens, 4096u);
  const auto gemma3 = io::model_from_hf_config(R"({"model_type": "gemma3_text", )" + shape + "}", "g", "g.json");
  ASSERT_TRUE(gemma3.ok()) << gemma3.error().message;
  EXPECT_EQ(gemma3->sliding_window->pattern, 6u);
  EXPECT_EQ(gemma3->context_tokens, 131072u);
  // Stated keys win.
  const auto tied = io::model_from_hf_config(R"({"model_type": "llama", "tie_word_embeddings": true, )" + shape + "}", "l", "l.json");
  EXPECT_TRUE(tied->tied_embeddings);
}

// YaRN rope scaling extends the trained context to factor x the original (Qwen2.5's recipe).
TEST(ModelFile, YarnRopeScalingExtendsTheTrainedContext) {
  const std::string shape = R"("model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
    "num_attention_heads": 14, "num_key_value_heads": 2, "num_hidden_layers": 24, "vocab_size": 151936,
    "max_position_embeddings": 32768)";
  const auto yarn = io::model_from_hf_config("{" + shape + R"(, "rope_scaling": {"type": "yarn", "factor": 4.0,
    "original_max_position_embeddings": 32768}})", "q", "q.json");
  ASSERT_TRUE(yarn.ok()) << yarn.error().message;
  EXPECT_EQ(yarn->context_tokens, 131072u);
  const auto llama3 = io::model_from_hf_config("{" + shape + R"(, "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
    "original_max_position_embeddings": 8192}})", "q", "q.json");
  EXPECT_EQ(llama3->context_tokens, 32768u);  // max_position_embeddings already states the scaled context
  const auto huge = io::model_from_hf_config("{" + shape + R"(, "rope_scaling": {"type": "yarn", "factor": 1e9}})", "q", "q.json");
  EXPECT_EQ(huge.error().message, "q.json: rope_scaling: the YaRN context (32768000000000) is more than 1073741824");
  EXPECT_DOUBLE_EQ(yarn_context(32768, 0, 4), 131072);
  EXPECT_DOUBLE_EQ(yarn_context(131072, 8192, 8), 131072);
}

// transformers 5 writes rope_scaling as rope_parameters, with rope_theta in it (Granite 4.0 H's saved config):
// read the same way; rope_type "default" scales nothing.
TEST(ModelFile, RopeParametersAreRopeScaling) {
  const std::string shape = R"("model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
    "num_attention_heads": 14, "num_key_value_heads": 2, "num_hidden_layers": 24, "vocab_size": 151936,
    "max_position_embeddings": 32768)";
  const auto yarn = io::model_from_hf_config("{" + shape + R"(, "rope_parameters": {"rope_theta": 1000000.0,
    "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}})", "q", "q.json");
  ASSERT_TRUE(yarn.ok()) << yarn.error().message;
  EXPECT_EQ(yarn->context_tokens, 131072u);
  const auto plain = io::model_from_hf_config("{" + shape + R"(, "rope_parameters": {"rope_theta": 10000, "rope_type": "default"}})", "q", "q.json");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->context_tokens, 32768u);
  const auto huge = io::model_from_hf_config("{" + shape + R"(, "rope_parameters": {"rope_type": "yarn", "factor": 1e9}})", "q", "q.json");
  EXPECT_EQ(huge.error().message, "q.json: rope_parameters: the YaRN context (32768000000000) is more than 1073741824");
  const std::string llama = R"("model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
    "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 16, "vocab_size": 128256)";
  const auto llama3 = io::model_from_hf_config("{" + llama + R"(, "rope_parameters": {"rope_theta": 500000.0,
    "rope_type": "llama3", "factor": 32.0, "original_max_position_embeddings": 8192}})", "l", "l.json");
  ASSERT_TRUE(llama3.ok()) << llama3.error().message;
  EXPECT_TRUE(llama3->rope_freqs);
}

TEST(ModelFile, TomlRoundTrip) {
  const ModelSpec m = mixtral();
  const std::string toml = io::model_profile_toml(m, "m.json");
  EXPECT_NE(toml.find("[moe]\nexperts = 8\nused = 2\nexpert_ffn = 14336\n"), std::string::npos);
  const auto back = io::load_model(io::ProfileText{"mixtral", "m.toml", "m.toml", toml}, {});
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*param_count(*back), *param_count(m));
  EXPECT_EQ(back->moe->used, 2u);
}

// A GGUF header of a 2-layer MoE model with 4 experts (top 2), Q8_0 weights, built in memory.
std::vector<std::byte> moe_gguf() {
  std::vector<std::byte> b;
  auto raw = [&](const void* p, std::size_t n) {
    const auto* c = static_cast<const std::byte*>(p);
    b.insert(b.end(), c, c + n);
  };
  auto u32 = [&](std::uint32_t v) { raw(&v, 4); };
  auto u64 = [&](std::uint64_t v) { raw(&v, 8); };
  auto str = [&](const std::string& s) { u64(s.size()); raw(s.data(), s.size()); };
  auto kv_u32 = [&](const std::string& k, std::uint32_t v) { str(k); u32(4); u32(v); };
  struct T { std::string name; std::vector<std::uint64_t> dims; std::uint32_t type; };
  std::vector<T> ts{{"token_embd.weight", {32, 16}, 8}, {"output.weight", {32, 16}, 8}};
  for (int i = 0; i < 2; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    ts.push_back({p + "attn_q.weight", {32, 32}, 8});
    ts.push_back({p + "ffn_gate_inp.weight", {32, 4}, 0});
    ts.push_back({p + "ffn_up_exps.weight", {32, 64, 4}, 8});
  }
  raw("GGUF", 4);
  u32(3);
  u64(ts.size());
  u64(8);
  str("general.architecture"); u32(8); str("llama");
  kv_u32("general.file_type", 7);
  kv_u32("llama.block_count", 2);
  kv_u32("llama.embedding_length", 32);
  kv_u32("llama.feed_forward_length", 64);
  kv_u32("llama.attention.head_count", 4);
  kv_u32("llama.expert_count", 4);
  kv_u32("llama.expert_used_count", 2);
  std::uint64_t offset = 0;
  for (const T& t : ts) {
    str(t.name);
    u32(static_cast<std::uint32_t>(t.dims.size()));
    for (auto d : t.dims) u64(d);
    u32(t.type);
    u64(offset);
    std::uint64_t rows = 1;
    for (std::size_t i = 1; i < t.dims.size(); ++i) rows *= t.dims[i];
    offset += (rows * (t.type == 8 ? t.dims[0] / 32 * 34 : t.dims[0] * 4) + 31) / 32 * 32;
  }
  b.resize((b.size() + 31) / 32 * 32 + offset);
  return b;
}

TEST(ModelFile, GgufMixtureUsesTheFilesBytes) {
  const auto file = io::read_gguf(moe_gguf(), "moe.gguf");
  ASSERT_TRUE(file.ok()) << file.error().message;
  const auto m = io::model_from_gguf(*file, "moe", "moe.gguf");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->moe->experts, 4u);
  EXPECT_EQ(m->moe->used, 2u);
  EXPECT_EQ(*m->vocab, 16u);
  EXPECT_FALSE(m->tied_embeddings);
  // embd 16 x 34, output 16 x 34, per layer q 32 x 34, router 4 x 32 x 4, experts 256 x 34.
  const double experts = 2 * 256 * 34.0, rest = 2 * 16 * 34.0 + 2 * (32 * 34.0 + 512);
  const WeightSize w = *weight_size(*m, *find_file_type("Q8_0"));
  EXPECT_EQ(w.source, SizeSource::stated_bytes);
  EXPECT_DOUBLE_EQ(w.bytes, experts + rest);
  EXPECT_DOUBLE_EQ(w.active_bytes, experts / 2 + rest - 15 * 34.0);  // one of token_embd's 16 rows
}

// The matrices' types are the file's own, not the rules': a file quantized with --output-tensor-type (here the
// output matrix in Q6_K where the rules keep a Q8_0 file's in Q8_0) costs its token's output product at Q6_K's rate.
TEST(ModelFile, GgufMatricesRunAtTheFilesTypes) {
  const auto file = io::read_gguf(moe_gguf(), "moe.gguf");
  ASSERT_TRUE(file.ok()) << file.error().message;
  io::GgufFile f = *file;
  ASSERT_EQ(f.tensors[1].name, "output.weight");
  f.tensors[1].type = find_ggml_type("Q6_K");
  const auto m = io::model_from_gguf(f, "moe", "moe.gguf");
  ASSERT_TRUE(m.ok()) << m.error().message;
  const GgmlType *q8 = find_ggml_type("Q8_0"), *q6 = find_ggml_type("Q6_K"), *f32 = find_ggml_type("F32");
  const auto expect = [](const std::vector<TypedWeights>& got, const std::vector<TypedWeights>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].type, want[i].type) << i;
      EXPECT_DOUBLE_EQ(got[i].weights, want[i].weights) << i;
    }
  };
  // Per layer: attn_q 32 x 32, the router 32 x 4 (F32), experts 32 x 64 x 4 at 2 of 4; the output matrix 32 x 16;
  // token_embd is looked up, and is no block's.
  const FileType& q8_0 = *find_file_type("Q8_0");
  expect(matmul_weights(*m, q8_0), {{q8, 2 * (1024 + 4096.0)}, {f32, 2 * 128.0}});
  expect(token_matmul_weights(*m, q8_0), {{q6, 512}, {q8, 2 * (1024 + 4096.0)}, {f32, 2 * 128.0}});
  expect(weight_size(*m, q8_0)->matmuls, matmul_weights(*m, q8_0));
  DecodeRates rates;
  rates.type_flops[*prefill_type_index("Q8_0")] = 10e9;
  rates.type_flops[*prefill_type_index("Q6_K")] = 5e9;  // the slowest given: F32's too
  EXPECT_DOUBLE_EQ(decode_compute_s(rates, *m, q8_0, 0), 2 * (512 / 5e9 + 10240 / 10e9 + 256 / 5e9));
  // Another format of the same model is a what-if under the rules.
  EXPECT_EQ(weight_size(*m, *find_file_type("Q4_0"))->matmuls.front().type, find_ggml_type("Q4_0"));
  // The profile text carries them, and reads back the same.
  const std::string toml = io::model_profile_toml(*m, "moe.gguf");
  EXPECT_NE(toml.find("\nprompt_weights = [ \"Q8_0=10240\", \"F32=256\" ] # the file's"), std::string::npos) << toml;
  EXPECT_NE(toml.find("\ntoken_weights = [ \"Q6_K=512\", \"Q8_0=10240\", \"F32=256\" ] # and"), std::string::npos) << toml;
  const auto back = io::load_model(io::ProfileText{"moe", "m.toml", "m.toml", toml}, {});
  ASSERT_TRUE(back.ok()) << back.error().message;
  expect(matmul_weights(*back, q8_0), matmul_weights(*m, q8_0));
  expect(token_matmul_weights(*back, q8_0), token_matmul_weights(*m, q8_0));
}

// The runtime's buffers take a GGUF file's own types and order too: tiny-llama-mixed is a Q4_0 file but for
// blk.0.ffn_down in Q8_0, which llama.cpp does not repack on x86 (the rules' Q4_0 it would), so the repack buffer
// is that tensor's 1,152 bytes short of the rules' (the tensors reach the model through its profile text, as every
// command loads a model file).
TEST(ModelFile, GgufTensorsGiveTheRuntimeBuffersTheFilesTypes) {
  const std::string path = std::string(EDGEPLAN_SOURCE_DIR) + "/tests/data/tiny-llama-mixed.gguf";
  const auto text = io::model_file_profile(path);
  ASSERT_TRUE(text.ok()) << text.error().message;
  const auto m = io::load_model(*text, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  const FileType& q4_0 = *find_file_type("Q4_0");
  const std::shared_ptr<const std::vector<TypedTensor>> listed = typed_tensors(*m, q4_0);
  const std::vector<TypedTensor>& file = *listed;
  ASSERT_EQ(file.size(), 1 + 2 * 9 + 2u);  // token_embd, 9 a block, output_norm and output, in the file's order
  const auto down =
      std::ranges::find(file, std::string("blk.0.ffn_down.weight"), [](const TypedTensor& t) { return t.shape.name; });
  ASSERT_NE(down, file.end());
  EXPECT_EQ(down->type, find_ggml_type("Q8_0"));
  EXPECT_EQ(down->shape.role, TensorRole::ffn_down);
  EXPECT_EQ(down->shape.layer, 0);
  EXPECT_FALSE(down->shape.last_layer);
  EXPECT_DOUBLE_EQ(down->bytes, 64 * 32 / 32 * 34.0);
  const WeightBuffers own = weight_buffers(*m, q4_0, RepackIsa::x86_avx512);
  ModelSpec rules = *m;
  rules.formats.clear();
  const WeightBuffers ruled = weight_buffers(rules, q4_0, RepackIsa::x86_avx512);
  EXPECT_DOUBLE_EQ(ruled.repack_bytes, 2 * (2 * 576 + 2 * 288 + 3 * 1152.0));  // q, o; k, v; gate, up, down
  EXPECT_DOUBLE_EQ(own.repack_bytes, ruled.repack_bytes - 1152);
  // The mapped span in the file's order (token_embd first, output last, both kept in the CPU buffer) leaves
  // nothing out; the rules' list takes llama-quantize's order, where the moved blk.1.ffn_up ends the file.
  EXPECT_DOUBLE_EQ(own.unmapped_bytes, 0);
  EXPECT_DOUBLE_EQ(ruled.unmapped_bytes, 1152);
  // Another format is a what-if under the rules.
  EXPECT_EQ(typed_tensors(*m, *find_file_type("Q8_0"))->size(), typed_tensors(rules, *find_file_type("Q8_0"))->size());
}

// A GGUF file's tensor list is read once and shared, not copied, by the loaded model, its copies, a second load
// and typed_tensors: a file may hold a million tensors (inspect of one peaked at 774 MiB with four copies).
TEST(ModelFile, ItsTensorListIsSharedNotCopied) {
  const auto text = io::model_file_profile(std::string(EDGEPLAN_SOURCE_DIR) + "/tests/data/tiny-llama-mixed.gguf");
  ASSERT_TRUE(text.ok()) << text.error().message;
  const auto m = io::load_model(*text, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  const ModelSpec copy = *m;
  const std::vector<TypedTensor>* list = m->formats.at("Q4_0").tensors.get();
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(copy.formats.at("Q4_0").tensors.get(), list);
  EXPECT_EQ(typed_tensors(copy, *find_file_type("Q4_0")).get(), list);
  EXPECT_EQ(io::load_model(*text, {})->formats.at("Q4_0").tensors.get(), list);  // read again: the kept one
}

// A split model's shards each map their own span (llama.cpp maps each file from the first to the last byte of the
// tensors its CPU buffer keeps): tiny-llama-mixed's tensors cut after blk.1.ffn_up as two shards leave out of the
// first shard's span its repacked ffn_gate and ffn_up (after ffn_norm, kept), and of the second's its repacked
// blk.1.ffn_down (before output_norm, kept), where the one file maps them all.
TEST(ModelFile, EachShardOfASplitModelMapsItsOwnSpan) {
  const auto text = io::model_file_profile(std::string(EDGEPLAN_SOURCE_DIR) + "/tests/data/tiny-llama-mixed.gguf");
  ASSERT_TRUE(text.ok()) << text.error().message;
  auto m = io::load_model(*text, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  const FileType& q4_0 = *find_file_type("Q4_0");
  EXPECT_DOUBLE_EQ(weight_buffers(*m, q4_0, RepackIsa::x86_avx512).unmapped_bytes, 0);
  std::vector<TypedTensor> tensors = *m->formats.at("Q4_0").tensors;
  const auto up = std::ranges::find(tensors, std::string("blk.1.ffn_up.weight"),
                                    [](const TypedTensor& t) { return t.shape.name; });
  ASSERT_NE(up, tensors.end());
  for (auto t = up + 1; t != tensors.end(); ++t) t->file = 1;
  m->formats.at("Q4_0").tensors = std::make_shared<const std::vector<TypedTensor>>(std::move(tensors));
  EXPECT_DOUBLE_EQ(weight_buffers(*m, q4_0, RepackIsa::x86_avx512).unmapped_bytes, 3 * 1152);
}

// A GGUF file's tensor in llama_tensors' terms: the role of the same name in the list, its block, an expert
// stack's experts from its last dimension.
TEST(ModelFile, FileTensorShape) {
  const ModelSpec m = fixtures::llama2_7b();
  const std::vector<TensorShape> listed = llama_tensors(m);
  const auto shape = [&](std::string_view name, std::span<const std::uint64_t> dims) {
    return file_tensor_shape(m, listed, name, dims);
  };
  const std::uint64_t q[] = {4096, 4096}, exps[] = {4096, 1024, 8}, norm[] = {4096};
  const TensorShape t = shape("blk.3.attn_q.weight", q);
  EXPECT_EQ(t.role, TensorRole::attn_q);
  EXPECT_EQ(t.layer, 3);
  EXPECT_EQ(t.rows, 4096u);
  EXPECT_EQ(t.layer_count, 1u);
  EXPECT_TRUE(shape("blk." + std::to_string(m.layers - 1) + ".attn_q.weight", q).last_layer);
  EXPECT_EQ(shape("output.weight", q).role, TensorRole::output);
  EXPECT_EQ(shape("output.weight", q).layer, -1);
  EXPECT_EQ(shape("blk.3.attn_norm.weight", norm).role, TensorRole::norm);
  EXPECT_EQ(shape("blk.3.not_listed.weight", q).role, TensorRole::other);
  EXPECT_EQ(shape("blk.3.not_listed.weight", norm).role, TensorRole::norm);
  EXPECT_EQ(shape("blk.x.attn_q.weight", q).layer, -1);
  const TensorShape e = shape("blk.1.ffn_down_exps.weight", exps);
  EXPECT_EQ(e.routed_experts, 8u);
  EXPECT_EQ(e.rows, 8192u);
}

// An IQ4_XS file (general.file_type 30) was costed as Q4_K_M: edgeplan knew no file type 30.
TEST(ModelFile, GgufFileTypeIsTheModelsFormat) {
  const auto file = io::read_gguf(moe_gguf(), "moe.gguf");
  ASSERT_TRUE(file.ok()) << file.error().message;
  io::GgufFile f = *file;
  for (auto& [key, value] : f.metadata) {
    if (key == "general.file_type") value.value = std::uint64_t{30};
  }
  const auto m = io::model_from_gguf(f, "moe", "moe.gguf");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->file_format, "IQ4_XS");
  const WeightSize w = *weight_size(*m, *find_file_type("IQ4_XS"));
  EXPECT_EQ(w.source, SizeSource::stated_bytes);
}

TEST(ModelFile, GgufErrorsNameTheFile) {
  auto bytes = moe_gguf();
  const auto file = io::read_gguf(bytes, "moe.gguf");
  io::GgufFile f = *file;
  f.metadata.erase(f.metadata.begin());
  EXPECT_EQ(io::model_from_gguf(f, "moe", "moe.gguf").error().message, "moe.gguf: general.architecture is missing");
  f = *file;
  // An architecture llama.cpp loads is costed by the generic rule from its own keys ("mamba.*"), which this file
  // lacks; one llama.cpp does not load is refused.
  std::get<std::string>(f.metadata[0].second.value) = "mamba";
  EXPECT_EQ(io::model_from_gguf(f, "moe", "moe.gguf").error().message, "moe.gguf: mamba.block_count is missing");
  std::get<std::string>(f.metadata[0].second.value) = "mambo";
  EXPECT_EQ(io::model_from_gguf(f, "moe", "moe.gguf").error().message,
            "moe.gguf: architecture \"mambo\" is not one llama.cpp loads (the release edgeplan is checked against: "
            "node-llama-cpp 3.21.1); did you mean mamba?");
  bytes.resize(100);
  EXPECT_FALSE(io::read_gguf(bytes, "moe.gguf").ok());
}

}  // namespace
}  // namespace edgeplan
