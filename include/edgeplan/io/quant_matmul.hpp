// Quantized matrix multiplies of the arithmetic llama.cpp's CPU backend runs, for `edgeplan bench`. ggml's CPU
// matmul quantizes the activations to Q8_0 (for Q4_0 and Q8_0 weights) or Q8_K (for the K-quants) and runs integer
// dot products block by block: per 32 weights (Q4_0, Q8_0) d_w x d_a x sum(q_w x q_a), per 256 weights (Q4_K)
// d_a x (d x sum_j scale_j sum(q_w x q_a) - dmin x sum_j min_j sum(q_a)), with the 6-bit scales and mins of
// get_scale_min_k4. Source: ggml/src/ggml-cpu/arch/x86/quants.c (ggml_vec_dot_q4_0_q8_0, ggml_vec_dot_q8_0_q8_0,
// ggml_vec_dot_q4_K_q8_K, ggml_vec_dot_q6_K_q8_K) and ggml-common.h (block_q4_0, block_q8_0, block_q4_K,
// block_q6_K, block_q8_K) of llama.cpp as bundled with node-llama-cpp 3.21.1. These are edgeplan's own compact
// kernels of that arithmetic (not ggml's code): on x86-64 with AVX2, FMA and F16C (checked at run time) the int8
// products run as ggml's AVX2 path does
// (_mm256_maddubs_epi16 on |w| and sign-adjusted a, _mm256_madd_epi16, converted and accumulated in fp32), with
// AVX-512 VNNI's _mm256_dpbusd_epi32 in place of the two for Q4_0 and Q8_0 where the CPU has it (ggml's
// mul_sum_us8_pairs_float and the repack GEMMs under __AVX512VNNI__ and __AVX512VL__); elsewhere a portable scalar
// loop. Like llama.cpp's prefill paths on AVX2 (llamafile's tinyBLAS for Q8_0), a weight block is unpacked once
// and multiplied by the blocks of 8 prompt tokens, two weight rows at a time with AVX-512 VNNI; one token takes one
// row at a time, and Q6_K one row by one token always (ggml's vec_dot, nrc 1, which llama.cpp calls for them).
// Where llama.cpp repacks a type into its CPU_REPACK buffer (x86 without AMX, rows a multiple of 8: Q4_0 on AVX-512
// VNNI hosts here, Q4_K), the weights are repacked as it does (8 rows interleaved 8 bytes at a time,
// ggml-cpu/repack.cpp) and run its kernels' data movement (ggml-cpu/arch/x86/repack.cpp): 8 rows a call for one
// token, 16 rows by 16 (Q4_0) or 8 (Q4_K, AVX-512) tokens for a prompt. On CPUs with AMX-INT8 a
// prompt (tokens and rows multiples of 32) runs as llama.cpp's AMX GEMMs do (ggml-cpu/amx/mmq.cpp): weights packed
// in VNNI order per 16 rows, 32 x 32 calls of four int8 tiles, scaled into fp32 with AVX-512; one token runs
// ggml_backend_amx_mul_mat's M == 1 path on the same packed weights (tinygemm_kernel_vnni: 64 rows a call, 16 rows'
// sums in one AVX-512 vector), Q6_K's (block_q6_K: 6-bit weights, an int8 scale per 16) included.
// FLOPs = 2 x rows x k x tokens (docs/model.md, "bench").
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace edgeplan::io {

// The weight types bench measures, each with the activation type ggml pairs it with, for a prompt and for one
// decoded token. Q6_K is the output matrix of most K-quant and Q4_0 files and attn_v / ffn_down in some layers of
// Q4_K_M; without AMX its kernel is ggml's AVX2 dot product, one row by one token even in a prompt, as llama.cpp
// runs it there.
enum class QuantKind { q4_0, q8_0, q4_k, q6_k };
inline constexpr QuantKind kQuantKinds[] = {QuantKind::q4_0, QuantKind::q8_0, QuantKind::q4_k, QuantKind::q6_k};
std::string_view weight_type(QuantKind k);      // "Q4_0", "Q8_0", "Q4_K", "Q6_K" (ggml type names)
std::string_view activation_type(QuantKind k);  // "Q8_0" or "Q8_K"
// Bytes of one weight row of k weights in type k's blocks (k a multiple of 256): 18 per 32 for Q4_0, 34 per 32
// for Q8_0, 144 per 256 for Q4_K, 210 per 256 for Q6_K (ggml-common.h).
std::uint64_t quant_row_bytes(QuantKind kind, std::uint64_t k);

// The instruction set the prompt kernels of Q4_0 and Q8_0 run with on this machine: "AMX" (AMX-TILE and AMX-INT8
// granted by the OS, with AVX-512 VNNI: every type's prompt tiles; one token runs AVX-512 VNNI), "AVX-512 VNNI"
// (AVX-512 F, VL, BW and VNNI: vpdpbusd on 256-bit vectors, two weight rows per prompt tile, one row for one
// token), "AVX2" (AVX2, FMA and F16C) or "scalar". Without AMX the K-quant kernels run AVX2 on both of the AVX ones.
std::string_view quant_isa();
// x86-64 with AVX2, FMA and F16C, checked at run time: what the AVX2 kernels here and in io/f16_matmul.hpp need
// (bench measures the quantized types only where they run: a portable loop's speed says nothing of a runtime's).
bool cpu_has_avx2();
// AMX-TILE and AMX-INT8 with AVX-512 VNNI, the tile state granted by the OS: what the AMX kernels here need.
bool cpu_has_amx();
// best: quant_isa()'s (AMX where the shape allows it); vnni512: AVX-512 VNNI, not AMX (the K-quants' AVX2 code built
// for AVX-512); avx2: AVX2 without VNNI, built for AVX2 alone; scalar: the portable loop (tests compare them). A
// request the machine cannot run falls back to the next below it.
enum class QuantIsa { best, vnni512, avx2, scalar };

// Weights of `rows` x `k` in type kind and activations of `tokens` x `k` in its activation type, filled with fixed
// pseudo-random values (the speed does not depend on them); k is a multiple of 256 and tokens 1 (a matrix-vector
// product: one decoded token, tiles of one token) or a multiple of 8 (both checked: std::invalid_argument otherwise).
// AMX runs when rows are a multiple of 32 and tokens too, or one token runs llama.cpp's AVX-512 VNNI kernel on the
// AMX-packed weights (all four types); without AMX, Q4_0 and Q4_K are repacked as above where llama.cpp repacks
// them (kernel() names what runs).
class QuantMatmul {
 public:
  QuantMatmul(QuantKind kind, std::uint64_t rows, std::uint64_t k, std::uint64_t tokens, QuantIsa isa = QuantIsa::best);
  ~QuantMatmul();
  QuantMatmul(QuantMatmul&&) noexcept;
  QuantMatmul& operator=(QuantMatmul&&) noexcept;

  // Output rows [row_begin, row_end) for every token (under AMX: the 32-row blocks that start in the range, 64-row
  // ones for one token, so ranges that cover the rows cover every block once); threads may run disjoint ranges at
  // once.
  void run(std::uint64_t row_begin, std::uint64_t row_end);
  [[nodiscard]] double flops() const;                 // 2 x rows x k x tokens
  [[nodiscard]] std::uint64_t rows() const;
  // How `threads` threads share the rows as llama.cpp shares them: chunks of this many rows, the first by thread
  // index and the rest from a shared counter: for repacked weights (Q4_0, Q4_K), a quarter of a thread's rows on
  // 8-row boundaries (repack.cpp's forward_mul_mat); else for one token off AMX, 64 (ggml_compute_forward_mul_mat's
  // chunk_size for one column, ggml-cpu.c); 0 elsewhere: one contiguous slice per thread.
  [[nodiscard]] std::uint64_t chunk_rows(unsigned threads) const;
  [[nodiscard]] std::string kernel() const;  // "Q4_0 x Q8_0 int8 dot products, 2x8 tile, AVX-512 VNNI"
  [[nodiscard]] std::span<const float> output() const;  // tokens x rows, row-major by token

  struct Data;  // the operands (quant_matmul.cpp)

 private:
  std::unique_ptr<Data> data_;
};

}  // namespace edgeplan::io
