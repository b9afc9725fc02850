#include "edgeplan/io/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "edgeplan/core/float16.hpp"
#include "edgeplan/io/kernel_parts.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define EDGEPLAN_FA_X86 1
#endif

namespace edgeplan::io {
namespace fa {

constexpr std::uint64_t kTileQ = 64, kTileKv = 64;  // GGML_FA_TILE_Q, GGML_FA_TILE_KV
constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// The vector steps of a tile, portable or AVX2 (Steps below).
struct Steps {
  // c[m x n] += a[m x k] b[k x n], all row-major (simd_gemm).
  void (*gemm)(float* c, const float* a, const float* b, std::uint64_t m, std::uint64_t k, std::uint64_t n);
  // x[i] = exp(x[i] - max) for n values; returns their sum (ggml_vec_soft_max_f32).
  float (*softmax)(float* x, std::uint64_t n, float max);
  // out[i] = fp16 in[i] widened (ggml_cpu_fp16_to_fp32).
  void (*widen)(const std::uint16_t* in, float* out, std::uint64_t n);
  const char* isa;
};

void gemm_scalar(float* c, const float* a, const float* b, std::uint64_t m, std::uint64_t k, std::uint64_t n) {
  for (std::uint64_t i = 0; i < m; ++i) {
    for (std::uint64_t kk = 0; kk < k; ++kk) {
      const float x = a[i * k + kk];
      for (std::uint64_t j = 0; j < n; ++j) c[i * n + j] += x * b[kk * n + j];
    }
  }
}

float softmax_scalar(float* x, std::uint64_t n, float max) {
  float sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum += x[i] = std::exp(x[i] - max);
  return sum;
}

void widen_scalar(const std::uint16_t* in, float* out, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) out[i] = f16_to_f32(in[i]);
}

constexpr Steps kScalar{gemm_scalar, softmax_scalar, widen_scalar, "scalar"};

#if EDGEPLAN_FA_X86
#define EDGEPLAN_FA_AVX2 __attribute__((target("avx2,fma,f16c")))

// c += a b with 4 rows x 16 columns of accumulators (8 registers), the rows' a values broadcast (simd_gemm's
// micro-kernel); n a multiple of 8, rows and columns left over taken by narrower blocks.
EDGEPLAN_FA_AVX2 void gemm_avx2(float* c, const float* a, const float* b, std::uint64_t m, std::uint64_t k,
                                std::uint64_t n) {
  std::uint64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    for (std::uint64_t j = 0; j < n; j += 16) {
      const bool two = j + 16 <= n;
      __m256 acc[4][2];
      for (int r = 0; r < 4; ++r) {
        acc[r][0] = _mm256_loadu_ps(c + (i + r) * n + j);
        acc[r][1] = two ? _mm256_loadu_ps(c + (i + r) * n + j + 8) : _mm256_setzero_ps();
      }
      for (std::uint64_t kk = 0; kk < k; ++kk) {
        const __m256 b0 = _mm256_loadu_ps(b + kk * n + j);
        const __m256 b1 = two ? _mm256_loadu_ps(b + kk * n + j + 8) : _mm256_setzero_ps();
        for (int r = 0; r < 4; ++r) {
          const __m256 x = _mm256_set1_ps(a[(i + r) * k + kk]);
          acc[r][0] = _mm256_fmadd_ps(x, b0, acc[r][0]);
          acc[r][1] = _mm256_fmadd_ps(x, b1, acc[r][1]);
        }
      }
      for (int r = 0; r < 4; ++r) {
        _mm256_storeu_ps(c + (i + r) * n + j, acc[r][0]);
        if (two) _mm256_storeu_ps(c + (i + r) * n + j + 8, acc[r][1]);
      }
    }
  }
  for (; i < m; ++i) {
    for (std::uint64_t j = 0; j < n; j += 8) {
      __m256 acc = _mm256_loadu_ps(c + i * n + j);
      for (std::uint64_t kk = 0; kk < k; ++kk) {
        acc = _mm256_fmadd_ps(_mm256_set1_ps(a[i * k + kk]), _mm256_loadu_ps(b + kk * n + j), acc);
      }
      _mm256_storeu_ps(c + i * n + j, acc);
    }
  }
}

