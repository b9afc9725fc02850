// This year's architectures: hybrid state layers (LFM2 short convolutions, Mamba-2, gated delta nets), KV shared
// across layers (Gemma 3n), alternating sliding windows with MXFP4 experts (gpt-oss). Every figure below is
// derived by hand from llama.cpp's formulas (as bundled with node-llama-cpp 3.21.1): src/llama-hparams.cpp
// n_embd_r / n_embd_s, src/llama-memory-recurrent.cpp (one F32 r and s row per sequence and layer),
// src/llama-kv-cache.cpp and llama-kv-cache-iswa.cpp (KV per layer that has one, window cells), and the tensor
// shapes of src/models/<arch>.cpp load_arch_tensors.
#include <gtest/gtest.h>

#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/model.hpp"
#include "edgeplan/core/prefill.hpp"
#include "edgeplan/io/model_file.hpp"
#include "edgeplan/io/profiles.hpp"
#include "fixtures.hpp"
#include "test_files.hpp"

namespace edgeplan {
namespace {

const KvType& f16() { return *find_kv_type("f16"); }

ModelSpec imported(const std::string& dir) {
  const auto m = io::model_from_hf_config(testing_files::source_file("tests/data/hf/" + dir + "/config.json"), dir, dir);
  EXPECT_TRUE(m) << (m ? "" : m.error().message);
  return *m;
}

// A built-in model profile, through the loader.
ModelSpec builtin(const std::string& name) {
  return io::load_model(io::find_profile("models", name, {}).value(), {}).value();
}

// LFM2-1.2B (https://huggingface.co/LiquidAI/LFM2-1.2B/blob/main/config.json): 16 layers, attention at
// full_attn_idxs 2, 5, 8, 10, 12, 14, the other 10 short convolutions with conv_L_cache 3.
TEST(Hybrid, Lfm2ImportsStateLayersAndConvertedFfn) {
  const ModelSpec m = imported("LFM2-1.2B");
  EXPECT_EQ(m.arch, "lfm2");
  ASSERT_TRUE(m.state);
  EXPECT_EQ(m.state->kind, StateKind::shortconv);
  EXPECT_EQ(m.state->layers, 10u);
  EXPECT_EQ(m.state->conv_kernel, 3u);
  EXPECT_EQ(kv_layers(m), 6u);
  EXPECT_EQ(m.head_dim, 64u);  // 2048 / 32
  // block_ff_dim 12288 -> 2 x 12288 / 3 = 8192, x 1.0, rounded up to 256: 8192 (LFM2Model._add_feed_forward_length).
  EXPECT_EQ(m.ffn, 8192u);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(m.context_tokens, 128000u);
}

TEST(Hybrid, Lfm2StateAndKvBytes) {
  const ModelSpec m = imported("LFM2-1.2B");
  // n_embd_r = hidden x (l_cache - 1) = 2048 x 2 = 4096 F32 values, n_embd_s = 0: 16,384 B per conv layer,
  // x 10 layers = 163,840 B per sequence whatever the context.
  EXPECT_DOUBLE_EQ(state_bytes(m), 163840);
  // KV: 6 attention layers x 8 kv heads x 64 x (K + V) x 2 B = 12,288 B per token.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, f16()), 12288);
  // 4096 tokens (a multiple of 256): 4096 x 12,288 + 163,840.
  EXPECT_DOUBLE_EQ(kv_cache_bytes(m, f16(), 4096, KvCacheSettings{}), 50331648.0 + 163840);
  // The longest context within 50,495,488 B is 4096 again; one byte less loses the last pad of 256.
  EXPECT_EQ(max_context(m, f16(), 50331648.0 + 163840, KvCacheSettings{}), 4096u);
  EXPECT_EQ(max_context(m, f16(), 50331648.0 + 163839, KvCacheSettings{}), 3840u);
  EXPECT_EQ(max_context(m, f16(), 163840, KvCacheSettings{}), 0u);  // the state alone fills it
}

TEST(Hybrid, Lfm2WeightsFromTensorShapes) {
  const ModelSpec m = imported("LFM2-1.2B");
  // token_embd 2048 x 65536 = 134,217,728; every layer attn_norm + ffn_norm 4096 and gate/up/down 3 x 2048 x 8192
  // = 50,331,648 (x 16 = 805,371,904); attention q/k norms 128, q 2048 x 2048, k and v 2048 x 512, o 2048 x 2048
  // = 10,485,888 (x 6 = 62,915,328); shortconv conv 3 x 2048, in_proj 2048 x 6144, out_proj 2048 x 2048 =
  // 16,783,360 (x 10 = 167,833,600); token_embd_norm 2048; tied output.
  EXPECT_EQ(*param_count(m), 1170340608.0);
  // F16: the conv kernels (61,440) and every norm (65,536 + 768 + 2048) stay F32, the rest is F16:
  // 129,792 x 4 + (1,170,340,608 - 129,792) x 2 = 2,340,940,800 B.
  EXPECT_EQ(weight_size(m, *find_file_type("F16"))->bytes, 2340940800.0);
}

// LFM2-350M (https://huggingface.co/LiquidAI/LFM2-350M/blob/main/config.json, as public test suites copy it;
// tests/data/hf/LFM2-350M): LFM2-1.2B's layout at hidden 1024, 16/8 heads, block_ff_dim 6656 -> 2 x 6656 / 3 =
// 4437, rounded up to 256: 4608. token_embd 1024 x 65,536 = 67,108,864; per layer norms 2048 and FFN
// 3 x 1024 x 4608 = 14,155,776 (x 16 = 226,525,184); attention q/k norms 128, q and o 2 x 1024 x 1024, k and v
// 2 x 1024 x 512 = 3,145,856 (x 6 = 18,875,136); shortconv 3 x 1024 + 1024 x 3072 + 1024 x 1024 = 4,197,376
// (x 10 = 41,973,760); output norm 1024. The built-in profile is the same model.
TEST(Hybrid, Lfm2SmallProfileIsItsConfig) {
  const ModelSpec m = imported("LFM2-350M");
  const ModelSpec p = builtin("lfm2-350m");
  for (const ModelSpec* x : {&m, &p}) {
    EXPECT_EQ(x->ffn, 4608u);
    EXPECT_EQ(*param_count(*x), 354483968.0);
    // n_embd_r = 1024 x 2 F32 values per conv layer: 8,192 B x 10 = 81,920 B per sequence.
    EXPECT_DOUBLE_EQ(state_bytes(*x), 81920);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(*x, f16()), 6 * 8 * 64 * 2 * 2.0);
  }
  EXPECT_EQ(m.context_tokens, p.context_tokens);
  EXPECT_EQ(m.tied_embeddings, p.tied_embeddings);
}

// LFM2-700M (https://huggingface.co/LiquidAI/LFM2-700M/blob/main/config.json; tests/data/hf/LFM2-700M): LFM2-1.2B's
// layout at hidden 1536, 24/8 heads, block_ff_dim 10240 -> 2 x 10240 / 3 = 6826, rounded up to 256: 6912.
// token_embd 1536 x 65,536 = 100,663,296; per layer norms 3,072 and FFN 3 x 1536 x 6912 = 31,850,496 (x 16 =
// 509,657,088); attention q/k norms 128, q and o 2 x 1536 x 1536, k and v 2 x 1536 x 512 = 6,291,584 (x 6 =
// 37,749,504); shortconv 3 x 1536 + 1536 x 4608 + 1536 x 1536 = 9,441,792 (x 10 = 94,417,920); output norm 1536:
// 742,489,344, the parameter count Liquid AI publishes for it. The built-in profile is the same model.
TEST(Hybrid, Lfm2700mProfileIsItsConfig) {
  const ModelSpec m = imported("LFM2-700M");
  const ModelSpec p = builtin("lfm2-700m");
  for (const ModelSpec* x : {&m, &p}) {
    EXPECT_EQ(x->ffn, 6912u);
    EXPECT_EQ(x->head_dim, 64u);
    EXPECT_EQ(*param_count(*x), 742489344.0);
    // n_embd_r = 1536 x 2 F32 values per conv layer: 12,288 B x 10 = 122,880 B per sequence.
    EXPECT_DOUBLE_EQ(state_bytes(*x), 122880);
    // 6 attention layers x 8 kv heads x 64 x (K + V) x 2 B = 12,288 B per token.
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(*x, f16()), 12288);
  }
  EXPECT_EQ(m.context_tokens, p.context_tokens);
  EXPECT_EQ(m.tied_embeddings, p.tied_embeddings);
  EXPECT_EQ(m.state->layers, p.state->layers);
}

