// core/runtime.hpp: llama.cpp's compute, output and repack buffers against figures llama.cpp itself reported
// (tests/llamacpp/check-runtime, docs/accuracy.md) and hand-derived values.
#include "edgeplan/core/runtime.hpp"

#include <gtest/gtest.h>

namespace edgeplan {
namespace {

// kvctx-llama write s5.gguf 6 256 4 1 64 768 32000: a llama-shaped model, vocabulary 32,000.
ModelSpec small_model() {
  ModelSpec m;
  m.name = "s5";
  m.layers = 6;
  m.hidden = 256;
  m.heads = 4;
  m.kv_heads = 1;
  m.head_dim = 64;
  m.ffn = 768;
  m.vocab = 32000;
  return m;
}

const FileType& f16() { return *find_file_type("F16"); }
const KvType& kv(std::string_view name) { return *find_kv_type(name); }

// The compute buffers below are what llama.cpp reserved for the generated models (tests/llamacpp/check-runtime,
// the libraries of node-llama-cpp 3.21.1), to the byte: edgeplan replays ggml-alloc over llama.cpp's graph
// (core/compute_graph.hpp).
TEST(Runtime, ComputeBufferAsLlamaCppReservesIt) {
  // Flash attention on, ubatch 512 (any context from 512 to 4,096): the logits of 512 tokens on top of the
  // input embeddings and the last hidden states.
  const auto b = runtime_buffers(small_model(), f16(), kv("f16"), 4096, {}, {}, {});
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->flash_attn);
  EXPECT_DOUBLE_EQ(b->compute_bytes, 66586624);
  EXPECT_DOUBLE_EQ(b->output_bytes, 4 * 32000);
  EXPECT_DOUBLE_EQ(b->repack_bytes, 0);
  EXPECT_DOUBLE_EQ(b->added_bytes, 66586624 + 4 * 32000);
  // Flash attention off, and a q8_0 cache (its Hadamard rotations): the last layer leaves a hole of one
  // 512 x 256 F32 row under the logits.
  RuntimeOptions off;
  off.flash_attn = FlashAttn::off;
  EXPECT_DOUBLE_EQ(runtime_buffers(small_model(), f16(), kv("f16"), 4096, {}, {}, off)->compute_bytes, 67110912);
  EXPECT_DOUBLE_EQ(runtime_buffers(small_model(), f16(), kv("q8_0"), 4096, {}, {}, {})->compute_bytes, 67110912);
  KvCacheSettings s;
  s.ubatch_tokens = 128;
  EXPECT_DOUBLE_EQ(runtime_buffers(small_model(), f16(), kv("f16"), 4096, s, {}, {})->compute_bytes, 16646656);
}

TEST(Runtime, AttentionScoresWithoutFlashAttention) {
  // kvctx-llama write v8k.gguf 3 384 6 2 64 1536 8000: flash attention off, the F32 scores of 512 tokens x 6
  // heads x 4,096 cells dominate; llama.cpp reserved 63,186,944 B (19,146,752 B at a context of 1,000).
  ModelSpec m = small_model();
  m.layers = 3;
  m.hidden = 384;
  m.heads = 6;
  m.kv_heads = 2;
  m.ffn = 1536;
  m.vocab = 8000;
  RuntimeOptions o;
  o.flash_attn = FlashAttn::off;
  const auto b = runtime_buffers(m, f16(), kv("f16"), 4096, {}, {}, o);
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->flash_attn);
  EXPECT_DOUBLE_EQ(b->compute_bytes, 63186944);
  EXPECT_DOUBLE_EQ(runtime_buffers(m, f16(), kv("f16"), 1000, {}, {}, o)->compute_bytes, 19146752);
}