// exp on vectors: x = n ln 2 + r, |r| <= ln 2 / 2, exp r by a degree-5 polynomial (Cephes' expf coefficients),
// 2^n through the exponent bits; inputs below -87 (a masked -inf among them) give about 1e-38, not 0. The
// constants, shared by the 8-lane and 16-lane forms:
constexpr float kExpMin = -87.0f, kExpMax = 88.0f, kLog2e = 1.44269504f;
constexpr float kLn2High = 0.693359375f, kLn2Low = -2.12194440e-4f;  // ln 2 in two parts
constexpr float kExpPoly[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                              4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};  // highest degree first

EDGEPLAN_FA_AVX2 __m256 exp_avx2(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(kExpMin)), _mm256_set1_ps(kExpMax));
  const __m256 n =
      _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2High), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Low), r);
  __m256 p = _mm256_set1_ps(kExpPoly[0]);
  for (std::size_t i = 1; i < std::size(kExpPoly); ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpPoly[i]));
  p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

EDGEPLAN_FA_AVX2 float softmax_avx2(float* x, std::uint64_t n, float max) {
  __m256 sum = _mm256_setzero_ps();
  const __m256 m = _mm256_set1_ps(max);
  for (std::uint64_t i = 0; i < n; i += 8) {
    const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));
    _mm256_storeu_ps(x + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  return kernel_parts::hsum(sum);
}

EDGEPLAN_FA_AVX2 void widen_avx2(const std::uint16_t* in, float* out, std::uint64_t n) {
  std::uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  }
  for (; i < n; ++i) out[i] = _cvtsh_ss(in[i]);  // GGML_CPU_FP16_TO_FP32 on x86 with F16C
}

constexpr Steps kAvx2{gemm_avx2, softmax_avx2, widen_avx2, "AVX2"};

// The same steps on 16-lane vectors, as llama.cpp's AVX-512 builds run them (GGML_F32_EPR 16): the GEMM's
// micro-kernel 4 rows x 64 columns (simd_gemm's GEMM_RM 4, GEMM_RN 4 under __AVX512F__), columns left over in 16s;
// widths that are not a multiple of 16 take the AVX2 steps.
#define EDGEPLAN_FA_AVX512 __attribute__((target("avx2,fma,f16c,avx512f")))

template <int R, int C>
EDGEPLAN_FA_AVX512 void gemm_block_avx512(float* c, const float* a, const float* b, std::uint64_t k, std::uint64_t n) {
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < C; ++j) acc[r][j] = _mm512_loadu_ps(c + r * n + 16 * j);
  }
  for (std::uint64_t kk = 0; kk < k; ++kk) {
    __m512 bv[C];
    for (int j = 0; j < C; ++j) bv[j] = _mm512_loadu_ps(b + kk * n + 16 * j);
    for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * k + kk]);
      for (int j = 0; j < C; ++j) acc[r][j] = _mm512_fmadd_ps(x, bv[j], acc[r][j]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < C; ++j) _mm512_storeu_ps(c + r * n + 16 * j, acc[r][j]);
  }
}

EDGEPLAN_FA_AVX512 void gemm_avx512(float* c, const float* a, const float* b, std::uint64_t m, std::uint64_t k,
                                    std::uint64_t n) {
  if (n % 16 != 0) {
    gemm_avx2(c, a, b, m, k, n);
    return;
  }
  std::uint64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    std::uint64_t j = 0;
    for (; j + 64 <= n; j += 64) gemm_block_avx512<4, 4>(c + i * n + j, a + i * k, b + j, k, n);
    for (; j < n; j += 16) gemm_block_avx512<4, 1>(c + i * n + j, a + i * k, b + j, k, n);
  }
  for (; i < m; ++i) {
    for (std::uint64_t j = 0; j < n; j += 16) gemm_block_avx512<1, 1>(c + i * n + j, a + i * k, b + j, k, n);
  }
}

// exp_avx2's arithmetic on 16 lanes. (The zero-masked forms of the intrinsics: GCC 12 takes the plain ones'
// undefined pass-through operand for an uninitialized read, -Wmaybe-uninitialized.)
EDGEPLAN_FA_AVX512 __m512 exp_avx512(__m512 x) {
  constexpr __mmask16 kAll = 0xFFFF;
  x = _mm512_maskz_min_ps(kAll, _mm512_maskz_max_ps(kAll, x, _mm512_set1_ps(kExpMin)), _mm512_set1_ps(kExpMax));
  const __m512 n = _mm512_maskz_roundscale_ps(kAll, _mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2High), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Low), r);
  __m512 p = _mm512_set1_ps(kExpPoly[0]);
  for (std::size_t i = 1; i < std::size(kExpPoly); ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpPoly[i]));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  const __m512i biased = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(kAll, n), _mm512_set1_epi32(127));
  return _mm512_mul_ps(p, _mm512_castsi512_ps(_mm512_maskz_slli_epi32(kAll, biased, 23)));
}