// LFM2-2.6B (https://huggingface.co/LiquidAI/LFM2-2.6B/blob/main/config.json; tests/data/hf/LFM2-2.6B): 30 layers,
// 8 attending (layer_types: 2, 5, 9, 13, 17, 21, 24, 27), hidden 2048, 32/8 heads of 64, block_ff_dim 10752 as
// it is (block_auto_adjust_ff_dim false). token_embd 2048 x 65,536 = 134,217,728; per layer norms 4,096 and FFN
// 3 x 2048 x 10752 = 66,060,288 (x 30 = 1,981,931,520 with the norms); attention q/k norms 128, q and o
// 2 x 2048 x 2048, k and v 2 x 2048 x 512 = 10,485,888 (x 8 = 83,887,104); shortconv 3 x 2048 + 2048 x 6144 +
// 2048 x 2048 = 16,783,360 (x 22 = 369,233,920); output norm 2048: 2,569,272,320, the parameter count of Liquid
// AI's model card (https://huggingface.co/LiquidAI/LFM2-2.6B). The built-in profile is the same model.
TEST(Hybrid, Lfm226bProfileIsItsConfig) {
  const ModelSpec m = imported("LFM2-2.6B");
  const ModelSpec p = builtin("lfm2-2.6b");
  for (const ModelSpec* x : {&m, &p}) {
    EXPECT_EQ(x->ffn, 10752u);
    EXPECT_EQ(x->head_dim, 64u);
    EXPECT_EQ(x->state->layers, 22u);
    EXPECT_EQ(*param_count(*x), 2569272320.0);
    // n_embd_r = 2048 x 2 F32 values per conv layer: 16,384 B x 22 = 360,448 B per sequence.
    EXPECT_DOUBLE_EQ(state_bytes(*x), 360448);
    // 8 attention layers x 8 kv heads x 64 x (K + V) x 2 B = 16,384 B per token.
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(*x, f16()), 16384);
  }
  EXPECT_EQ(m.context_tokens, p.context_tokens);
  EXPECT_EQ(m.tied_embeddings, p.tied_embeddings);
}

// LFM2-8B-A1B (https://huggingface.co/LiquidAI/LFM2-8B-A1B/blob/main/config.json; tests/data/hf/LFM2-8B-A1B holds
// its fields): 24 layers, attention at 2, 6, 10, 14, 18 and 21, 18 short convolutions; 2 dense layers, then 32
// experts top 4. The built-in profile is the same model.
TEST(Hybrid, Lfm2MoeProfileIsItsConfig) {
  const ModelSpec m = imported("LFM2-8B-A1B");
  const ModelSpec p = builtin("lfm2-8b-a1b");
  for (const ModelSpec* x : {&m, &p}) {
    EXPECT_EQ(x->arch, "lfm2moe");
    ASSERT_TRUE(x->state && x->moe);
    EXPECT_EQ(x->state->layers, 18u);
    EXPECT_EQ(x->moe->dense_layers, 2u);
    // n_embd_r = 2048 x (3 - 1) = 4096 F32 values per conv layer: 16,384 B x 18 = 294,912 B per sequence.
    EXPECT_DOUBLE_EQ(state_bytes(*x), 294912);
    // 6 attention layers x 8 kv heads x 64 x (K + V) x 2 B = 12,288 B per token.
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(*x, f16()), 12288);
    // token_embd 2048 x 65,536 = 134,217,728 (tied output) + output norm 2,048; every layer attn_norm + ffn_norm
    // 4,096 (x 24 = 98,304); 2 dense FFNs 3 x 2048 x 7168 = 44,040,192 (88,080,384); 22 MoE FFNs gate_inp
    // 2048 x 32 + experts 3 x 2048 x 1792 x 32 + exp_probs_b 32 = 352,387,104 (7,752,516,288); 6 attention
    // layers 10,485,888 (62,915,328) and 18 conv layers 16,783,360 (302,100,480) as in LFM2-1.2B above.
    EXPECT_EQ(*param_count(*x), 8339930560.0);
  }
  EXPECT_EQ(m.ffn, p.ffn);
  EXPECT_EQ(m.context_tokens, p.context_tokens);
  EXPECT_EQ(m.moe->expert_ffn, p.moe->expert_ffn);
  EXPECT_EQ(m.tied_embeddings, p.tied_embeddings);
}

// llama-quant gives attn_v Q6_K in Q4_K_M where use_more_bits(i_attention_wv, n_attention_wv) holds, counting
// attn_v tensors: LFM2-1.2B has 6 (i = 0..5, n/8 = 0, 7n/8 = 5): i = 2 and 5, so 2 of the 6 attention layers.
// With n = 16 (all layers) it would be i < 2 and (i - 2) % 3 == 2: 0, 1 and 4.
TEST(Hybrid, AttnVRulesCountAttentionLayers) {
  const ModelSpec m = imported("LFM2-1.2B");
  std::uint32_t q6 = 0;
  for (const auto tensors = typed_tensors(m, *find_file_type("Q4_K_M")); const TypedTensor& t : *tensors) {
    if (t.shape.role != TensorRole::attn_v) continue;
    EXPECT_EQ(t.type->name == "Q6_K", t.shape.layer == 2 || t.shape.layer == 5) << t.shape.name;
    if (t.type->name == "Q6_K") q6 += t.shape.layer_count;
  }
  EXPECT_EQ(q6, 2u);
}

