// Pieces bench's kernels share (io/quant_matmul.hpp, io/f16_matmul.hpp, io/attention.hpp): the fixed
// pseudo-random stream their operands are filled from, the 64-byte aligned vectors that hold them, ggml's table of
// every fp16 value's fp32, and on x86 the horizontal sum of an AVX2 fp32 accumulator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "edgeplan/core/float16.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace edgeplan::io::kernel_parts {

// A fixed xorshift stream of bytes (the speed of the kernels does not depend on the values).
struct Bytes {
  std::uint64_t state = 0x9E3779B97F4A7C15u;
  std::uint8_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return static_cast<std::uint8_t>(state >> 24);
  }
  std::uint16_t half_scale() { return static_cast<std::uint16_t>(0x2000u | (next() & 0xFFu)); }  // about 0.008
};

// An allocator on 64-byte boundaries: ggml allocates its buffers so (ggml_aligned_malloc, 64 on x86) and places
// tensors at multiples of TENSOR_ALIGNMENT in them, so llama.cpp's kernels never meet an operand or an output row
// split across cache lines. A std::vector's own 16-byte alignment did that to bench's: the AMX kernels' 64-byte
// output rows straddled two lines, and their 1024-row shapes ran at 290 GFLOPS on 2 threads of the development VM
// where 64-byte aligned ones ran at 460-490.
template <class T>
struct CacheAligned {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheAligned() = default;
  template <class U>
  explicit CacheAligned(const CacheAligned<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlign); }
  bool operator==(const CacheAligned&) const { return true; }
};
template <class T>
using AlignedVector = std::vector<T, CacheAligned<T>>;

// Every fp16 value's fp32, as ggml_table_f32_f16 (ggml.c): on x86 ggml's kernels widen a single fp16 scale by a
// lookup in that table (GGML_CPU_FP16_TO_FP32 of ggml-cpu/simd-mappings.h is the lookup there; only ARM, POWER9 and
// RISC-V define it as an instruction), one load that the multiply it feeds can take from memory, where F16C's
// _cvtsh_ss is three instructions. bench's kernels take a scale the way the kernel they follow does. Built when the
// program starts (65,536 conversions), not on first use: a first-use guard in a kernel is a branch and a call path
// on every call, and a one-token matmul calls its kernel once per weight row of 32 blocks (the guard cost Q8_0's
// one-token kernel 4-5% on the EPYC of docs/accuracy.md).
inline const std::vector<float> kF16Table = [] {
  std::vector<float> t(65536);
  for (std::size_t h = 0; h < t.size(); ++h) t[h] = f16_to_f32(static_cast<std::uint16_t>(h));
  return t;
}();
inline const float* f16_table() { return kF16Table.data(); }

#if defined(__x86_64__) || defined(__i386__)
// The sum of the 8 lanes: (0 + 4, 1 + 5, 2 + 6, 3 + 7), then pairs, then the last two.
__attribute__((target("avx2,fma,f16c"))) inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
#endif

}  // namespace edgeplan::io::kernel_parts