EDGEPLAN_FA_AVX512 float softmax_avx512(float* x, std::uint64_t n, float max) {
  if (n % 16 != 0) return softmax_avx2(x, n, max);
  __m512 sum = _mm512_setzero_ps();
  const __m512 m = _mm512_set1_ps(max);
  for (std::uint64_t i = 0; i < n; i += 16) {
    const __m512 e = exp_avx512(_mm512_sub_ps(_mm512_loadu_ps(x + i), m));
    _mm512_storeu_ps(x + i, e);
    sum = _mm512_add_ps(sum, e);
  }
  const __m256 low = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(sum), 0));
  const __m256 high = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(sum), 1));
  return kernel_parts::hsum(_mm256_add_ps(low, high));
}

EDGEPLAN_FA_AVX512 void widen_avx512(const std::uint16_t* in, float* out, std::uint64_t n) {
  std::uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i half = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(0xFFFF, half));
  }
  if (i < n) widen_avx2(in + i, out + i, n - i);
}

constexpr Steps kAvx512{gemm_avx512, softmax_avx512, widen_avx512, "AVX-512"};
#endif

// The vector steps of one query's attention over F16 keys and values, portable or AVX2 + F16C (TokenSteps below).
struct TokenSteps {
  float (*dot)(const std::uint16_t* x, const std::uint16_t* y, std::uint64_t n);          // ggml_vec_dot_f16
  void (*scale)(std::uint16_t* y, std::uint64_t n, float v);                              // ggml_vec_scale_f16
  void (*mad)(std::uint16_t* y, const std::uint16_t* x, std::uint64_t n, float v);        // ggml_vec_mad_f16
  void (*narrow)(const float* x, std::uint16_t* y, std::uint64_t n);                      // ggml_cpu_fp32_to_fp16
  const char* isa;
};

float dot_f16_scalar(const std::uint16_t* x, const std::uint16_t* y, std::uint64_t n) {
  float sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum += f16_to_f32(x[i]) * f16_to_f32(y[i]);
  return sum;
}

void scale_f16_scalar(std::uint16_t* y, std::uint64_t n, float v) {
  for (std::uint64_t i = 0; i < n; ++i) y[i] = f32_to_f16(f16_to_f32(y[i]) * v);
}

void mad_f16_scalar(std::uint16_t* y, const std::uint16_t* x, std::uint64_t n, float v) {
  for (std::uint64_t i = 0; i < n; ++i) y[i] = f32_to_f16(f16_to_f32(y[i]) + f16_to_f32(x[i]) * v);
}

void narrow_scalar(const float* x, std::uint16_t* y, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) y[i] = f32_to_f16(x[i]);
}

constexpr TokenSteps kTokenScalar{dot_f16_scalar, scale_f16_scalar, mad_f16_scalar, narrow_scalar, "scalar"};

#if EDGEPLAN_FA_X86
EDGEPLAN_FA_AVX2 __m256 load_f16(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

EDGEPLAN_FA_AVX2 void store_f16(std::uint16_t* p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

// Four accumulators of 8 lanes over 32 values a step (GGML_F16_STEP), the rest 8 at a time; n a multiple of 8.
EDGEPLAN_FA_AVX2 float dot_f16_avx2(const std::uint16_t* x, const std::uint16_t* y, std::uint64_t n) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  std::uint64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int j = 0; j < 4; ++j) acc[j] = _mm256_fmadd_ps(load_f16(x + i + 8 * j), load_f16(y + i + 8 * j), acc[j]);
  }
  for (; i < n; i += 8) acc[0] = _mm256_fmadd_ps(load_f16(x + i), load_f16(y + i), acc[0]);
  return kernel_parts::hsum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
}

EDGEPLAN_FA_AVX2 void scale_f16_avx2(std::uint16_t* y, std::uint64_t n, float v) {
  const __m256 s = _mm256_set1_ps(v);
  for (std::uint64_t i = 0; i < n; i += 8) store_f16(y + i, _mm256_mul_ps(load_f16(y + i), s));
}

EDGEPLAN_FA_AVX2 void mad_f16_avx2(std::uint16_t* y, const std::uint16_t* x, std::uint64_t n, float v) {
  const __m256 s = _mm256_set1_ps(v);
  for (std::uint64_t i = 0; i < n; i += 8) store_f16(y + i, _mm256_fmadd_ps(load_f16(x + i), s, load_f16(y + i)));
}