// Prefill: the block matrices (FFN 805,306,368, attention 62,914,560, shortconv 167,833,600) twice per token,
// and attention over the cached tokens in the 6 attention layers only: 2 x S x (S + 1) x 6 x 32 x 64.
TEST(Hybrid, Lfm2PrefillAttendsInAttentionLayersOnly) {
  const ModelSpec m = imported("LFM2-1.2B");
  EXPECT_DOUBLE_EQ(matmul_params(m), 1036054528.0);
  EXPECT_DOUBLE_EQ(prefill_flops(m, 1), 2 * 1036054528.0 + 2 * 1 * 2 * 6 * 32 * 64.0);
}

// Mamba-2 layers (Granite 4.0 H's shape: hidden 4096, mamba_expand 2, d_state 128, one group, d_conv 4; 36 of 40
// layers): n_embd_r = (d_conv - 1) x (d_inner + 2 x groups x d_state) = 3 x (8192 + 256) = 25,344;
// n_embd_s = d_state x d_inner = 128 x 8192 = 1,048,576; (25,344 + 1,048,576) x 4 B = 4,295,680 per layer.
TEST(Hybrid, Mamba2StateBytes) {
  ModelSpec m = fixtures::dense("granite", 40, 4096, 32, 8, 128, 768, 100352);
  m.arch = "granitehybrid";
  m.state = StateSpec{StateKind::mamba2, 36, 4, 8192, 128, 1, 128};
  EXPECT_DOUBLE_EQ(state_bytes(m), 36 * 4295680.0);
  // 4 attention layers x 8 x 128 x 2 x 2 B = 16,384 B per token.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, f16()), 16384);
  // ssm_in holds 2 x d_inner + 2 x groups x d_state + heads = 16,384 + 256 + 128 = 16,768 rows of 4096.
  bool found = false;
  for (const TensorShape& t : llama_tensors(m)) {
    if (t.name.ends_with("ssm_in.weight")) {
      EXPECT_EQ(t.rows, 16768u);
      EXPECT_EQ(t.layer_count, 36u);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

// Gated delta net layers (Qwen3-Next-80B-A3B's shape: 16 key heads and 32 value heads of 128, conv kernel 4, 36
// of 48 layers): n_embd_r = 3 x (32 x 128 + 2 x 16 x 128) = 24,576; n_embd_s = 128 x 4096 = 524,288;
// (24,576 + 524,288) x 4 B = 2,195,456 per layer.
TEST(Hybrid, GatedDeltaNetStateBytes) {
  ModelSpec m = fixtures::dense("next", 48, 2048, 16, 2, 256, 512, 151936);
  m.arch = "qwen3next";
  m.state = StateSpec{StateKind::gated_delta_net, 36, 4, 4096, 128, 16, 32};
  EXPECT_DOUBLE_EQ(state_bytes(m), 36 * 2195456.0);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, f16()), 12 * 2 * 256 * 2 * 2.0);
}

// Qwen3-Coder-Next (https://huggingface.co/Qwen/Qwen3-Coder-Next/blob/main/config.json; the fields of
// tests/data/hf/Qwen3-Coder-Next, as a public test suite copies them, with its published totals): the
// Qwen3-Next-80B-A3B architecture. Its safetensors hold 79,674,391,296 parameters; without the 502 inactive of
// 512 experts per layer (10 routed and the shared one read) 3,874,929,408. edgeplan's tensor list of
// llama.cpp's qwen3next gives both to the parameter. The config states no intermediate_size: no layer is dense.
TEST(Hybrid, Qwen3NextParametersArePublishedTotals) {
  const ModelSpec m = imported("Qwen3-Coder-Next");
  EXPECT_EQ(m.arch, "qwen3next");
  ASSERT_TRUE(m.state && m.moe);
  EXPECT_EQ(m.state->layers, 36u);  // all but every 4th (full_attention_interval)
  EXPECT_EQ(m.moe->shared_experts, 1u);
  EXPECT_EQ(*param_count(m), 79674391296.0);
  EXPECT_DOUBLE_EQ(state_bytes(m), 36 * 2195456.0);  // as GatedDeltaNetStateBytes above
  EXPECT_EQ(*active_param_count(m), 3874929408.0);
}

// The built-in qwen3-coder-next is the same model; its context is the model card's native 262,144 tokens
// (https://huggingface.co/Qwen/Qwen3-Coder-Next), which tests/data/hf/Qwen3-Coder-Next leaves out (the importer
// then takes Qwen3NextConfig's default, 32,768). KV: 12 attention layers x 2 kv heads x 256 x (K + V) x 2 B =
// 24,576 B per token; the state 36 x 2,195,456 = 79,036,416 B per sequence.
TEST(Hybrid, Qwen3CoderNextProfileIsItsConfig) {
  const ModelSpec m = imported("Qwen3-Coder-Next");
  const ModelSpec p = builtin("qwen3-coder-next");
  for (const ModelSpec* x : {&m, &p}) {
    EXPECT_EQ(x->arch, "qwen3next");
    ASSERT_TRUE(x->state && x->moe);
    EXPECT_EQ(x->state->kind, StateKind::gated_delta_net);
    EXPECT_EQ(x->state->layers, 36u);
    EXPECT_EQ(x->moe->experts, 512u);
    EXPECT_EQ(x->moe->used, 10u);
    EXPECT_EQ(x->moe->shared_experts, 1u);
    EXPECT_FALSE(x->tied_embeddings);
    EXPECT_DOUBLE_EQ(state_bytes(*x), 79036416);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(*x, f16()), 24576);
    EXPECT_EQ(*param_count(*x), 79674391296.0);
    EXPECT_EQ(*active_param_count(*x), 3874929408.0);
  }
  EXPECT_EQ(m.ffn, p.ffn);
  EXPECT_EQ(m.context_tokens, 32768u);
  EXPECT_EQ(p.context_tokens, 262144u);
}

