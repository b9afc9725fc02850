// The fp16 matrix multiply llama.cpp's CPU backend runs for F16 weights, for `edgeplan bench`. ggml converts the
// activations to F16 (the vec_dot_type of F16) and, on x86-64 with AVX2 and F16C, multiplies through llamafile's
// tinyBLAS: both operands K-contiguous, 8 halves at a time widened to fp32 (_mm256_cvtph_ps), fused multiply-adds
// into a tile of 4 weight rows x 3 tokens of 8-lane fp32 accumulators (16 vector registers), each accumulator
// summed across its lanes at the end; a tile's weight rows meet every token before the next rows are read. Source:
// ggml/src/ggml-cpu/llamafile/sgemm.cpp (llamafile_sgemm, case GGML_TYPE_F16; tinyBLAS::matmul, mnpack<4, 3, ...>
// for 16 vector registers) of llama.cpp as bundled with node-llama-cpp 3.21.1. This is edgeplan's own kernel of that
// arithmetic (not ggml's code): AVX2 + FMA + F16C when the CPU has them (checked at run time: cpu_has_avx2()), else a
// portable loop of the same tiles. FLOPs = 2 x rows x k x tokens (docs/model.md, "bench").
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "edgeplan/io/quant_matmul.hpp"

namespace edgeplan::io {

// Weights of `rows` x `k` and activations of `tokens` x `k`, both F16 and filled with fixed pseudo-random values in
// [-1, 1) in steps of 1/128 (the speed does not depend on them); every size positive (checked:
// std::invalid_argument otherwise). A k that is not a multiple of 8 ends in products taken one at a time.
class F16Matmul {
 public:
  F16Matmul(std::uint64_t rows, std::uint64_t k, std::uint64_t tokens, QuantIsa isa = QuantIsa::best);
  ~F16Matmul();
  F16Matmul(F16Matmul&&) noexcept;
  F16Matmul& operator=(F16Matmul&&) noexcept;

  // Output rows [row_begin, row_end) for every token; threads may run disjoint ranges at once.
  void run(std::uint64_t row_begin, std::uint64_t row_end);
  [[nodiscard]] double flops() const;                   // 2 x rows x k x tokens
  [[nodiscard]] std::uint64_t rows() const;
  [[nodiscard]] std::string kernel() const;             // "F16 x F16 fp32 FMA, 4x3 tile, AVX2"
  [[nodiscard]] std::span<const float> output() const;  // tokens x rows, row-major by token
  // The operands as stored (fp16 bits), for tests that set them and check the products.
  [[nodiscard]] std::span<std::uint16_t> weights();
  [[nodiscard]] std::span<std::uint16_t> activations();

 private:
  struct Data;
  std::unique_ptr<Data> data_;
};

}  // namespace edgeplan::io