TEST(Runtime, HybridsComputeBuffers) {
  // llama-model write-hybrid (check-runtime's h-lfm2, h-granite, h-next), ubatch 512, flash attention on
  // unless said.
  ModelSpec lfm2 = small_model();
  lfm2.arch = "lfm2";
  lfm2.kv_heads = 2;
  lfm2.state = StateSpec{StateKind::shortconv, 4, 3};
  EXPECT_DOUBLE_EQ(runtime_buffers(lfm2, f16(), kv("f16"), 4096, {}, {}, {})->compute_bytes, 66586624);
  KvCacheSettings s;
  s.ubatch_tokens = 256;
  EXPECT_DOUBLE_EQ(runtime_buffers(lfm2, f16(), kv("q8_0"), 4096, s, {}, {})->compute_bytes, 33327136);
  ModelSpec granite = small_model();
  granite.arch = "granitehybrid";
  granite.layers = 8;
  granite.ffn = 512;
  granite.vocab = 16000;
  granite.state = StateSpec{StateKind::mamba2, 6, 4, 512, 64, 1, 8};
  RuntimeOptions off;
  off.flash_attn = FlashAttn::off;
  EXPECT_DOUBLE_EQ(runtime_buffers(granite, f16(), kv("f16"), 1000, {}, {}, {})->compute_bytes, 34342912);
  EXPECT_DOUBLE_EQ(runtime_buffers(granite, f16(), kv("f16"), 4096, {}, {}, off)->compute_bytes, 44836896);
  RuntimeOptions two;
  two.parallel = 2;
  EXPECT_DOUBLE_EQ(runtime_buffers(granite, f16(), kv("q8_0"), 2048, {}, {}, two)->compute_bytes, 33818624);
  // Qwen3-Next keeps the normed last hidden states as an output of their own (t_h_nextn) and takes the output
  // rows from them; ggml-alloc's best fit leaves 1,064,960 B of holes under them at 4,096 tokens.
  ModelSpec next = small_model();
  next.arch = "qwen3next";
  next.layers = 8;
  next.kv_heads = 2;
  next.ffn = 256;
  next.vocab = 16000;
  next.state = StateSpec{StateKind::gated_delta_net, 6, 4, 256, 64, 2, 4};
  next.moe = MoeSpec{4, 2, 256, 1, 0};
  EXPECT_DOUBLE_EQ(runtime_buffers(next, f16(), kv("f16"), 4096, {}, {}, {})->compute_bytes, 35407872);
  s.ubatch_tokens = 128;
  EXPECT_DOUBLE_EQ(runtime_buffers(next, f16(), kv("f16"), 4096, s, {}, off)->compute_bytes, 11409952);
  EXPECT_DOUBLE_EQ(runtime_buffers(next, f16(), kv("f16"), 1000, {}, {}, two)->compute_bytes, 34342912);
}

TEST(Runtime, MicroBatchIsCappedByTheContextAndParallelSequencesGetAnOutputEach) {
  KvCacheSettings s;
  s.ubatch_tokens = 4096;  // more than n_batch 2048 and the context
  RuntimeOptions o;
  o.parallel = 2;
  const auto b = runtime_buffers(small_model(), f16(), kv("f16"), 700, s, {}, o);
  ASSERT_TRUE(b.ok());
  KvCacheSettings batch = s;
  batch.ubatch_tokens = 1400;  // 2 x 700 tokens of the batch
  const auto explicit_batch = runtime_buffers(small_model(), f16(), kv("f16"), 700, batch, {}, o);
  EXPECT_DOUBLE_EQ(b->compute_bytes, explicit_batch->compute_bytes);
  EXPECT_GT(b->compute_bytes, 4.0 * 1400 * 32000);  // the logits of 1,400 tokens
  EXPECT_DOUBLE_EQ(b->output_bytes, 2 * 4 * 32000);
}

TEST(Runtime, EverySequenceKeepsItsOwnCache) {
  // K and V of 6 layers x 1 KV head x 64 in F16: 1,536 B per token; 4,096 tokens each for 3 sequences.
  EXPECT_DOUBLE_EQ(sequences_cache_bytes(small_model(), kv("f16"), 4096, {}, 1), 6291456.0);
  EXPECT_DOUBLE_EQ(sequences_cache_bytes(small_model(), kv("f16"), 4096, {}, 3), 3 * 6291456.0);
}

TEST(Runtime, NoBuffersWhenTheProfileSaysNone) {
  RuntimeSpec spec;
  spec.buffers = false;  // the reference chapter's phone
  const auto b = runtime_buffers(small_model(), f16(), kv("f16"), 4096, {}, spec, {});
  ASSERT_TRUE(b.ok());
  EXPECT_DOUBLE_EQ(b->added_bytes, 0);
}

TEST(Runtime, QuantizedVNeedsFlashAttention) {
  RuntimeOptions o;
  o.flash_attn = FlashAttn::off;
  const auto b = runtime_buffers(small_model(), f16(), kv("q8_0"), 4096, {}, {}, o);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("needs flash attention"), std::string::npos);
  o.flash_attn = FlashAttn::automatic;
  EXPECT_TRUE(runtime_buffers(small_model(), f16(), kv("q8_0"), 4096, {}, {}, o).ok());
}