// Granite 4.0 H 350M (https://huggingface.co/ibm-granite/granite-4.0-h-350m/blob/main/config.json; tests/data/hf/
// granite-4.0-h-350m is the public copy of hashneo/nano-vllm-go, models/granite-350m/config.json, as transformers
// 5.1.0 saves it: rope_parameters): 32 layers, attention at 10, 13, 17 and 27 (layer_types), the other 28 Mamba-2
// with d_inner = mamba_expand 2 x 768 = 1536, d_state 128, one group, 48 heads, d_conv 4; no experts
// (num_local_experts 0), so each layer has a dense FFN of shared_intermediate_size 2048.
//   state (llama_hparams::n_embd_r / n_embd_s, one F32 row of each per sequence and layer in
//   llama-memory-recurrent.cpp): n_embd_r = (4 - 1) x (1536 + 2 x 1 x 128) = 5,376, n_embd_s = 128 x 1536 =
//   196,608: (5,376 + 196,608) x 4 B = 807,936 B a layer, x 28 = 22,622,208 B per sequence.
//   KV: 4 attention layers x 4 kv heads x 64 x (K + V) x 2 B = 4,096 B per token.
//   parameters (llama_model_granite_hybrid::load_arch_tensors): token_embd 768 x 100,352 = 77,070,336 (tied
//   output); output_norm 768. A Mamba-2 layer: attn_norm 768, ssm_in 768 x (2 x 1536 + 2 x 128 + 48) =
//   2,592,768, ssm_conv1d 4 x 1792 = 7,168 and its bias 1,792 (mamba_conv_bias), ssm_dt bias, ssm_a, ssm_d
//   3 x 48, ssm_norm 1,536, ssm_out 1536 x 768 = 1,179,648; ffn_norm 768 and gate/up/down 3 x 768 x 2048 =
//   4,718,592: 8,503,184, x 28 = 238,089,152. An attention layer: 2 norms 1,536, q and o 2 x 768 x 768, k and v
//   2 x 768 x 256 = 1,572,864, FFN 4,718,592: 6,292,992, x 4 = 25,171,968. In all 340,332,224 (IBM's "350M").
//   F16 (llama-quant and the converter keep 1-D tensors, norms, ssm_a, ssm_d and ssm_conv1d in F32): 768 + 28 x
//   (768 + 7,168 + 1,792 + 144 + 1,536 + 768) + 4 x 1,536 = 347,840 F32 values; 347,840 x 4 + (340,332,224 -
//   347,840) x 2 = 681,360,128 B.
TEST(Hybrid, Granite4HProfileIsItsConfig) {
  const ModelSpec m = imported("granite-4.0-h-350m");
  const ModelSpec p = builtin("granite-4.0-h-350m");
  for (const ModelSpec* x : {&m, &p}) {
    EXPECT_EQ(x->arch, "granitehybrid");
    ASSERT_TRUE(x->state);
    EXPECT_FALSE(x->moe);
    EXPECT_EQ(x->state->kind, StateKind::mamba2);
    EXPECT_EQ(x->state->layers, 28u);
    EXPECT_EQ(x->state->inner, 1536u);
    EXPECT_EQ(x->state->heads, 48u);
    EXPECT_EQ(x->head_dim, 64u);
    EXPECT_EQ(x->ffn, 2048u);
    EXPECT_TRUE(x->tied_embeddings);
    EXPECT_EQ(x->context_tokens, 32768u);  // rope_parameters' rope_type "default" scales nothing
    EXPECT_DOUBLE_EQ(state_bytes(*x), 22622208);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(*x, f16()), 4096);
    EXPECT_EQ(*param_count(*x), 340332224.0);
    EXPECT_EQ(weight_size(*x, *find_file_type("F16"))->bytes, 681360128.0);
    // 32,768 tokens (a multiple of 256): 32,768 x 4,096 + the state.
    EXPECT_DOUBLE_EQ(kv_cache_bytes(*x, f16(), 32768, KvCacheSettings{}), 32768 * 4096.0 + 22622208);
  }
}

// Phi-4-mini-instruct (https://huggingface.co/microsoft/Phi-4-mini-instruct/blob/main/config.json;
// tests/data/hf/Phi-4-mini-instruct holds its fields): llama.cpp's phi3 with GQA and a tied output. token_embd
// 3072 x 200,064 = 614,596,608; per layer attn_qkv 3072 x (3072 + 2 x 1024) = 15,728,640, attn_output
// 9,437,184, the fused ffn_up 3072 x 16,384 = 50,331,648, ffn_down 25,165,824 and two norms 6,144:
// 100,669,440 (x 32 = 3,221,422,080); output norm 3072. 3,836,021,760, Microsoft's "3.8B" (the LongRoPE factor
// tensors of a GGUF, 2 x 48 F32 values, are not counted). The built-in profile is the same model.
TEST(Hybrid, Phi4MiniProfileIsItsConfig) {
  const ModelSpec m = imported("Phi-4-mini-instruct");
  const ModelSpec p = builtin("phi-4-mini");
  for (const ModelSpec* x : {&m, &p}) {
    EXPECT_EQ(x->arch, "phi3");
    EXPECT_EQ(x->head_dim, 128u);
    EXPECT_TRUE(x->tied_embeddings);
    EXPECT_EQ(x->context_tokens, 131072u);
    EXPECT_EQ(*param_count(*x), 3836021760.0);
    // 32 layers x 8 kv heads x 128 x (K + V) x 2 B = 131,072 B per token.
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(*x, f16()), 131072);
  }
}

// Gemma 3n E2B's attention (30 layers, the last 10 reuse the KV of earlier ones: llama.cpp keeps KV for the
// first n_layer_kv_from_start = 20; sliding window 512 in 4 of every 5 layers; 2 kv heads of 256): of the 20
// cached layers 4 are global (i % 5 == 4) and 16 sliding. At 32,768 tokens a global layer holds 32,768 cells, a
// sliding one pad(512 + 512, 256) = 1024; each cell 2 x 256 x (K + V) x 2 B = 2048 B.
TEST(Hybrid, SharedKvLayersCountOnce) {
  ModelSpec m = fixtures::dense("e2b", 30, 2048, 8, 2, 256, 8192, 262400);
  m.arch = "gemma3n";
  m.sliding_window = SlidingWindow{512, 5};
  m.kv_shared_layers = 10;
  EXPECT_EQ(kv_layers(m), 20u);
  EXPECT_DOUBLE_EQ(kv_cache_bytes(m, f16(), 32768, KvCacheSettings{}), (4 * 32768.0 + 16 * 1024.0) * 2048);
}

// gpt-oss-20b (https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json).
TEST(Hybrid, GptOssImportsWindowsExpertsAndBiases) {
  const ModelSpec m = imported("gpt-oss-20b");
  EXPECT_EQ(m.arch, "gpt-oss");
  ASSERT_TRUE(m.sliding_window);
  EXPECT_EQ(m.sliding_window->window_tokens, 128u);
  EXPECT_EQ(m.sliding_window->pattern, 2u);
  ASSERT_TRUE(m.moe);
  EXPECT_EQ(m.moe->experts, 32u);
  EXPECT_EQ(m.moe->used, 4u);
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_EQ(m.context_tokens, 131072u);  // YaRN: 4096 x 32
  // 12 sliding + 12 global layers of 8 x 64 x (K + V) x 2 B = 2048 B per token; at 8192 tokens a sliding layer
  // keeps pad(128 + 512, 256) = 768 cells: (12 x 8192 + 12 x 768) x 2048 B.
  EXPECT_DOUBLE_EQ(kv_cache_bytes(m, f16(), 8192, KvCacheSettings{}), 12 * 8960 * 2048.0);
}