EDGEPLAN_FA_AVX2 void narrow_avx2(const float* x, std::uint16_t* y, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; i += 8) store_f16(y + i, _mm256_loadu_ps(x + i));
}

constexpr TokenSteps kTokenAvx2{dot_f16_avx2, scale_f16_avx2, mad_f16_avx2, narrow_avx2, "AVX2"};
#endif

// Fixed pseudo-random operands in [-1, 1), the same for both kernels.
float operand(kernel_parts::Bytes& bytes) { return static_cast<float>(static_cast<int>(bytes.next()) - 128) / 128; }

void check_heads(std::uint64_t heads, std::uint64_t kv_heads, std::uint64_t head_dim, std::uint64_t tokens,
                 const char* what) {
  if (heads == 0 || kv_heads == 0 || heads % kv_heads != 0 || head_dim == 0 || head_dim % 8 != 0 || tokens == 0) {
    throw std::invalid_argument(fmt::format("{} of {} heads over {} KV heads of {} at {} tokens: heads must be a "
                                            "positive multiple of the KV heads and head_dim of 8",
                                            what, heads, kv_heads, head_dim, tokens));
  }
}

}  // namespace fa

struct FlashAttention::Data {
  std::uint64_t heads = 0, kv_heads = 0, dim = 0, tokens = 0;
  const fa::Steps* steps = &fa::kScalar;
  // On 64-byte boundaries, as ggml's buffers hold them (kernel_parts::CacheAligned).
  kernel_parts::AlignedVector<float> q, out;            // tokens x heads x dim
  kernel_parts::AlignedVector<std::uint16_t> k, v;      // tokens x kv_heads x dim, F16
  // The causal mask by offset, F16: entry tokens + j - i is 0 where query i sees key j (j <= i), -inf elsewhere, so
  // a query's keys are in a row as in llama.cpp's F16 mask, in memory linear in the prompt, not quadratic.
  kernel_parts::AlignedVector<std::uint16_t> mask;
};

FlashAttention::FlashAttention(std::uint64_t heads, std::uint64_t kv_heads, std::uint64_t head_dim,
                               std::uint64_t tokens, QuantIsa isa)
    : data_(std::make_unique<Data>()) {
  fa::check_heads(heads, kv_heads, head_dim, tokens, "flash attention");
  Data& d = *data_;
  d.heads = heads;
  d.kv_heads = kv_heads;
  d.dim = head_dim;
  d.tokens = tokens;
#if EDGEPLAN_FA_X86
  if (isa != QuantIsa::scalar && cpu_has_avx2()) d.steps = &fa::kAvx2;
  if (isa != QuantIsa::scalar && isa != QuantIsa::avx2 && cpu_has_avx2() && __builtin_cpu_supports("avx512f")) {
    d.steps = &fa::kAvx512;
  }
#else
  (void)isa;
#endif
  kernel_parts::Bytes bytes;
  const auto value = [&] { return fa::operand(bytes); };
  d.q.resize(tokens * heads * head_dim);
  for (float& x : d.q) x = value();
  d.k.resize(tokens * kv_heads * head_dim);
  d.v.resize(d.k.size());
  for (std::uint16_t& x : d.k) x = f32_to_f16(value());
  for (std::uint16_t& x : d.v) x = f32_to_f16(value());
  d.mask.assign(2 * tokens, f32_to_f16(fa::kMinusInf));
  std::fill(d.mask.begin(), d.mask.begin() + static_cast<std::ptrdiff_t>(tokens) + 1, 0);
  d.out.assign(d.q.size(), 0.0f);
}

FlashAttention::~FlashAttention() = default;
FlashAttention::FlashAttention(FlashAttention&&) noexcept = default;
FlashAttention& FlashAttention::operator=(FlashAttention&&) noexcept = default;

