// Pieces bench's matmul kernels share (io/quant_matmul.hpp, io/f16_matmul.hpp): the fixed pseudo-random stream
// their operands are filled from, and on x86 the horizontal sum of an AVX2 fp32 accumulator.
#pragma once

#include <cstdint>

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