TEST(Hybrid, GptOssWeightsInMxfp4) {
  const ModelSpec m = imported("gpt-oss-20b");
  // Per layer: 2 norms 5760; q 2880 x 4096, k and v 2880 x 512, o 4096 x 2880 = 26,542,080; q/k/v/o biases 8000;
  // sinks 64; router 92,160 + bias 32; gate/up/down expert stacks 3 x 2880 x 2880 x 32 = 796,262,400 and their
  // biases 3 x 2880 x 32 = 276,480: 823,186,976, x 24 = 19,756,487,424; token_embd and output 2 x 2880 x 201,088
  // = 1,158,266,880; output_norm 2880.
  EXPECT_EQ(*param_count(m), 20914757184.0);
  // MXFP4_MOE: expert stacks MXFP4 (17 B per 32), other matrices Q8_0 (34 B per 32), router, biases, norms and
  // sinks F32: 19,110,297,600 x 17 / 32 + 1,795,276,800 x 34 / 32 + 9,182,784 x 4.
  const WeightSize w = *weight_size(m, *find_file_type("MXFP4_MOE"));
  EXPECT_EQ(w.bytes, 10152345600.0 + 1907481600.0 + 36731136.0);
  // A token reads 4 of 32 experts (and their biases): the stacks at 1/8; and one of token_embd's 201,088 Q8_0
  // rows of 3,060 B.
  EXPECT_EQ(w.active_bytes, w.bytes - 10152345600.0 * 7 / 8 - 26542080.0 * 7 / 8 - 201087 * 3060.0);
}

// A GGUF header of a hybrid of width 64, 4 heads and FFN 128, as llama.cpp's converter writes one: head_count_kv
// once per layer (0 for the state layers, as LFM2Model and GraniteHybridModel.set_gguf_parameters write it), or
// one number (Qwen3NextModel) when kv_per_layer holds one entry; u32 adds the architecture's own keys.
struct HybridGguf {
  io::GgufFile f;
  void u32(const std::string& key, std::uint64_t v) {
    f.metadata.push_back({f.string("general.architecture").value() + "." + key, io::GgufValue{io::GgufType::u32, v}});
  }
  // {arch}.ssm.*, as the converter writes Mamba-2's and the delta net's sizes.
  void ssm(std::uint64_t conv_kernel, std::uint64_t inner, std::uint64_t state, std::uint64_t groups, std::uint64_t rank) {
    u32("ssm.conv_kernel", conv_kernel);
    u32("ssm.inner_size", inner);
    u32("ssm.state_size", state);
    u32("ssm.group_count", groups);
    u32("ssm.time_step_rank", rank);
  }
  // {arch}.attention.head_count_kv: one number, or one per layer (fewer than 256 heads each).
  void head_count_kv(const std::vector<std::uint32_t>& kv_per_layer) {
    if (kv_per_layer.size() == 1) return u32("attention.head_count_kv", kv_per_layer[0]);
    io::GgufArray kv{io::GgufType::u32, kv_per_layer.size(), {}};
    for (std::uint32_t heads : kv_per_layer) {
      for (int b = 0; b < 4; ++b) kv.raw.push_back(static_cast<std::byte>(b == 0 ? heads : 0));
    }
    f.metadata.push_back({f.string("general.architecture").value() + ".attention.head_count_kv", io::GgufValue{io::GgufType::array, kv}});
  }
  // A mixture of `experts` of width `ffn`, `used` read per token.
  void moe(std::uint64_t experts, std::uint64_t used, std::uint64_t ffn) {
    u32("expert_count", experts);
    u32("expert_used_count", used);
    u32("expert_feed_forward_length", ffn);
  }
};
HybridGguf hybrid_gguf(const std::string& arch, std::uint32_t layers, const std::vector<std::uint32_t>& kv_per_layer) {
  HybridGguf g;
  g.f.metadata.push_back({"general.architecture", io::GgufValue{io::GgufType::string, arch}});
  g.u32("block_count", layers);
  g.u32("embedding_length", 64);
  g.u32("feed_forward_length", 128);
  g.u32("attention.head_count", 4);
  g.head_count_kv(kv_per_layer);
  g.f.tensors.push_back({"token_embd.weight", {64, 256}, nullptr, 0, 0});
  return g;
}

// LFM2 (LFM2Model.set_gguf_parameters): lfm2.shortconv.l_cache.
io::GgufFile lfm2_gguf() {
  HybridGguf g = hybrid_gguf("lfm2", 4, {0, 2, 0, 2});
  g.u32("shortconv.l_cache", 3);
  return g.f;
}

TEST(Hybrid, Lfm2FromGgufMetadata) {
  const auto m = io::model_from_gguf(lfm2_gguf(), "lfm2", "lfm2.gguf");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->state);
  EXPECT_EQ(m->state->kind, StateKind::shortconv);
  EXPECT_EQ(m->state->layers, 2u);
  EXPECT_EQ(m->kv_heads, 2u);
  EXPECT_TRUE(m->tied_embeddings);
  // 2 conv layers x 64 x 2 x 4 B of state; 2 attention layers x 2 x 16 x 2 x 2 B of KV per token.
  EXPECT_DOUBLE_EQ(state_bytes(*m), 1024);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(*m, f16()), 256);
}

// A hybrid read from a GGUF header: its state layers, their bytes per sequence and the f16 KV bytes per token.
ModelSpec gguf_hybrid(const io::GgufFile& f, StateKind kind, std::uint32_t layers, double state, double kv_per_token) {
  const auto m = io::model_from_gguf(f, "hybrid", "hybrid.gguf");
  EXPECT_TRUE(m) << (m ? "" : m.error().message);
  if (!m || !m->state) {
    ADD_FAILURE() << "no state layers";
    ModelSpec none;
    none.state.emplace();
    return none;
  }
  EXPECT_EQ(m->state->kind, kind);
  EXPECT_EQ(m->state->layers, layers);
  EXPECT_DOUBLE_EQ(state_bytes(*m), state);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(*m, f16()), kv_per_token);
  return *m;
}

// Granite 4.0 H from GGUF metadata (GraniteHybridModel.set_gguf_parameters: head_count_kv 0 in the Mamba-2 layers,
// granitehybrid.ssm.*): 3 Mamba-2 layers of inner 128, state 16, one group, 8 heads, conv kernel 4, and one
// attention layer with 2 kv heads of 16. n_embd_r = 3 x (128 + 2 x 1 x 16) = 480, n_embd_s = 16 x 128 = 2,048:
// (480 + 2,048) x 4 B = 10,112 B a layer, 30,336 B per sequence; KV 1 x 2 x 16 x (K + V) x 2 B = 128 B per token.
TEST(Hybrid, GraniteFromGgufMetadata) {
  HybridGguf g = hybrid_gguf("granitehybrid", 4, {0, 0, 0, 2});
  g.ssm(4, 128, 16, 1, 8);
  const ModelSpec m = gguf_hybrid(g.f, StateKind::mamba2, 3, 30336, 128);
  EXPECT_EQ(m.state->heads, 8u);
}