void FlashAttention::run(std::uint64_t head_begin, std::uint64_t head_end) {
  using namespace fa;
  const Data& d = *data_;
  const Steps& s = *d.steps;
  const std::uint64_t dim = d.dim, tokens = d.tokens;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dim));
  kernel_parts::AlignedVector<float> q(kTileQ * dim), kq(kTileQ * kTileKv), mask(kTileQ * kTileKv), vkq(kTileQ * dim);
  kernel_parts::AlignedVector<float> k(dim * kTileKv), v(kTileKv * dim), key(dim);
  float sum[kTileQ], max[kTileQ];
  for (std::uint64_t h = head_begin; h < std::min(head_end, d.heads); ++h) {
    const std::uint64_t kvh = h / (d.heads / d.kv_heads);
    for (std::uint64_t q0 = 0; q0 < tokens; q0 += kTileQ) {
      const std::uint64_t rows = std::min(kTileQ, tokens - q0);
      std::fill(q.begin(), q.end(), 0.0f);
      for (std::uint64_t t = 0; t < rows; ++t) {
        std::memcpy(q.data() + t * dim, d.q.data() + ((q0 + t) * d.heads + h) * dim, dim * sizeof(float));
      }
      std::fill(vkq.begin(), vkq.end(), 0.0f);
      std::fill(std::begin(sum), std::end(sum), 0.0f);
      std::fill(std::begin(max), std::end(max), kMinusInf);
      for (std::uint64_t k0 = 0; k0 < tokens; k0 += kTileKv) {
        const std::uint64_t keys = std::min(kTileKv, tokens - k0);
        bool skip = true;  // a tile the mask hides entirely is not computed
        std::fill(mask.begin(), mask.end(), kMinusInf);
        for (std::uint64_t t = 0; t < rows; ++t) {
          float* row = mask.data() + t * kTileKv;
          s.widen(d.mask.data() + tokens + k0 - (q0 + t), row, keys);
          skip = skip && std::all_of(row, row + keys, [](float m) { return m == kMinusInf; });
        }
        if (skip) continue;
        std::fill(k.begin(), k.end(), 0.0f);
        for (std::uint64_t j = 0; j < keys; ++j) {  // transposed: dim x keys
          s.widen(d.k.data() + ((k0 + j) * d.kv_heads + kvh) * dim, key.data(), dim);
          for (std::uint64_t c = 0; c < dim; ++c) k[c * kTileKv + j] = key[c];
        }
        std::fill(kq.begin(), kq.end(), 0.0f);
        s.gemm(kq.data(), q.data(), k.data(), kTileQ, dim, kTileKv);
        for (std::size_t i = 0; i < kq.size(); ++i) kq[i] = kq[i] * scale + mask[i];
        for (std::uint64_t t = 0; t < kTileQ; ++t) {
          float* row = kq.data() + t * kTileKv;
          const float tile_max = *std::max_element(row, row + kTileKv);
          if (tile_max == kMinusInf) {
            std::fill(row, row + kTileKv, 0.0f);
            continue;
          }
          if (tile_max > max[t]) {  // the values so far rescaled to the new max
            const float ms = std::exp(max[t] - tile_max);
            for (std::uint64_t c = 0; c < dim; ++c) vkq[t * dim + c] *= ms;
            sum[t] *= ms;
            max[t] = tile_max;
          }
          sum[t] += s.softmax(row, kTileKv, max[t]);
        }
        std::fill(v.begin(), v.end(), 0.0f);
        for (std::uint64_t j = 0; j < keys; ++j) {
          s.widen(d.v.data() + ((k0 + j) * d.kv_heads + kvh) * dim, v.data() + j * dim, dim);
        }
        s.gemm(vkq.data(), kq.data(), v.data(), kTileQ, kTileKv, dim);
      }
      for (std::uint64_t t = 0; t < rows; ++t) {
        const float inv = sum[t] == 0 ? 0 : 1 / sum[t];
        float* out = data_->out.data() + ((q0 + t) * d.heads + h) * dim;
        for (std::uint64_t c = 0; c < dim; ++c) out[c] = vkq[t * dim + c] * inv;
      }
    }
  }
}

std::uint64_t FlashAttention::rows() const { return data_->heads; }

std::string FlashAttention::kernel() const {
  return fmt::format("tiled flash attention, F16 K/V, {}x{} tiles, {}", fa::kTileQ, fa::kTileKv, data_->steps->isa);
}

std::span<const float> FlashAttention::output() const { return data_->out; }
std::span<const float> FlashAttention::queries() const { return data_->q; }
std::span<const std::uint16_t> FlashAttention::keys() const { return data_->k; }
std::span<const std::uint16_t> FlashAttention::values() const { return data_->v; }