TEST(Runtime, RepackTakesTheMatmulWeightsOfTheTypesTheIsaRepacks) {
  // Q4_0: every 2-D matmul weight is Q4_0 but output.weight (Q6_K, llama.cpp's rule) and token_embd (a row
  // lookup, never repacked). On x86 the Q4_0 ones are repacked: 6 layers x (q 256x256 + k, v 256x64 + o 256x256
  // + gate, up, down 256x768) weights at 18 bytes per 32; ARM also repacks the Q6_K output.
  const ModelSpec m = small_model();
  const FileType& q4 = *find_file_type("Q4_0");
  const double layer_weights = 256.0 * 256 * 2 + 256.0 * 64 * 2 + 256.0 * 768 * 3;
  EXPECT_DOUBLE_EQ(weight_buffers(m, q4, RepackIsa::x86_avx2).repack_bytes, 6 * layer_weights / 32 * 18);
  EXPECT_DOUBLE_EQ(weight_buffers(m, q4, RepackIsa::arm_dotprod).repack_bytes,
                   6 * layer_weights / 32 * 18 + 256.0 * 32000 / 256 * 210);
  EXPECT_DOUBLE_EQ(weight_buffers(m, q4, RepackIsa::none).repack_bytes, 0);
  EXPECT_DOUBLE_EQ(weight_buffers(m, f16(), RepackIsa::x86_avx512).repack_bytes, 0);
  // With mmap the repacked copy sits beside the mapped file; without mmap it replaces those tensors.
  RuntimeSpec spec;
  spec.repack = RepackIsa::x86_avx2;
  RuntimeOptions o;
  const auto mapped = runtime_buffers(m, q4, kv("f16"), 512, {}, spec, o);
  o.mmap = false;
  const auto loaded = runtime_buffers(m, q4, kv("f16"), 512, {}, spec, o);
  ASSERT_TRUE(mapped.ok() && loaded.ok());
  // The last block's ffn_up (last by name in llama.cpp's file order) is repacked, so the mapped span ends
  // before it: 768 rows x 256 / 32 x 18 = 110,592 B are not mapped.
  EXPECT_DOUBLE_EQ(mapped->unmapped_bytes, 110592);
  EXPECT_DOUBLE_EQ(loaded->unmapped_bytes, 0);
  EXPECT_DOUBLE_EQ(mapped->added_bytes - loaded->added_bytes, mapped->repack_bytes - 110592);
}

TEST(Runtime, AmxTakesThePlainMatmulWeightsBeforeTheRepack) {
  // F16 on x86-amx (check-runtime's v32k): every 2-D matmul weight has rows a multiple of 32 and a row length a
  // multiple of 16, so AMX holds output 256 x 32,000 (16,384,000 B) and 6 layers x (q, o 256 x 256 + k, v
  // 256 x 64 + gate, up, down 256 x 768) x 2 B = 9,043,968 B: 25,427,968 B (llama.cpp logged an AMX buffer
  // of 24.25 MiB). With mmap the span of the CPU's weights starts after output.weight (first by name) and ends
  // before the last block's ffn_up (256 x 768 x 2 = 393,216 B): 16,777,216 B are not mapped.
  const ModelSpec m = small_model();
  const WeightBuffers f = weight_buffers(m, f16(), RepackIsa::x86_amx);
  EXPECT_DOUBLE_EQ(f.amx_bytes, 25427968);
  EXPECT_DOUBLE_EQ(f.amx_weights, 25427968);  // F16 is not packed
  EXPECT_DOUBLE_EQ(f.repack_bytes, 0);
  EXPECT_DOUBLE_EQ(f.unmapped_bytes, 16384000 + 393216);
  RuntimeSpec spec;
  spec.repack = RepackIsa::x86_amx;
  RuntimeOptions o;
  const auto plain = runtime_buffers(m, f16(), kv("f16"), 512, {}, {}, o);
  const auto mapped = runtime_buffers(m, f16(), kv("f16"), 512, {}, spec, o);
  o.mmap = false;
  const auto loaded = runtime_buffers(m, f16(), kv("f16"), 512, {}, spec, o);
  ASSERT_TRUE(plain.ok() && mapped.ok() && loaded.ok());
  EXPECT_DOUBLE_EQ(mapped->amx_bytes, 25427968);
  EXPECT_DOUBLE_EQ(mapped->added_bytes - plain->added_bytes, 25427968.0 - 16777216);
  EXPECT_DOUBLE_EQ(loaded->added_bytes, plain->added_bytes);  // the loaded copy replaces the tensors
  // Q4_0: the Q4_0 layers (4,521,984 weights at 18 B per 32 = 2,543,616 B) and the Q6_K output (256 x 32,000
  // at 210 B per 256 = 6,720,000 B) go to AMX unpacked in size; nothing is left for the repack.
  const FileType& q4 = *find_file_type("Q4_0");
  const WeightBuffers q = weight_buffers(m, q4, RepackIsa::x86_amx);
  EXPECT_DOUBLE_EQ(q.amx_bytes, 2543616 + 6720000);
  EXPECT_DOUBLE_EQ(q.amx_weights, q.amx_bytes);
  EXPECT_DOUBLE_EQ(q.repack_bytes, 0);
  EXPECT_DOUBLE_EQ(q.unmapped_bytes, 6720000 + 110592);
  // Q8_0 adds an int32 per block of 32: (4,521,984 + 8,192,000) weights / 32 x 4 = 1,589,248 B.
  const WeightBuffers q8 = weight_buffers(m, *find_file_type("Q8_0"), RepackIsa::x86_amx);
  EXPECT_DOUBLE_EQ(q8.amx_weights, 12713984.0 / 32 * 34);
  EXPECT_DOUBLE_EQ(q8.amx_bytes - q8.amx_weights, 1589248);
}