// The generic rule: an architecture llama.cpp loads and edgeplan has no tensor list for is costed as its base, from
// the standard keys: OLMo 2 (attention only) as llama, Jamba (Mamba-2 layers beside attention ones) as
// granitehybrid, with the same KV and state as the base's files of the same keys; never refused.
TEST(Hybrid, AnArchitectureWithoutATensorListIsCostedByTheGenericRule) {
  const auto olmo = io::model_from_gguf(hybrid_gguf("olmo2", 4, {2}).f, "olmo", "olmo.gguf");
  ASSERT_TRUE(olmo) << olmo.error().message;
  EXPECT_EQ(olmo->arch, "llama");
  EXPECT_EQ(olmo->generic_of, "olmo2");
  const auto llama = io::model_from_gguf(hybrid_gguf("llama", 4, {2}).f, "llama", "llama.gguf");
  ASSERT_TRUE(llama) << llama.error().message;
  EXPECT_EQ(llama->generic_of, std::nullopt);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(*olmo, f16()), kv_bytes_per_token(*llama, f16()));  // 4 x 2 x 16 x 2 x 2 B
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(*olmo, f16()), 512);

  HybridGguf jamba = hybrid_gguf("jamba", 4, {0, 0, 0, 2});
  jamba.ssm(4, 128, 16, 1, 8);
  const ModelSpec j = gguf_hybrid(jamba.f, StateKind::mamba2, 3, 30336, 128);  // GraniteFromGgufMetadata's figures
  EXPECT_EQ(j.arch, "granitehybrid");
  EXPECT_EQ(j.generic_of, "jamba");

  // Any architecture, asked: LFM2's short convolutions are no standard key, so the generic rule sees attention
  // layers only (the KV of its 2 attention layers; no state).
  const auto lfm2 = io::model_from_gguf(lfm2_gguf(), "lfm2", "lfm2.gguf", true);
  ASSERT_TRUE(lfm2) << lfm2.error().message;
  EXPECT_EQ(lfm2->arch, "llama");
  EXPECT_FALSE(lfm2->state);

  // What llama.cpp does not load is refused, with the nearest it does.
  const auto none = io::model_from_gguf(hybrid_gguf("gemma5", 4, {2}).f, "x", "x.gguf");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "x.gguf: architecture \"gemma5\" is not one llama.cpp loads (the release edgeplan "
                                  "is checked against: node-llama-cpp 3.21.1); did you mean gemma?");
}

// Qwen3-Next from GGUF metadata (Qwen3NextModel.set_gguf_parameters: one head_count_kv, every
// full_attention_interval-th layer attends; qwen3next.ssm.* are the delta net's: inner = value heads x value
// width, state = key width, groups = key heads, time_step_rank = value heads). 8 layers, interval 4: 6 delta-net
// layers with 2 key and 4 value heads of 32 (inner 128), conv kernel 4: n_embd_r = 3 x (128 + 2 x 2 x 32) = 768,
// n_embd_s = 32 x 128 = 4,096: (768 + 4,096) x 4 B = 19,456 B a layer, 116,736 B per sequence; 2 attention
// layers x 2 kv heads x 16 x (K + V) x 2 B = 256 B per token. An MoE of 4 experts of 32 (2 used) and a shared one.
TEST(Hybrid, Qwen3NextFromGgufMetadata) {
  HybridGguf g = hybrid_gguf("qwen3next", 8, {2});
  g.u32("full_attention_interval", 4);
  g.ssm(4, 128, 32, 2, 4);
  g.moe(4, 2, 32);
  g.u32("expert_shared_feed_forward_length", 32);
  const ModelSpec m = gguf_hybrid(g.f, StateKind::gated_delta_net, 6, 116736, 256);
  ASSERT_TRUE(m.moe);
  EXPECT_EQ(m.moe->shared_experts, 1u);
}

// gpt-oss from GGUF metadata (GptOssModel.set_gguf_parameters: attention.sliding_window, expert_*; llama.cpp fixes
// the pattern at every other layer, set_swa_pattern(2)): 4 layers of 2 kv heads of 16, window 128, 4 experts of
// 32 (2 used), q/k/v biases. A layer keeps 2 x 16 x (K + V) x 2 B = 128 B per token; at 8192 tokens the 2 global
// layers hold 8192 cells and the 2 sliding ones pad(128 + 512, 256) = 768: (2 x 8192 + 2 x 768) x 128 B.
TEST(Hybrid, GptOssFromGgufMetadata) {
  HybridGguf g = hybrid_gguf("gpt-oss", 4, {2});
  g.u32("attention.key_length", 16);
  g.u32("attention.sliding_window", 128);
  g.moe(4, 2, 32);
  g.f.tensors.push_back({"blk.0.attn_q.bias", {64}, nullptr, 0, 0});
  const auto m = io::model_from_gguf(g.f, "oss", "oss.gguf");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->sliding_window && m->moe);
  EXPECT_EQ(m->sliding_window->window_tokens, 128u);
  EXPECT_EQ(m->sliding_window->pattern, 2u);
  EXPECT_EQ(m->moe->used, 2u);
  EXPECT_TRUE(m->qkv_bias);
  EXPECT_DOUBLE_EQ(kv_cache_bytes(*m, f16(), 8192, KvCacheSettings{}), 2 * 8960 * 128.0);
}

// Gemma 3n E2B (https://huggingface.co/google/gemma-3n-E2B-it/blob/main/config.json, text_config; the test file
// keeps the keys edgeplan reads).
TEST(Hybrid, Gemma3nImportsSharedKvAndPerLayerEmbeddings) {
  const ModelSpec m = imported("gemma-3n-E2B-it");
  EXPECT_EQ(m.arch, "gemma3n");
  EXPECT_EQ(m.kv_shared_layers, 10u);
  EXPECT_EQ(m.per_layer_embd, 256u);
  ASSERT_TRUE(m.sliding_window);
  EXPECT_EQ(m.sliding_window->window_tokens, 512u);
  EXPECT_EQ(m.sliding_window->pattern, 5u);
  // Outside the blocks: token_embd 2048 x 262,400 = 537,395,200; altup_proj and altup_unembd_proj 2 x 2048 x 2048
  // x 3 = 25,165,824; per_layer_token_embd (256 x 30) x 262,400 = 2,015,232,000; per_layer_model_proj 2048 x 7680
  // = 15,728,640; per_layer_proj_norm 256; output_norm 2048. Per layer: 8 norms of 2048 = 16,384; q/k norms 512;
  // q and o 2 x 2048 x 2048, k and v 2 x 2048 x 512 = 10,485,760; FFN 3 x 2048 x 8192 = 50,331,648; inp_gate and
  // proj 2 x 2048 x 256 = 1,048,576; AltUp coefficients 16 + 64; altup_router 8192; laurel 2 x 2048 x 64 =
  // 262,144: 62,153,296, x 30 = 1,864,598,880.
  EXPECT_EQ(*param_count(m), 4458122848.0);
  // A token reads one row (7680 weights) of per_layer_token_embd.
  EXPECT_EQ(*active_param_count(m), 4458122848.0 - 2015232000.0 + 7680);
  // fit's quality counts all but per_layer_token_embd: 2,442,890,848, which less token_embd (537,395,200) is
  // Google's 1.91 B "effective" parameters of E2B (huggingface.co/datasets/google/gemma3n-slicing-configs).
  EXPECT_EQ(*quality_param_count(m), 4458122848.0 - 2015232000.0);
}

