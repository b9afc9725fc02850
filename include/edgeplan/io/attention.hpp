// The attention llama.cpp's CPU backend runs over a prompt, for `edgeplan bench`: flash attention in tiles, as
// ggml_compute_forward_flash_attn_ext_tiled does for a prompt of at least one tile (ggml/src/ggml-cpu/ops.cpp, tiles of
// GGML_FA_TILE_Q = 64 queries by GGML_FA_TILE_KV = 64 keys, common.h): for each head and tile of queries (fp32), each
// tile of keys whose causal mask is not all -inf: the mask (F16) and the key tile (F16, transposed) widened to fp32
// (F16C's conversion where the CPU has it, as GGML_CPU_FP16_TO_FP32 on x86), KQ = Q K^T by a register-blocked fp32 GEMM
// (simd_gemm), scaled, masked, an online softmax per query row (running max and sum, the accumulated values rescaled
// when the max rises), the value tile (F16) widened, VKQ += softmax(KQ) V by the same GEMM; at the end each row divided
// by its sum. Grouped-query heads share their KV head. This is edgeplan's own code of that arithmetic: AVX-512 where
// the CPU has it (16-lane vectors, simd_gemm's 4 x 64 micro-kernel, as llama.cpp's AVX-512 builds run it), else AVX2 +
// FMA + F16C (cpu_has_avx2(); 8-lane vectors; both with a polynomial exp), else a portable loop; QuantIsa::avx2 asks
// for the 8-lane steps. bench takes its rate as edgeplan's count of causal attention (core/prefill.hpp attention_flops,
// per layer) over the time, not the tiles' work, so the rate is what prefill's attention term runs at (docs/model.md,
// "bench").
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "edgeplan/io/quant_matmul.hpp"

namespace edgeplan::io {

// One layer's attention over a prompt of `tokens`: `heads` query heads of `head_dim` sharing `kv_heads` KV heads
// (heads a multiple of kv_heads), queries, keys and values filled with fixed pseudo-random values; every size
// positive and head_dim a multiple of 8 (checked: std::invalid_argument otherwise).
class FlashAttention {
 public:
  FlashAttention(std::uint64_t heads, std::uint64_t kv_heads, std::uint64_t head_dim, std::uint64_t tokens,
                 QuantIsa isa = QuantIsa::best);
  ~FlashAttention();
  FlashAttention(FlashAttention&&) noexcept;
  FlashAttention& operator=(FlashAttention&&) noexcept;

  // Query heads [head_begin, head_end); threads may run disjoint ranges at once.
  void run(std::uint64_t head_begin, std::uint64_t head_end);
  [[nodiscard]] std::uint64_t rows() const;             // the heads (what threads split)
  [[nodiscard]] std::string kernel() const;             // "tiled flash attention, F16 K/V, 64x64 tiles, AVX2"
  [[nodiscard]] std::span<const float> output() const;  // tokens x heads x head_dim
  // The operands, for tests that check the outputs: queries tokens x heads x head_dim (fp32), keys and values
  // tokens x kv_heads x head_dim (fp16 bits).
  [[nodiscard]] std::span<const float> queries() const;
  [[nodiscard]] std::span<const std::uint16_t> keys() const;
  [[nodiscard]] std::span<const std::uint16_t> values() const;

 private:
  struct Data;
  std::unique_ptr<Data> data_;
};

// One decoded token's attention, for `edgeplan bench`'s [decode] attention rate: a single query per head over the
// cached keys, as ggml_compute_forward_flash_attn_ext_f16_one_chunk runs it for one row (ggml/src/ggml-cpu/ops.cpp):
// the query converted to F16 (the K type's vec_dot_type); for each cached key the F16 mask entry widened (a -inf
// cell skipped), s = K.Q by ggml_vec_dot_f16 (both widened to fp32, fused multiply-adds), scaled; an online softmax:
// on a new maximum the F16 accumulator scaled by exp(old max - new) (ggml_vec_scale_f16), then V added into it with
// weight exp(s - max) (ggml_vec_mad_f16: widened, multiply-add in fp32, rounded back to F16) and the sum updated; at
// the end the accumulator widened and divided by the sum. Grouped-query heads share their KV head. `layers` layers,
// each with a cache of `context` keys, all visible; threads run disjoint (layer, head) rows (llama.cpp splits the
// keys among its threads from 512 cached keys on and merges the partial sums: the same arithmetic per key). AVX2 +
// F16C when the CPU has them, else a portable loop of the same steps.
class TokenAttention {
 public:
  // Every size positive, heads a multiple of kv_heads and head_dim of 8 (std::invalid_argument otherwise).
  TokenAttention(std::uint64_t heads, std::uint64_t kv_heads, std::uint64_t head_dim, std::uint64_t context,
                 std::uint64_t layers, QuantIsa isa = QuantIsa::best);
  ~TokenAttention();
  TokenAttention(TokenAttention&&) noexcept;
  TokenAttention& operator=(TokenAttention&&) noexcept;

  // Rows [begin, end) of layers x heads (row = layer x heads + head); threads may run disjoint ranges at once.
  void run(std::uint64_t begin, std::uint64_t end);
  [[nodiscard]] std::uint64_t rows() const;             // layers x heads
  [[nodiscard]] double flops() const;                   // 4 x head_dim x context per row (decode_attention_flops)
  [[nodiscard]] std::string kernel() const;             // "one-query flash attention, F16 K/V, F16 accumulator, AVX2"
  [[nodiscard]] std::span<const float> output() const;  // layers x heads x head_dim
  // The operands: queries layers x heads x head_dim (fp32); keys and values layers x context x kv_heads x
  // head_dim (fp16 bits), as llama.cpp's cache holds them (a cell's heads side by side).
  [[nodiscard]] std::span<const float> queries() const;
  [[nodiscard]] std::span<const std::uint16_t> keys() const;
  [[nodiscard]] std::span<const std::uint16_t> values() const;

 private:
  struct Data;
  std::unique_ptr<Data> data_;
};

}  // namespace edgeplan::io