TEST(Runtime, AmxLeavesWhatItCannotTakeToTheRepack) {
  // Heads of 48: q 256 x 192 and o 192 x 256 go to AMX, but k and v have 48 rows, not a multiple of 32; as Q4_0
  // they go to the AVX-512 repack (rows a multiple of 8): 6 layers x 2 x 256 x 48 weights at 18 B per 32.
  ModelSpec m = small_model();
  m.head_dim = 48;  // q 256 x 192, k, v 256 x 48
  const WeightBuffers q = weight_buffers(m, *find_file_type("Q4_0"), RepackIsa::x86_amx);
  EXPECT_DOUBLE_EQ(q.repack_bytes, 6 * 2 * 256.0 * 48 / 32 * 18);
}

TEST(Runtime, AmxOnAHybrid) {
  // llama-model write-hybrid h-lfm2.gguf lfm2 6 256 4 2 768 32000 3 (F16): AMX takes output, the 6 FFNs, the 2
  // attention layers' q, o 256 x 256 and k, v 256 x 128 and the 4 conv layers' in_proj 256 x 768 and out_proj
  // 256 x 256: (8,192,000 + 3,538,944 + 393,216 + 1,048,576) x 2 = 26,345,472 B (llama.cpp: 25.12 MiB). Not
  // mapped: output.weight and layer 5's ffn_up (393,216 B).
  ModelSpec m = small_model();
  m.arch = "lfm2";
  m.kv_heads = 2;
  m.state = StateSpec{StateKind::shortconv, 4, 3};
  const WeightBuffers f = weight_buffers(m, f16(), RepackIsa::x86_amx);
  EXPECT_DOUBLE_EQ(f.amx_bytes, 26345472);
  EXPECT_DOUBLE_EQ(f.unmapped_bytes, 16384000 + 393216);
}

TEST(Runtime, RepackTakesAHybridsStateLayerProjections) {
  // llama-model write-hybrid h-lfm2.gguf lfm2 6 256 4 2 768 32000 3, quantized to Q4_0 (check-runtime's h-lfm2-q4):
  // layers 2 and 5 attend, the other 4 are short convolutions. Repacked on x86: 6 FFNs 3 x 256 x 768 = 3,538,944
  // weights, 2 attention layers q, o 256 x 256 and k, v 256 x 128 = 393,216, 4 conv layers in_proj 256 x 768 and
  // out_proj 256 x 256 = 1,048,576: 4,980,736 weights at 18 bytes per 32 = 2,801,664 B (llama.cpp logged a
  // CPU_REPACK buffer of 2.67 MiB).
  ModelSpec m = small_model();
  m.arch = "lfm2";
  m.kv_heads = 2;
  m.state = StateSpec{StateKind::shortconv, 4, 3};
  EXPECT_DOUBLE_EQ(weight_buffers(m, *find_file_type("Q4_0"), RepackIsa::x86_avx2).repack_bytes, 2801664);
}

TEST(Runtime, Names) {
  EXPECT_EQ(find_repack_isa("ARM-i8mm"), RepackIsa::arm_i8mm);
  EXPECT_FALSE(find_repack_isa("sse"));
  EXPECT_EQ(to_string(RepackIsa::x86_avx512), "x86-avx512");
  EXPECT_EQ(find_repack_isa("x86-amx"), RepackIsa::x86_amx);
  EXPECT_EQ(find_flash_attn("auto"), FlashAttn::automatic);
  EXPECT_FALSE(find_flash_attn("yes"));
}

}  // namespace
}  // namespace edgeplan