// Gemma 3n E4B (https://huggingface.co/google/gemma-3n-E4B-it/blob/main/config.json, text_config, as public test
// suites copy it; tests/data/hf/gemma-3n-E4B-it): E2B's shape with 35 layers, FFN 16,384 and the last 15 layers
// sharing KV. Outside the blocks as E2B but per_layer_token_embd (256 x 35) x 262,400 = 2,351,104,000 and
// per_layer_model_proj 2048 x 8960 = 18,350,080; per layer as E2B with FFN 3 x 2048 x 16,384 = 100,663,296:
// 112,484,944, x 35 = 3,936,973,040. The built-in profile is the same model.
TEST(Hybrid, Gemma3nE4bProfileIsItsConfig) {
  const ModelSpec m = imported("gemma-3n-E4B-it");
  const ModelSpec p = builtin("gemma-3n-e4b");
  for (const ModelSpec* x : {&m, &p}) {
    EXPECT_EQ(x->arch, "gemma3n");
    EXPECT_EQ(x->kv_shared_layers, 15u);
    EXPECT_EQ(kv_layers(*x), 20u);  // llama.cpp's n_layer_kv_from_start, as for E2B
    EXPECT_EQ(*param_count(*x), 6868990448.0);
    EXPECT_EQ(*quality_param_count(*x), 6868990448.0 - 2351104000.0);
  }
  EXPECT_EQ(m.ffn, p.ffn);
  EXPECT_EQ(m.context_tokens, p.context_tokens);
}

// SmolLM3-3B (https://huggingface.co/HuggingFaceTB/SmolLM3-3B/blob/main/config.json): llama's tensors; the layers
// without RoPE (every 4th, no_rope_layer_interval) change nothing in memory.
TEST(Hybrid, SmolLm3IsALlamaInMemory) {
  const ModelSpec m = imported("SmolLM3-3B");
  EXPECT_EQ(m.arch, "smollm3");
  EXPECT_EQ(m.head_dim, 128u);
  EXPECT_TRUE(m.tied_embeddings);
  // 36 layers x 4 kv heads x 128 x (K + V) x 2 B.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, f16()), 36 * 4 * 128 * 2 * 2.0);
  // token_embd 2048 x 128,256 = 262,668,288; per layer 2 norms 4096, q and o 2 x 2048 x 2048, k and v
  // 2 x 2048 x 512, FFN 3 x 2048 x 11,008 = 78,123,008, x 36 = 2,812,428,288; output_norm 2048.
  EXPECT_EQ(*param_count(m), 262668288.0 + 2812428288.0 + 2048);
}

// Gemma 3n as llama.cpp's converter writes it (Gemma3NModel.set_gguf_parameters): the sliding-window pattern is
// one boolean per layer, shared_kv_layers and embedding_length_per_layer_input.
TEST(Hybrid, Gemma3nFromGgufMetadata) {
  io::GgufFile f;
  const auto u32 = [&](const std::string& key, std::uint64_t v) { f.metadata.push_back({key, io::GgufValue{io::GgufType::u32, v}}); };
  f.metadata.push_back({"general.architecture", io::GgufValue{io::GgufType::string, std::string("gemma3n")}});
  u32("gemma3n.block_count", 30);
  u32("gemma3n.embedding_length", 2048);
  u32("gemma3n.feed_forward_length", 8192);
  u32("gemma3n.attention.head_count", 8);
  u32("gemma3n.attention.head_count_kv", 2);
  u32("gemma3n.attention.key_length", 256);
  u32("gemma3n.attention.sliding_window", 512);
  u32("gemma3n.attention.shared_kv_layers", 10);
  u32("gemma3n.embedding_length_per_layer_input", 256);
  f.metadata.push_back({"gemma3n.attention.sliding_window_pattern", io::GgufValue{io::GgufType::array, io::GgufArray{io::GgufType::boolean, 30, {}}}});
  f.tensors.push_back({"token_embd.weight", {2048, 262400}, nullptr, 0, 0});
  const auto m = io::model_from_gguf(f, "e2b", "e2b.gguf");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->sliding_window->pattern, 5u);
  EXPECT_EQ(m->kv_shared_layers, 10u);
  EXPECT_EQ(m->per_layer_embd, 256u);
  EXPECT_EQ(kv_layers(*m), 20u);
}

// A GGUF header of a released model's shape as llama.cpp's converter writes it (TextModel.set_gguf_parameters:
// {arch}.block_count, context_length, embedding_length, feed_forward_length, attention.head_count(_kv), and the
// architecture's own keys): token_embd of hidden x vocab, and output.weight unless the embeddings are tied.
struct ConvertedShape {
  std::string arch;
  std::uint64_t layers = 0, context = 0, hidden = 0, ffn = 0, heads = 0, vocab = 0;
  bool tied = false;
};
HybridGguf converter_gguf(const ConvertedShape& s) {
  HybridGguf g;
  g.f.metadata.push_back({"general.architecture", io::GgufValue{io::GgufType::string, s.arch}});
  g.u32("block_count", s.layers);
  g.u32("context_length", s.context);
  g.u32("embedding_length", s.hidden);
  g.u32("feed_forward_length", s.ffn);
  g.u32("attention.head_count", s.heads);
  g.f.tensors.push_back({"token_embd.weight", {s.hidden, s.vocab}, nullptr, 0, 0});
  if (!s.tied) g.f.tensors.push_back({"output.weight", {s.hidden, s.vocab}, nullptr, 0, 0});
  return g;
}

ModelSpec from_gguf(const io::GgufFile& f) {
  const auto m = io::model_from_gguf(f, "gguf", "model.gguf");
  EXPECT_TRUE(m) << (m ? "" : m.error().message);
  return m ? *m : ModelSpec{};
}

// The figures of a model read from GGUF metadata equal those of its config.json (or profile).
void expect_same_model(const ModelSpec& gguf, const ModelSpec& config) {
  EXPECT_EQ(gguf.arch, config.arch);
  EXPECT_EQ(gguf.layers, config.layers);
  EXPECT_EQ(gguf.hidden, config.hidden);
  EXPECT_EQ(gguf.heads, config.heads);
  EXPECT_EQ(gguf.kv_heads, config.kv_heads);
  EXPECT_EQ(gguf.head_dim, config.head_dim);
  EXPECT_EQ(gguf.ffn, config.ffn);
  EXPECT_EQ(gguf.vocab, config.vocab);
  EXPECT_EQ(gguf.tied_embeddings, config.tied_embeddings);
  EXPECT_EQ(gguf.sliding_window.has_value(), config.sliding_window.has_value());
  EXPECT_EQ(*param_count(gguf), *param_count(config));
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(gguf, f16()), kv_bytes_per_token(config, f16()));
  EXPECT_DOUBLE_EQ(state_bytes(gguf), state_bytes(config));
}