struct TokenAttention::Data {
  std::uint64_t heads = 0, kv_heads = 0, dim = 0, context = 0, layers = 0;
  const fa::TokenSteps* steps = &fa::kTokenScalar;
  kernel_parts::AlignedVector<float> q, out;        // layers x heads x dim
  kernel_parts::AlignedVector<std::uint16_t> k, v;  // layers x context x kv_heads x dim, F16
  kernel_parts::AlignedVector<std::uint16_t> mask;  // context, F16: 0 (every cached key visible)
};

TokenAttention::TokenAttention(std::uint64_t heads, std::uint64_t kv_heads, std::uint64_t head_dim,
                               std::uint64_t context, std::uint64_t layers, QuantIsa isa)
    : data_(std::make_unique<Data>()) {
  fa::check_heads(heads, kv_heads, head_dim, context, "one-token attention");
  if (layers == 0) throw std::invalid_argument("one-token attention needs at least one layer");
  Data& d = *data_;
  d.heads = heads;
  d.kv_heads = kv_heads;
  d.dim = head_dim;
  d.context = context;
  d.layers = layers;
#if EDGEPLAN_FA_X86
  if (isa != QuantIsa::scalar && cpu_has_avx2()) d.steps = &fa::kTokenAvx2;
#else
  (void)isa;
#endif
  kernel_parts::Bytes bytes;
  d.q.resize(layers * heads * head_dim);
  for (float& x : d.q) x = fa::operand(bytes);
  d.k.resize(layers * context * kv_heads * head_dim);
  d.v.resize(d.k.size());
  for (std::uint16_t& x : d.k) x = f32_to_f16(fa::operand(bytes));
  for (std::uint16_t& x : d.v) x = f32_to_f16(fa::operand(bytes));
  d.mask.assign(context, 0);
  d.out.assign(d.q.size(), 0.0f);
}

TokenAttention::~TokenAttention() = default;
TokenAttention::TokenAttention(TokenAttention&&) noexcept = default;
TokenAttention& TokenAttention::operator=(TokenAttention&&) noexcept = default;

void TokenAttention::run(std::uint64_t begin, std::uint64_t end) {
  Data& d = *data_;
  const fa::TokenSteps& s = *d.steps;
  const std::uint64_t dim = d.dim, cell = d.kv_heads * dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dim));
  kernel_parts::AlignedVector<std::uint16_t> q16(dim), vkq16(dim);
  for (std::uint64_t row = begin; row < std::min(end, rows()); ++row) {
    const std::uint64_t layer = row / d.heads, h = row % d.heads, kvh = h / (d.heads / d.kv_heads);
    const std::uint16_t* k = d.k.data() + layer * d.context * cell + kvh * dim;
    const std::uint16_t* v = d.v.data() + layer * d.context * cell + kvh * dim;
    s.narrow(d.q.data() + row * dim, q16.data(), dim);
    std::fill(vkq16.begin(), vkq16.end(), std::uint16_t{0});
    float sum = 0, max = fa::kMinusInf;
    for (std::uint64_t c = 0; c < d.context; ++c) {
      const float mv = f16_to_f32(d.mask[c]);
      if (mv == fa::kMinusInf) continue;
      const float x = s.dot(k + c * cell, q16.data(), dim) * scale + mv;
      float ms = 1, vs = 1;
      if (x > max) {  // a new maximum: what is summed so far rescaled, this key's weight exp(0) = 1
        ms = std::exp(max - x);  // 0 at the first key (max -inf)
        max = x;
        s.scale(vkq16.data(), dim, ms);
      } else {
        vs = std::exp(x - max);
      }
      s.mad(vkq16.data(), v + c * cell, dim, vs);
      sum = sum * ms + vs;
    }
    const float inv = sum == 0 ? 0 : 1 / sum;
    float* out = d.out.data() + row * dim;
    for (std::uint64_t i = 0; i < dim; ++i) out[i] = f16_to_f32(vkq16[i]) * inv;
  }
}

std::uint64_t TokenAttention::rows() const { return data_->layers * data_->heads; }

double TokenAttention::flops() const {
  return 4.0 * static_cast<double>(data_->dim) * static_cast<double>(data_->context) * static_cast<double>(rows());
}

std::string TokenAttention::kernel() const {
  return fmt::format("one-query flash attention, F16 K/V, F16 accumulator, {}", data_->steps->isa);
}

std::span<const float> TokenAttention::output() const { return data_->out; }
std::span<const float> TokenAttention::queries() const { return data_->q; }
std::span<const std::uint16_t> TokenAttention::keys() const { return data_->k; }
std::span<const std::uint16_t> TokenAttention::values() const { return data_->v; }

}  // namespace edgeplan::io