// SmolLM3-3B as SmolLM3Model (LlamaModel.set_gguf_parameters) writes it: smollm3.*, 36 layers, hidden 2048,
// 16 / 4 heads (key width 2048 / 16 = 128), FFN 11,008, context 65,536, tied (no output.weight).
TEST(Hybrid, SmolLm3FromGgufMetadata) {
  HybridGguf g = converter_gguf({.arch = "smollm3", .layers = 36, .context = 65536, .hidden = 2048, .ffn = 11008, .heads = 16,
                                 .vocab = 128256, .tied = true});
  g.u32("attention.head_count_kv", 4);
  g.u32("rope.dimension_count", 128);
  const ModelSpec m = from_gguf(g.f);
  expect_same_model(m, imported("SmolLM3-3B"));
  EXPECT_EQ(m.context_tokens, 65536u);
  // As SmolLm3IsALlamaInMemory: 36 x 4 x 128 x (K + V) x 2 B = 73,728 B per token; 3,075,098,624 parameters.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, f16()), 73728);
  EXPECT_EQ(*param_count(m), 3075098624.0);
}

// Phi-3-mini-4k-instruct as Phi3MiniModel.set_gguf_parameters writes it: phi3.*, 32 layers, hidden 3072, 32 / 32
// heads of 96, FFN 8192, context 4096, an output.weight, and attention.sliding_window: config.json's 2047, or 0
// when it states none ("use zero value of sliding_window to distinguish Phi-4 from other PHI3 models"). llama.cpp
// runs phi3 with full attention either way (llama_model_phi3::load_arch_hparams sets swa_type none), and a window
// of 0 is no window, not an error. token_embd and output 2 x 3072 x 32,064 = 197,001,216; output_norm 3072; per
// layer 2 norms 6,144, attn_qkv 3072 x 9216 = 28,311,552, attn_output 9,437,184, the fused ffn_up 3072 x 16,384 =
// 50,331,648, ffn_down 25,165,824: 113,252,352, x 32 = 3,624,075,264. In all 3,821,079,552 (Microsoft's "3.8B").
// KV: 32 layers x 32 kv heads x 96 x (K + V) x 2 B = 393,216 B per token.
TEST(Hybrid, Phi3FromGgufMetadataWithOrWithoutAWindow) {
  for (const std::uint64_t window : {2047u, 0u}) {
    SCOPED_TRACE(window);
    HybridGguf g = converter_gguf({.arch = "phi3", .layers = 32, .context = 4096, .hidden = 3072, .ffn = 8192, .heads = 32, .vocab = 32064});
    g.u32("attention.head_count_kv", 32);
    g.u32("rope.dimension_count", 96);
    g.u32("attention.sliding_window", window);
    const ModelSpec m = from_gguf(g.f);
    expect_same_model(m, builtin("phi-3-mini-4k"));
    EXPECT_FALSE(m.sliding_window);
    EXPECT_EQ(m.context_tokens, 4096u);
    EXPECT_EQ(*param_count(m), 3821079552.0);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, f16()), 393216);
  }
}

// LFM2-8B-A1B as LFM2MoeModel.set_gguf_parameters writes it: lfm2moe.*, head_count_kv 8 in the 6 full_attention
// layers and 0 in the 18 conv layers, expert_count 32, expert_used_count 4, expert_feed_forward_length 1792,
// leading_dense_block_count 2, shortconv.l_cache 3, feed_forward_length 7168 (the dense layers'), tied.
TEST(Hybrid, Lfm2MoeFromGgufMetadata) {
  HybridGguf g = converter_gguf({.arch = "lfm2moe", .layers = 24, .context = 128000, .hidden = 2048, .ffn = 7168, .heads = 32,
                                 .vocab = 65536, .tied = true});
  std::vector<std::uint32_t> kv(24, 0);
  for (const int i : {2, 6, 10, 14, 18, 21}) kv[i] = 8;
  g.head_count_kv(kv);
  g.moe(32, 4, 1792);
  g.u32("leading_dense_block_count", 2);
  g.u32("shortconv.l_cache", 3);
  const ModelSpec m = from_gguf(g.f);
  expect_same_model(m, builtin("lfm2-8b-a1b"));
  ASSERT_TRUE(m.state && m.moe);
  EXPECT_EQ(m.state->layers, 18u);
  EXPECT_EQ(m.moe->dense_layers, 2u);
  EXPECT_EQ(m.context_tokens, 128000u);
  // As Lfm2MoeProfileIsItsConfig: 294,912 B of state per sequence, 12,288 B of KV per token, 8,339,930,560
  // parameters.
  EXPECT_DOUBLE_EQ(state_bytes(m), 294912);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, f16()), 12288);
  EXPECT_EQ(*param_count(m), 8339930560.0);
}

std::string model_error(const std::string& body) {
  const auto m = io::load_model(io::ProfileText{"t", "t.toml", "test", body}, {});
  return m ? "" : m.error().message;
}

TEST(Hybrid, ProfileStateBelongsToHybridArchitectures) {
  const std::string shape = "layers = 16\nhidden = 2048\nheads = 32\nkv_heads = 8\nhead_dim = 64\nffn = 8192\nvocab = 65536\n";
  const std::string state = "[state]\nkind = \"shortconv\"\nlayers = 10\nconv_kernel = 3\n";
  EXPECT_EQ(model_error("arch = \"lfm2\"\n" + shape + state), "");
  EXPECT_EQ(model_error("arch = \"llama\"\n" + shape + state), "t.toml:1:8: model.arch \"llama\" has no state layers: remove [state]");
  EXPECT_EQ(model_error("arch = \"lfm2\"\n" + shape), "t.toml:1:8: model.arch \"lfm2\" needs [state] with kind = \"shortconv\"");
  EXPECT_EQ(model_error("arch = \"lfm2\"\n" + shape + "[state]\nkind = \"shortconv\"\nlayers = 16\nconv_kernel = 3\n"),
            "t.toml:11:10: model.state.layers (16) must be less than model.layers (16): at least one layer keeps a KV cache");
}

TEST(Hybrid, StateNeedsAnAttentionLayer) {
  const auto m = io::model_from_hf_config(
      R"({"model_type": "lfm2", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
          "intermediate_size": 128, "vocab_size": 256, "conv_L_cache": 3, "layer_types": ["conv", "conv"]})",
      "l", "l.json");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message, "l.json: layer_types: at least one layer must be an attention layer");
}

}  // namespace
}  // namespace edgeplan
