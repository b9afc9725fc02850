#include "edgeplan/io/quant_matmul.hpp"

// GCC 12's AVX-512 intrinsics start conversions from a self-initialised "undefined" vector, which -Wuninitialized
// and -Wmaybe-uninitialized report inside its own headers (a false positive): silenced for this file, before any
// header brings them in.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "edgeplan/core/float16.hpp"
#include "edgeplan/io/kernel_parts.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define EDGEPLAN_QDOT_X86 1
#ifdef __linux__
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

namespace edgeplan::io {
namespace qdot {

// The blocks of ggml-common.h, with the scales as stored there (fp16 as its bits, Q8_K's scale as fp32).
struct BlockQ4_0 {
  std::uint16_t d;
  std::uint8_t qs[16];  // weight i in the low nibble of byte i (i < 16), weight 16 + i in its high nibble; value - 8
};
struct BlockQ8_0 {
  std::uint16_t d;
  std::int8_t qs[32];
};
struct BlockQ4K {
  std::uint16_t d, dmin;
  std::uint8_t scales[12];  // eight 6-bit scales and eight 6-bit mins (get_scale_min)
  std::uint8_t qs[128];     // 64 weights per 32 bytes: sub-block 2j in the low nibbles, 2j + 1 in the high
};
struct BlockQ6K {
  std::uint8_t ql[128];  // the low 4 bits of the 256 6-bit weights
  std::uint8_t qh[64];   // their high 2 bits
  std::int8_t scales[16];  // one per 16 weights
  std::uint16_t d;
};
struct BlockQ8K {
  float d;
  std::int8_t qs[256];
  std::int16_t bsums[16];  // sums of 16 consecutive qs
};

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4K) == 144 && sizeof(BlockQ6K) == 210 &&
                  sizeof(BlockQ8K) == 292,
              "the blocks of ggml-common.h");

// Four tokens' Q8_K blocks of the same 256 weights interleaved, as llama.cpp's repacked K-quant GEMMs read them
// (block_q8_Kx4 of ggml-cpu/repack.h, written by ggml_quantize_mat_q8_K_4x8): the 4 scales; the quants 8 bytes of
// each token in turn (weights 8m..8m+7 of token r at 32m + 8r); the sums of 16 four of each token in turn per 64
// weights (token r's sums 4j..4j+3 at 16j + 4r).
struct BlockQ8Kx4 {
  float d[4];
  std::int8_t qs[1024];
  std::int16_t bsums[64];
};
static_assert(sizeof(BlockQ8Kx4) == 1168, "block_q8_Kx4 of ggml-cpu/repack.h");

// Four tokens' Q8_0 blocks of the same 32 weights interleaved, as llama.cpp's repacked Q4_0 GEMM reads them
// (block_q8_0x4 of ggml-cpu/repack.h, written by ggml_quantize_mat_q8_0_4x8): the 4 fp16 scales; the quants 8 bytes
// of each token in turn (weights 8m..8m+7 of token r at 32m + 8r).
struct BlockQ8_0x4 {
  std::uint16_t d[4];
  std::int8_t qs[128];
};
static_assert(sizeof(BlockQ8_0x4) == 136, "block_q8_0x4 of ggml-cpu/repack.h");

// Groups [g_begin, g_end) of 4 tokens of activations (`a`: token-major, `nb` blocks a token; Q8_0 or Q8_K) into `y`
// (BlockQ8_0x4 or BlockQ8Kx4), group g's block b at g x nb + b.
template <class Block, class Four>
void interleave_4(const Block* a, std::uint64_t nb, std::uint64_t g_begin, std::uint64_t g_end, Four* y) {
  for (std::uint64_t g = g_begin; g < g_end; ++g) {
    for (std::uint64_t b = 0; b < nb; ++b) {
      Four& out = y[g * nb + b];
      for (std::uint64_t r = 0; r < 4; ++r) {
        const Block& t = a[(4 * g + r) * nb + b];
        out.d[r] = t.d;
        for (std::size_t m = 0; m < sizeof t.qs / 8; ++m) std::memcpy(out.qs + 32 * m + 8 * r, t.qs + 8 * m, 8);
        if constexpr (std::is_same_v<Block, BlockQ8K>) {
          for (int j = 0; j < 4; ++j) std::memcpy(out.bsums + 16 * j + 4 * r, t.bsums + 4 * j, 8);
        }
      }
    }
  }
}

constexpr std::uint64_t kTileTokens = 8;  // prompt tokens one unpacked weight block is multiplied with
// A tile's tokens: kTileTokens for a matmul; 1 for a matrix-vector product (a decoded token, bench's GEMV).
constexpr std::uint64_t kGemvChunkRows = 64;  // ggml_compute_forward_mul_mat's chunk_size where nr1 == 1
constexpr std::uint64_t kR8Rows = 8;           // repacked Q4_0 (gemv_q4_0_r8): rows interleaved in one record,
constexpr std::uint64_t kR8Record = 16 + 128;  // its bytes (8 fp16 scales, 8 x 16 bytes of nibbles),
constexpr std::uint64_t kR8PromptRows = 16;    // the rows of one prompt call (two records)
constexpr std::uint64_t kR8PromptTokens = 16;  // and its tokens

enum class Isa { scalar, avx2, avx2_evex, avx512, vnni512, amx };  // what a kernel runs with (kernel_isa, matmul_isa)
// Whether a kernel runs the AVX2 code, built for AVX2 alone or for AVX-512.
constexpr bool avx2_code(Isa isa) { return isa == Isa::avx2 || isa == Isa::avx2_evex; }

// The K-quants: blocks of 256 weights, activations in Q8_K.
constexpr bool k_quant(QuantKind kind) { return kind == QuantKind::q4_k || kind == QuantKind::q6_k; }

// ggml's get_scale_min_k4: the scale and min of sub-block j (0..7) of a Q4_K block.
void scale_min(int j, const std::uint8_t* q, int& scale, int& min) {
  if (j < 4) {
    scale = q[j] & 63;
    min = q[j + 4] & 63;
  } else {
    scale = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// One weight row (nb blocks) against a tile's activation rows `stride` blocks apart: out[t] = row . token t.
using Tile = void (*)(const void* w, const void* a, std::uint64_t stride, std::uint64_t nb, float* out);

// Several weight rows against the same activation rows (the register-blocked kernels): out[i] as Tile's out for
// row w[i].
using TileRows = void (*)(const void* const* w, const void* a, std::uint64_t stride, std::uint64_t nb,
                          float* const* out);
constexpr std::uint64_t kMaxTileRows = 4;

// A register-blocked kernel, the weight rows it takes a call and the tokens of its tile (those of a call it runs
// that many at a time); no kernel where only the one-row one exists.
struct RowsTile {
  TileRows run = nullptr;
  std::uint64_t rows = 1, tokens = 1;
};

// The weights of a 32-weight block as signed integers: Q4_0's nibbles less 8, Q8_0's bytes.
int q4_0_weight(const BlockQ4_0& b, int i) { return i < 16 ? (b.qs[i] & 0xF) - 8 : (b.qs[i - 16] >> 4) - 8; }
int q8_0_weight(const BlockQ8_0& b, int i) { return b.qs[i]; }

template <class Weights, int (*weight)(const Weights&, int), std::uint64_t T>
void tile_q8_scalar(const void* wv, const void* av, std::uint64_t stride, std::uint64_t nb, float* out) {
  const auto* w = static_cast<const Weights*>(wv);
  const auto* a = static_cast<const BlockQ8_0*>(av);
  for (std::uint64_t t = 0; t < T; ++t) {
    float sum = 0;
    for (std::uint64_t b = 0; b < nb; ++b) {
      const BlockQ8_0& y = a[t * stride + b];
      int s = 0;
      for (int i = 0; i < 32; ++i) s += weight(w[b], i) * y.qs[i];
      sum += f16_to_f32(w[b].d) * f16_to_f32(y.d) * static_cast<float>(s);
    }
    out[t] = sum;
  }
}

// Q6_K's weight i (0..255) as stored, 0..63 (ggml's dequantize_row_q6_K: the value is d x scales[i / 16] x (q - 32)):
// per half of 128, quarter q of 32 takes the low (q < 2) or high nibble of ql[l] (even q) or ql[l + 32] (odd q) and
// bits 2q, 2q + 1 of qh[l].
int q6_k_weight(const BlockQ6K& b, int i) {
  const int h = i / 128, q = i % 128 / 32, l = i % 32;
  const std::uint8_t low = b.ql[64 * h + l + 32 * (q % 2)];
  return (q < 2 ? low & 0xF : low >> 4) | (((b.qh[32 * h + l] >> (2 * q)) & 3) << 4);
}

template <std::uint64_t T>
void tile_q6_k_scalar(const void* wv, const void* av, std::uint64_t stride, std::uint64_t nb, float* out) {
  const auto* w = static_cast<const BlockQ6K*>(wv);
  const auto* a = static_cast<const BlockQ8K*>(av);
  for (std::uint64_t t = 0; t < T; ++t) {
    float sum = 0;
    for (std::uint64_t b = 0; b < nb; ++b) {
      const BlockQ8K& y = a[t * stride + b];
      int isum = 0;
      for (int g = 0; g < 16; ++g) {
        int s = 0;
        for (int i = 16 * g; i < 16 * g + 16; ++i) s += (q6_k_weight(w[b], i) - 32) * y.qs[i];
        isum += w[b].scales[g] * s;
      }
      sum += f16_to_f32(w[b].d) * y.d * static_cast<float>(isum);
    }
    out[t] = sum;
  }
}

template <std::uint64_t T>
void tile_q4_k_scalar(const void* wv, const void* av, std::uint64_t stride, std::uint64_t nb, float* out) {
  const auto* w = static_cast<const BlockQ4K*>(wv);
  const auto* a = static_cast<const BlockQ8K*>(av);
  for (std::uint64_t t = 0; t < T; ++t) {
    float sum = 0;
    for (std::uint64_t b = 0; b < nb; ++b) {
      const BlockQ8K& y = a[t * stride + b];
      int isum = 0, msum = 0;
      for (int j = 0; j < 4; ++j) {
        int sc0, m0, sc1, m1;
        scale_min(2 * j, w[b].scales, sc0, m0);
        scale_min(2 * j + 1, w[b].scales, sc1, m1);
        const std::uint8_t* q = w[b].qs + 32 * j;
        int s0 = 0, s1 = 0;
        for (int l = 0; l < 32; ++l) {
          s0 += (q[l] & 0xF) * y.qs[64 * j + l];
          s1 += (q[l] >> 4) * y.qs[64 * j + 32 + l];
        }
        isum += sc0 * s0 + sc1 * s1;
        msum += m0 * (y.bsums[4 * j] + y.bsums[4 * j + 1]) + m1 * (y.bsums[4 * j + 2] + y.bsums[4 * j + 3]);
      }
      sum += f16_to_f32(w[b].d) * y.d * static_cast<float>(isum) -
             f16_to_f32(w[b].dmin) * y.d * static_cast<float>(msum);
    }
    out[t] = sum;
  }
}

// The activations' quantization, which llama.cpp's mul_mat runs on every call before its GEMM (each thread its
// share of the tokens): ggml's quantize_row_q8_0 (d = max|x| / 127, q = round(x / d)) and quantize_row_q8_K_ref
// (d = -max / 127 for the x of largest magnitude, q = min(127, nearest(x / d)), the sums of 16), which ggml runs
// as it is on x86 (ggml-quants.c; ggml-cpu/arch/x86/quants.c).
void quantize_q8_0_scalar(const float* x, BlockQ8_0* y, std::uint64_t nb) {
  for (std::uint64_t b = 0; b < nb; ++b, x += 32) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[i]));
    const float d = amax / 127, id = amax != 0 ? 127 / amax : 0;
    y[b].d = f32_to_f16(d);
    for (int i = 0; i < 32; ++i) y[b].qs[i] = static_cast<std::int8_t>(std::nearbyint(x[i] * id));
  }
}

int nearest_int(float f) {  // ggml's: round to nearest even through the float's mantissa
  const float v = f + 12582912.f;
  std::int32_t i = 0;
  std::memcpy(&i, &v, sizeof i);
  return (i & 0x007fffff) - 0x00400000;
}

void quantize_q8_k(const float* x, BlockQ8K* y, std::uint64_t nb) {
  for (std::uint64_t b = 0; b < nb; ++b, x += 256) {
    float max = 0, amax = 0;
    for (int j = 0; j < 256; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    if (amax == 0) {
      y[b] = BlockQ8K{};
      continue;
    }
    const float iscale = -127.f / max;
    for (int j = 0; j < 256; ++j) y[b].qs[j] = static_cast<std::int8_t>(std::min(127, nearest_int(iscale * x[j])));
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += y[b].qs[16 * g + i];
      y[b].bsums[g] = static_cast<std::int16_t>(sum);
    }
    y[b].d = 1 / iscale;
  }
}

#if EDGEPLAN_QDOT_X86
#define EDGEPLAN_QDOT_AVX2 __attribute__((target("avx2,fma,f16c")))
// AVX2 code built for an AVX-512 host, as llama.cpp's AVX-512 builds (the CPU backend it loads on such a host:
// skylakex, icelake, zen4, sapphirerapids) compile their AVX2 kernels: 32 vector registers and EVEX encodings. A
// kernel written once as an EDGEPLAN_QDOT_BODY is built both ways (its _avx2 and _evex entry points); Q6_K's dot
// product, which keeps its 4 masks and 8 shuffles in registers so, ran 8% faster on the EPYC of docs/accuracy.md.
#define EDGEPLAN_QDOT_EVEX __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512bw")))
#define EDGEPLAN_QDOT_BODY __attribute__((always_inline, target("avx2,fma,f16c"))) inline

// quantize_row_q8_0's AVX2 path, in two parts: the scale of a block of 32 activations (v: its four vectors of 8),
// max |x| / 127 stored as fp16 in `d`, the multiplier 127 / max returned (0 for a block of zeros); and four vectors
// of 8 each times its multiplier, rounded, as 32 bytes in order.
EDGEPLAN_QDOT_AVX2 __m256 q8_0_scale(const __m256 (&v)[4], std::uint16_t& d) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 amax = _mm256_setzero_ps();
  for (const __m256& x : v) amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, x));
  __m128 m4 = _mm_max_ps(_mm256_extractf128_ps(amax, 1), _mm256_castps256_ps128(amax));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  const float max = _mm_cvtss_f32(m4);
  d = f32_to_f16(max / 127);
  return _mm256_set1_ps(max != 0 ? 127 / max : 0);
}

EDGEPLAN_QDOT_AVX2 __m256i q8_0_bytes(const __m256 (&v)[4], const __m256 (&mul)[4]) {
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);  // undoes packs' lane interleave
  __m256i q[4];
  for (int i = 0; i < 4; ++i) {
    q[i] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[i], mul[i]), _MM_ROUND_NEAREST));
  }
  const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
  return _mm256_permutevar8x32_epi32(bytes, order);
}

EDGEPLAN_QDOT_AVX2 void quantize_q8_0_avx2(const float* x, BlockQ8_0* y, std::uint64_t nb) {
  for (std::uint64_t b = 0; b < nb; ++b, x += 32) {
    const __m256 v[4] = {_mm256_loadu_ps(x), _mm256_loadu_ps(x + 8), _mm256_loadu_ps(x + 16), _mm256_loadu_ps(x + 24)};
    const __m256 mul = q8_0_scale(v, y[b].d);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs), q8_0_bytes(v, {mul, mul, mul, mul}));
  }
}

// ggml_quantize_mat_q8_0_4x8's AVX2 path: 4 tokens (`k` activations apart) straight into `nb` interleaved blocks,
// each token's scale as quantize_row_q8_0's, then per 8 weights the 4 tokens' 8 bytes in turn.
EDGEPLAN_QDOT_AVX2 void quantize_q8_0x4_avx2(const float* x, std::uint64_t k, BlockQ8_0x4* y, std::uint64_t nb) {
  for (std::uint64_t b = 0; b < nb; ++b) {
    __m256 v[4][4], mul[4];
    for (std::uint64_t r = 0; r < 4; ++r) {
      for (int i = 0; i < 4; ++i) v[r][i] = _mm256_loadu_ps(x + r * k + 32 * b + 8 * i);
      mul[r] = q8_0_scale(v[r], y[b].d[r]);
    }
    for (int j = 0; j < 4; ++j) {
      const __m256i bytes = q8_0_bytes({v[0][j], v[1][j], v[2][j], v[3][j]}, mul);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs + 32 * j), bytes);
    }
  }
}

using kernel_parts::f16_table;
using kernel_parts::hsum;

// sum(x_i y_i) of 32 signed bytes as 8 fp32 lanes: |x| times y with x's sign (ggml's mul_sum_i8_pairs_float).
EDGEPLAN_QDOT_AVX2 __m256 dot_i8(__m256i ax, __m256i x, __m256i y) {
  const __m256i products = _mm256_maddubs_epi16(ax, _mm256_sign_epi8(y, x));
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(products, _mm256_set1_epi16(1)));
}

EDGEPLAN_QDOT_AVX2 __m256i unpack_q4_0(const BlockQ4_0& w) {  // ggml's bytes_from_nibbles_32, less 8
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.qs));
  const __m256i nibbles = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), _mm256_set1_epi8(0xF));
  return _mm256_sub_epi8(nibbles, _mm256_set1_epi8(8));
}

EDGEPLAN_QDOT_AVX2 __m256i unpack_q8_0(const BlockQ8_0& w) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs));
}

template <class Weights, __m256i (*unpack)(const Weights&), std::uint64_t T>
EDGEPLAN_QDOT_AVX2 void tile_q8_avx2(const Weights* w, const BlockQ8_0* a, std::uint64_t stride, std::uint64_t nb,
                                      float* out) {
  const float* f16 = f16_table();
  __m256 acc[T] = {};
  for (std::uint64_t b = 0; b < nb; ++b) {
    const __m256i x = unpack(w[b]);
    const __m256i ax = _mm256_sign_epi8(x, x);
    const float dx = f16[w[b].d];
    for (std::uint64_t t = 0; t < T; ++t) {
      const BlockQ8_0& y = a[t * stride + b];
      const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.qs));
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dx * f16[y.d]), dot_i8(ax, x, qy), acc[t]);
    }
  }
  for (std::uint64_t t = 0; t < T; ++t) out[t] = hsum(acc[t]);
}

template <std::uint64_t T>
EDGEPLAN_QDOT_AVX2 void tile_q4_0_avx2(const void* w, const void* a, std::uint64_t stride, std::uint64_t nb, float* out) {
  tile_q8_avx2<BlockQ4_0, unpack_q4_0, T>(static_cast<const BlockQ4_0*>(w), static_cast<const BlockQ8_0*>(a), stride, nb, out);
}

template <std::uint64_t T>
EDGEPLAN_QDOT_AVX2 void tile_q8_0_avx2(const void* w, const void* a, std::uint64_t stride, std::uint64_t nb, float* out) {
  tile_q8_avx2<BlockQ8_0, unpack_q8_0, T>(static_cast<const BlockQ8_0*>(w), static_cast<const BlockQ8_0*>(a), stride, nb, out);
}

// R weight rows (1 or 2) by a tile's activation rows with AVX-512 VNNI on 256-bit vectors (_mm256_dpbusd_epi32,
// ggml's path under __AVX512VNNI__ and __AVX512VL__). A Q4_0 prompt's tiles (weights left unrepacked: rows not a
// multiple of 8) take two rows: each token's activation block is loaded once for both, and the 16 accumulators fit
// AVX-512's 32 vector registers; Q8_0 prompts run tile4_q8_0_vnni512 below. One token takes one row per
// call, as ggml_vec_dot_q8_0_q8_0 (nrc 1) does: two rows walked side by side are two interleaved streams, which
// read from DRAM at a third of one row's speed on the Zen 5 EPYC of docs/accuracy.md.
#define EDGEPLAN_QDOT_VNNI512 __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512bw,avx512vnni")))
template <class Weights, __m256i (*unpack)(const Weights&), std::uint64_t R, std::uint64_t T>
EDGEPLAN_QDOT_VNNI512 void rows_q8_vnni512(const Weights* const (&w)[R], const BlockQ8_0* a, std::uint64_t stride,
                                           std::uint64_t nb, float* const (&out)[R]) {
  const float* f16 = f16_table();
  __m256 acc[R][T] = {};
  for (std::uint64_t b = 0; b < nb; ++b) {
    __m256i x[R], ax[R];
    float d[R];
    for (std::uint64_t r = 0; r < R; ++r) {
      x[r] = unpack(w[r][b]);
      ax[r] = _mm256_abs_epi8(x[r]);
      d[r] = f16[w[r][b].d];
    }
    for (std::uint64_t t = 0; t < T; ++t) {
      const BlockQ8_0& y = a[t * stride + b];
      const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.qs));
      const float dy = f16[y.d];
      for (std::uint64_t r = 0; r < R; ++r) {
        const __m256i p = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ax[r], _mm256_sign_epi8(qy, x[r]));
        acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(d[r] * dy), _mm256_cvtepi32_ps(p), acc[r][t]);
      }
    }
  }
  for (std::uint64_t r = 0; r < R; ++r) {
    for (std::uint64_t t = 0; t < T; ++t) out[r][t] = hsum(acc[r][t]);
  }
}

template <class Weights, __m256i (*unpack)(const Weights&), std::uint64_t T>
EDGEPLAN_QDOT_VNNI512 void tile_q8_vnni512(const void* w, const void* a, std::uint64_t stride, std::uint64_t nb,
                                           float* out) {
  const Weights* const rows[1] = {static_cast<const Weights*>(w)};
  float* const outs[1] = {out};
  rows_q8_vnni512<Weights, unpack, 1, T>(rows, static_cast<const BlockQ8_0*>(a), stride, nb, outs);
}

template <class Weights, __m256i (*unpack)(const Weights&), std::uint64_t T>
EDGEPLAN_QDOT_VNNI512 void tile2_q8_vnni512(const void* const* w, const void* a, std::uint64_t stride,
                                            std::uint64_t nb, float* const* out) {
  const Weights* const rows[2] = {static_cast<const Weights*>(w[0]), static_cast<const Weights*>(w[1])};
  float* const outs[2] = {out[0], out[1]};
  rows_q8_vnni512<Weights, unpack, 2, T>(rows, static_cast<const BlockQ8_0*>(a), stride, nb, outs);
}

// Q8_0 prompts as llama.cpp runs them on x86 (llamafile's tinyBLAS_Q0_AVX::gemm4xN<4> in ggml-cpu/llamafile/sgemm.cpp,
// where updot is vpdpbusd under AVX-512 VNNI): tiles of 4 weight rows by 4 tokens, the tile's T tokens 4 at a time.
// Per block, the 4 rows' scales widen together (one vcvtph2ps), each token's comes from ggml's table, and one vector
// multiply and four lane shuffles give the 16 scale products. The token's scale by the table is what llama.cpp's
// build runs (unhalf is GGML_CPU_FP16_TO_FP32): the same tile widening it by _cvtsh_ss read 102-104 GFLOPS on one
// thread of the AMD EPYC of docs/accuracy.md (2,816 x 1,024 x 512), by the table 116-118, llama.cpp's own 118.
template <std::uint64_t T>
EDGEPLAN_QDOT_VNNI512 void tile4_q8_0_vnni512(const void* const* wv, const void* av, std::uint64_t stride,
                                              std::uint64_t nb, float* const* out) {
  static_assert(T % 4 == 0);
  const float* f16 = f16_table();
  const BlockQ8_0* w[4];
  for (int r = 0; r < 4; ++r) w[r] = static_cast<const BlockQ8_0*>(wv[r]);
  const auto* a = static_cast<const BlockQ8_0*>(av);
  for (std::uint64_t t0 = 0; t0 < T; t0 += 4) {
    __m256 acc[4][4] = {};  // [token][row]
    for (std::uint64_t b = 0; b < nb; ++b) {
      const std::uint64_t halves = std::uint64_t{w[3][b].d} << 48 | std::uint64_t{w[2][b].d} << 32 |
                                   std::uint64_t{w[1][b].d} << 16 | w[0][b].d;
      const __m128 dw = _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(halves)));
      __m256i x[4], ax[4];
      for (int r = 0; r < 4; ++r) {
        x[r] = unpack_q8_0(w[r][b]);
        ax[r] = _mm256_sign_epi8(x[r], x[r]);
      }
      for (std::uint64_t j = 0; j < 4; ++j) {
        const BlockQ8_0& y = a[(t0 + j) * stride + b];
        const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.qs));
        __m256 d = _mm256_castps128_ps256(_mm_mul_ps(dw, _mm_set1_ps(f16[y.d])));
        d = _mm256_permute2f128_ps(d, d, 0);
        const __m256 dr[4] = {_mm256_shuffle_ps(d, d, 0), _mm256_shuffle_ps(d, d, 85), _mm256_shuffle_ps(d, d, 170),
                              _mm256_shuffle_ps(d, d, 255)};
        for (int r = 0; r < 4; ++r) {
          const __m256i p = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ax[r], _mm256_sign_epi8(qy, x[r]));
          acc[j][r] = _mm256_fmadd_ps(dr[r], _mm256_cvtepi32_ps(p), acc[j][r]);
        }
      }
    }
    for (std::uint64_t j = 0; j < 4; ++j) {
      for (int r = 0; r < 4; ++r) out[r][t0 + j] = hsum(acc[j][r]);
    }
  }
}

// Q4_0 as llama.cpp repacks it on x86 without AMX (the CPU_REPACK buffer: make_block_q4_0x8 of ggml-cpu/repack.cpp,
// and gemv_q4_b32_8x8_q8_0_lut_avx / the AVX-512 path of gemm_q4_b32_8x8_q8_0_lut_avx in arch/x86/repack.cpp). A
// record holds 8 rows x one block (block_q4_0x8, 144 bytes): the 8 fp16 scales, then 16 chunks of 8 bytes, chunk
// i being bytes 8 x (i / 8).. of row i % 8, xor 0x88 so that a byte shuffle of a 16-entry table sign-extends each
// nibble (low nibble of byte j: weight j; high: weight j + 16). A vector of 32 bytes thus holds 8 weights of 4 rows;
// a blend of two such vectors, one with its 32-bit lanes swapped in pairs, puts 4 weights of each of the 8 rows in
// its 8 lanes (rows in the order 0 4 1 5 2 6 3 7), whose dot product with 4 activation bytes broadcast is that
// row's, so the 8 rows' sums sit in one vector with no horizontal sum, put in order once at the end. The int8
// products are ggml's mul_sum_i8_pairs (|x| with y given x's sign, then vpdpbusd): one token takes the sign of the
// weights on 256-bit vectors. A prompt (gemm_q4_0_r8, below) runs 16 rows by 16 tokens, its activations 4 tokens a
// block, as ggml's AVX-512 gemm does. This is edgeplan's own code of that data movement and arithmetic.

EDGEPLAN_QDOT_VNNI512 __m256i sign_extend_table256() {
  return _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6,
                          -5, -4, -3, -2, -1);
}

// The 8 fp16 scales a record starts with (Q4_K: its d) as fp32 in the lanes' row order 0 4 1 5 2 6 3 7.
EDGEPLAN_QDOT_AVX2 __m256 r8_scales(const std::uint8_t* record) {
  const __m128i order = _mm_set_epi8(15, 14, 7, 6, 13, 12, 5, 4, 11, 10, 3, 2, 9, 8, 1, 0);
  return _mm256_cvtph_ps(_mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(record)), order));
}

// Weights 8p..8p+7 of 8 rows from the vectors holding rows 0-3 (r03) and 4-7 (r47) of them, 8 bytes a row: w[0]
// weights 8p..8p+3, w[1] 8p+4..8p+7, 4 of each row in a 32-bit lane, rows in the order 0 4 1 5 2 6 3 7.
EDGEPLAN_QDOT_AVX2 void r8_rows(__m256i r03, __m256i r47, __m256i (&w)[2]) {
  w[0] = _mm256_blend_epi32(r03, _mm256_shuffle_epi32(r47, 177), 170);
  w[1] = _mm256_blend_epi32(_mm256_shuffle_epi32(r03, 177), r47, 170);
}

// The activations of weights 8p..8p+7 in the lanes of r8_rows' two vectors, from the 16 of them around them
// (broadcast to both halves): bytes 0-3 and 4-7 for even p, 8-11 and 12-15 for odd.
EDGEPLAN_QDOT_AVX2 void r8_quads(__m256i sixteen, int p, __m256i (&y)[2]) {
  y[0] = p % 2 == 0 ? _mm256_shuffle_epi32(sixteen, 0) : _mm256_shuffle_epi32(sixteen, 170);
  y[1] = p % 2 == 0 ? _mm256_shuffle_epi32(sixteen, 85) : _mm256_shuffle_epi32(sixteen, 255);
}

// The 8 rows' sums from the lanes' order 0 4 1 5 2 6 3 7 back into row order.
EDGEPLAN_QDOT_AVX2 __m256 r8_in_order(__m256 lanes) {
  return _mm256_permutevar8x32_ps(lanes, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
}

// Two 256-bit halves as one 512-bit vector: the 8 rows of two records side by side.
EDGEPLAN_QDOT_VNNI512 __m512i join(__m256i lo, __m256i hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
EDGEPLAN_QDOT_VNNI512 __m512 join(__m256 lo, __m256 hi) {
  return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
}

// A token's 16 sums in row order stored, 8 of them where the second record is the first again (w1 == w0: a group
// left alone).
EDGEPLAN_QDOT_VNNI512 void r8_store(float* out, __m512 rows, bool two) {
  _mm512_mask_storeu_ps(out, two ? 0xFFFF : 0x00FF, rows);
}

// The 8 unpacked weight vectors of a record's 32-byte quarter q (0..3) pair: x[0..3] the low nibbles of quarters
// 0..3 (rows 0-3 weights 0-7, rows 4-7 weights 0-7, rows 0-3 weights 8-15, rows 4-7 weights 8-15), x[4..7] the
// high nibbles (weights 16-31 likewise).
EDGEPLAN_QDOT_VNNI512 void r8_unpack(const std::uint8_t* record, __m256i (&x)[8]) {
  const __m256i table = sign_extend_table256(), low = _mm256_set1_epi8(0xF);
  for (int q = 0; q < 4; ++q) {
    const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(record + 16 + 32 * q));
    x[q] = _mm256_shuffle_epi8(table, _mm256_and_si256(raw, low));
    x[4 + q] = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(raw, 4), low));
  }
}

// One token by the 8 rows of `nb` records from `w`: out[0..7].
EDGEPLAN_QDOT_VNNI512 void gemv_q4_0_r8(const std::uint8_t* w, const BlockQ8_0* a, std::uint64_t nb, float* out) {
  const float* f16 = f16_table();
  __m256 acc = _mm256_setzero_ps();
  for (std::uint64_t b = 0; b < nb; ++b, w += kR8Record) {
    __m256i x[8];
    r8_unpack(w, x);
    const auto* act = reinterpret_cast<const __m128i*>(a[b].qs);
    const __m256i half[2] = {_mm256_broadcastsi128_si256(_mm_loadu_si128(act)),
                             _mm256_broadcastsi128_si256(_mm_loadu_si128(act + 1))};
    __m256i iacc = _mm256_setzero_si256();
    for (int p = 0; p < 4; ++p) {  // weights 8p..8p+7: rows 0-3 in x[2p'], rows 4-7 in x[2p' + 1]
      __m256i wv[2], yv[2];
      r8_rows(x[p % 2 * 2 + p / 2 * 4], x[p % 2 * 2 + p / 2 * 4 + 1], wv);
      r8_quads(half[p / 2], p, yv);
      for (int i = 0; i < 2; ++i) {
        iacc = _mm256_dpbusd_epi32(iacc, _mm256_sign_epi8(wv[i], wv[i]), _mm256_sign_epi8(yv[i], wv[i]));
      }
    }
    const __m256 scales = _mm256_mul_ps(r8_scales(w), _mm256_set1_ps(f16[a[b].d]));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(iacc), scales, acc);
  }
  _mm256_storeu_ps(out, r8_in_order(acc));
}

// Q4_K for one token as llama.cpp repacks and runs it on x86 without AMX (make_block_q4_Kx8 with an interleave of 8,
// ggml_gemv_q4_K_8x8_q8_K's AVX2 code): a record of 8 rows x 256 weights (1152 bytes, block_q4_Kx8) holds the 8
// rows' d and dmin, for each of the 8 sub-blocks the 8 rows' 6-bit scales and mins packed in 12 bytes as a Q4_K
// block packs its own (get_scale_min), then the nibbles interleaved 8 bytes at a time as Q4_0's records. Per pair
// of sub-blocks: the 8 rows' scales and mins unpacked from their 12 bytes each (the kmask shifts), the nibbles
// (unsigned) by the activations with _mm256_maddubs_epi16, 8 products summed in int16, weighted by the rows'
// scales with _mm256_madd_epi16, and the mins taken out through the activations' sums per 32.
constexpr std::uint64_t kR8KRecord = 16 + 16 + 96 + 1024;

// The 8 rows' scales (bytes 0..7) and mins (8..15) of sub-block j from its 12 packed bytes.
__m128i r8k_scales_mins(const std::uint8_t* packed) {
  constexpr std::uint32_t kmask1 = 0x3f3f3f3f, kmask2 = 0x0f0f0f0f, kmask3 = 0x03030303;
  std::uint32_t u[4];
  std::memcpy(u, packed, 12);
  u[3] = ((u[2] >> 4) & kmask2) | (((u[1] >> 6) & kmask3) << 4);
  const std::uint32_t mins_low = u[1] & kmask1;
  u[1] = (u[2] & kmask2) | (((u[0] >> 6) & kmask3) << 4);
  u[2] = mins_low;
  u[0] &= kmask1;
  return _mm_set_epi32(static_cast<int>(u[3]), static_cast<int>(u[2]), static_cast<int>(u[1]), static_cast<int>(u[0]));
}

// A sub-block's 8 scales (from r8k_scales_mins) as int16, each twice, in the lanes' row order 0 4 1 5 2 6 3 7: the
// weights of _mm256_madd_epi16 over the rows' pair sums.
EDGEPLAN_QDOT_AVX2 __m256i r8k_scales16(__m128i scales_mins) {
  const __m128i pairs = _mm_set_epi8(7, 7, 3, 3, 6, 6, 2, 2, 5, 5, 1, 1, 4, 4, 0, 0);
  return _mm256_cvtepu8_epi16(_mm_shuffle_epi8(scales_mins, pairs));
}

// Two sub-blocks' 8 mins as int16 pairs in row order (row r: its min of the first, then of the second): the
// weights of _mm256_madd_epi16 over the activations' two sums per 32.
EDGEPLAN_QDOT_AVX2 __m256i r8k_mins16(__m128i first, __m128i second) {
  return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(_mm_shuffle_epi32(first, 78), _mm_shuffle_epi32(second, 78)));
}

// The 8 fp16 at `p` as fp32, in order (a Q4_K record's d at 0 and dmin at 16).
EDGEPLAN_QDOT_AVX2 __m256 fp16x8(const std::uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// One token by the 8 rows of `nb` Q4_K records from `w`: out[0..7].
EDGEPLAN_QDOT_BODY void gemv_q4_k_r8(const std::uint8_t* w, const BlockQ8K* a, std::uint64_t nb, float* out) {
  const __m256i low = _mm256_set1_epi8(0xF);
  __m256 acc = _mm256_setzero_ps(), acc_min = _mm256_setzero_ps();
  for (std::uint64_t b = 0; b < nb; ++b, w += kR8KRecord) {
    const __m256 dy = _mm256_set1_ps(a[b].d);
    const __m256 d = r8_scales(w), dmin = fp16x8(w + 16);
    const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[b].bsums));
    const __m128i sums32 = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
    __m256i sums = _mm256_broadcastsi128_si256(sums32);  // the activations' sums per 32, two sub-blocks a lane
    __m256i iacc = _mm256_setzero_si256(), iacc_min = _mm256_setzero_si256();
    for (int sb = 0; sb < 4; ++sb) {  // sub-blocks 2sb (low nibbles) and 2sb + 1 (high)
      const __m128i sm[2] = {r8k_scales_mins(w + 32 + 24 * sb), r8k_scales_mins(w + 32 + 24 * sb + 12)};
      const std::uint8_t* q = w + 128 + 256 * sb;
      __m256i x[2][8];
      for (int v = 0; v < 8; ++v) {
        const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32 * v));
        x[0][v] = _mm256_and_si256(raw, low);
        x[1][v] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low);
      }
      for (int h = 0; h < 2; ++h) {
        const std::int8_t* y = a[b].qs + 64 * sb + 32 * h;
        const __m256i half[2] = {
            _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y))),
            _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y + 16)))};
        __m256i pairs = _mm256_setzero_si256();
        for (int p = 0; p < 4; ++p) {  // weights 8p..8p+7 of the sub-block: rows 0-3 in x[h][2p], 4-7 in x[h][2p + 1]
          __m256i wv[2], yv[2];
          r8_rows(x[h][2 * p], x[h][2 * p + 1], wv);
          r8_quads(half[p / 2], p, yv);
          for (int i = 0; i < 2; ++i) pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(wv[i], yv[i]));
        }
        iacc = _mm256_add_epi32(iacc, _mm256_madd_epi16(pairs, r8k_scales16(sm[h])));
      }
      const __m256i mins = _mm256_madd_epi16(_mm256_shuffle_epi32(sums, 0), r8k_mins16(sm[0], sm[1]));
      iacc_min = _mm256_add_epi32(iacc_min, mins);
      sums = _mm256_bsrli_epi128(sums, 4);
    }
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(iacc), _mm256_mul_ps(d, dy), acc);
    acc_min = _mm256_fmadd_ps(_mm256_cvtepi32_ps(iacc_min), _mm256_mul_ps(dmin, dy), acc_min);
  }
  _mm256_storeu_ps(out, _mm256_sub_ps(r8_in_order(acc), acc_min));
}
EDGEPLAN_QDOT_AVX2 void gemv_q4_k_r8_avx2(const std::uint8_t* w, const BlockQ8K* a, std::uint64_t nb, float* out) {
  gemv_q4_k_r8(w, a, nb, out);
}
EDGEPLAN_QDOT_EVEX void gemv_q4_k_r8_evex(const std::uint8_t* w, const BlockQ8K* a, std::uint64_t nb, float* out) {
  gemv_q4_k_r8(w, a, nb, out);
}

// The data movement the repacked prompt GEMMs share (gemm_q4_k_r8, gemm_q4_0_r8). Two records' 8-byte chunks of
// weights at offset `at` (rows 0-3 then 4-7 of each, 64 bytes): c = 0 rows 0 1 4 5 8 9 12 13, c = 1 rows 2 3 6 7
// 10 11 14 15.
EDGEPLAN_QDOT_VNNI512 void r8_row_pairs(const std::uint8_t* const (&rec)[2], std::uint64_t at, __m512i (&raw)[2]) {
  const __m256i swap = _mm256_set_epi32(3, 2, 1, 0, 7, 6, 5, 4);  // the two 128-bit halves exchanged
  __m256i half[2][2];                                             // [record][c]
  for (int r = 0; r < 2; ++r) {
    const __m256i r03 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec[r] + at));
    const __m256i r47 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec[r] + at + 32));
    half[r][0] = _mm256_blend_epi32(r03, _mm256_permutevar8x32_epi32(r47, swap), 240);
    half[r][1] = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(r03, swap), r47, 240);
  }
  for (int c = 0; c < 2; ++c) raw[c] = join(half[0][c], half[1][c]);
}

// A row pair's 8 bytes in the two shuffle patterns: s = 0 their first 4, s = 1 their last 4, each twice in a 128-bit
// lane (rows A B A B).
EDGEPLAN_QDOT_VNNI512 void r8_weight_patterns(__m512i bytes, __m512i (&w)[2]) {
  w[0] = _mm512_shuffle_epi32(bytes, static_cast<_MM_PERM_ENUM>(136));
  w[1] = _mm512_shuffle_epi32(bytes, static_cast<_MM_PERM_ENUM>(221));
}

// The activations of 4 interleaved tokens' 8 weights (32 bytes at q) in the lanes of r8_weight_patterns' vectors:
// x[p][s] tokens 2p and 2p + 1 (A A B B in a 128-bit lane).
EDGEPLAN_QDOT_VNNI512 void r8_token_patterns(const std::int8_t* q, __m512i (&x)[2][2]) {
  const __m256i four = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
  const __m256i pair[2] = {_mm256_permute2f128_si256(four, four, 0), _mm256_permute2f128_si256(four, four, 17)};
  for (int p = 0; p < 2; ++p) {
    const __m512i both = join(pair[p], pair[p]);
    x[p][0] = _mm512_shuffle_epi32(both, static_cast<_MM_PERM_ENUM>(160));
    x[p][1] = _mm512_shuffle_epi32(both, static_cast<_MM_PERM_ENUM>(245));
  }
}

// Tokens 2p and 2p + 1's 16 rows in order from the sums over c = 0 and c = 1 (one row by one token a lane): lanes
// 2-3 of each 128 bits from the other vector.
EDGEPLAN_QDOT_VNNI512 void r8_token_rows(const __m512i (&sums)[2], __m512i (&rows)[2]) {
  const auto cdab = static_cast<_MM_PERM_ENUM>(78);
  rows[0] = _mm512_mask_blend_epi32(0xCCCC, sums[0], _mm512_shuffle_epi32(sums[1], cdab));
  rows[1] = _mm512_mask_blend_epi32(0xCCCC, _mm512_shuffle_epi32(sums[0], cdab), sums[1]);
}

// Each of 4 values (repeated in every 128-bit lane of v) in every lane.
EDGEPLAN_QDOT_VNNI512 void r8_each(__m512 v, __m512 (&each)[4]) {
  each[0] = _mm512_shuffle_ps(v, v, 0);
  each[1] = _mm512_shuffle_ps(v, v, 85);
  each[2] = _mm512_shuffle_ps(v, v, 170);
  each[3] = _mm512_shuffle_ps(v, v, 255);
}

// A prompt of Q4_K on repacked records as the AVX-512 path of llama.cpp's ggml_gemm_q4_K_8x8_q8_K runs it (no VNNI:
// _mm512_maddubs_epi16): 16 rows (two records side by side) by 4 x Groups tokens (Groups interleaved groups of 4, `nb`
// blocks a group: 4 in its main loop, 1 in the loop over the tokens left), 8 x Groups fp32 accumulators (a token's 16
// rows, and their mins apart). Per pair of sub-blocks, each record's 8-byte
// chunks of rows 0 1 4 5 and 2 3 6 7 are put side by side, the nibbles masked out, and their 4-byte halves spread
// into two shuffle patterns; per group of 4 tokens the activations are spread likewise, each 32-bit lane then holding
// one row by one token, the int16 pair sums weighted by the rows' scales with _mm512_madd_epi16, blended into a
// token's 16 rows in order, and the mins taken out through the activations' sums per 32. The same data movement as
// ggml's (which keeps the 16 weight vectors' two patterns, 48 vectors, across the 4 groups), in edgeplan's own code.
template <int Groups>
EDGEPLAN_QDOT_VNNI512 void gemm_q4_k_r8(const std::uint8_t* w0, const std::uint8_t* w1, const BlockQ8Kx4* a,
                                        std::uint64_t nb, float* out, std::uint64_t ldc) {
  const __m512i low = _mm512_set1_epi8(0xF);
  __m512 acc[4 * Groups], acc_min[4 * Groups];
  for (int t = 0; t < 4 * Groups; ++t) acc[t] = acc_min[t] = _mm512_setzero_ps();
  for (std::uint64_t b = 0; b < nb; ++b) {
    const std::uint8_t* const rec[2] = {w0 + b * kR8KRecord, w1 + b * kR8KRecord};
    const __m512 d = join(fp16x8(rec[0]), fp16x8(rec[1]));
    const __m512 dmin = join(fp16x8(rec[0] + 16), fp16x8(rec[1] + 16));
    for (int sb = 0; sb < 4; ++sb) {  // sub-blocks 2sb (low nibbles, h = 0) and 2sb + 1 (high, h = 1)
      // w[h][v][c][s]: weights 8v + 4s .. 8v + 4s + 3 of sub-block 2sb + h, rows c of r8_row_pairs.
      __m512i w[2][4][2][2];
      for (int v = 0; v < 4; ++v) {
        __m512i raw[2];
        r8_row_pairs(rec, 128 + 256 * sb + 64 * v, raw);
        for (int c = 0; c < 2; ++c) {
          r8_weight_patterns(_mm512_and_si512(raw[c], low), w[0][v][c]);
          r8_weight_patterns(_mm512_and_si512(_mm512_srli_epi16(raw[c], 4), low), w[1][v][c]);
        }
      }
      // The scales of sub-blocks 2sb and 2sb + 1 (rows 0-7 of record 0, then of record 1), each twice as int16, in
      // the lanes of w's c = 0 and c = 1; the mins of both sub-blocks side by side, rows in order.
      __m256i sm[2];
      for (int h = 0; h < 2; ++h) {
        sm[h] = _mm256_set_m128i(r8k_scales_mins(rec[1] + 32 + 24 * sb + 12 * h),
                                 r8k_scales_mins(rec[0] + 32 + 24 * sb + 12 * h));
      }
      __m512i scale[2][2];
      for (int h = 0; h < 2; ++h) {
        const __m512i twice = _mm512_cvtepu8_epi16(_mm256_unpacklo_epi8(sm[h], sm[h]));
        scale[h][0] = _mm512_shuffle_epi32(twice, static_cast<_MM_PERM_ENUM>(68));
        scale[h][1] = _mm512_shuffle_epi32(twice, static_cast<_MM_PERM_ENUM>(238));
      }
      const __m512i mins = _mm512_cvtepu8_epi16(
          _mm256_unpacklo_epi8(_mm256_shuffle_epi32(sm[0], 78), _mm256_shuffle_epi32(sm[1], 78)));
      for (int g = 0; g < Groups; ++g) {  // tokens 4g..4g+3
        const BlockQ8Kx4& y = a[g * nb + b];
        __m512i rows[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                           _mm512_setzero_si512()};
        for (int h = 0; h < 2; ++h) {
          __m512i x[4][2][2];  // x[v][p][s]: the activations of w[h][v][.][s] for tokens 2p and 2p + 1
          for (int v = 0; v < 4; ++v) r8_token_patterns(y.qs + 256 * sb + 128 * h + 32 * v, x[v]);
          for (int p = 0; p < 2; ++p) {
            __m512i sums[2];  // [c]: one row by one token a 32-bit lane
            for (int c = 0; c < 2; ++c) {
              __m512i pattern[2];
              for (int s = 0; s < 2; ++s) {
                pattern[s] = _mm512_maddubs_epi16(w[h][3][c][s], x[3][p][s]);
                for (int v = 2; v >= 0; --v) {
                  pattern[s] = _mm512_add_epi16(pattern[s], _mm512_maddubs_epi16(w[h][v][c][s], x[v][p][s]));
                }
              }
              sums[c] = _mm512_madd_epi16(_mm512_add_epi16(pattern[0], pattern[1]), scale[h][c]);
            }
            __m512i pair[2];
            r8_token_rows(sums, pair);
            rows[2 * p] = _mm512_add_epi32(rows[2 * p], pair[0]);
            rows[2 * p + 1] = _mm512_add_epi32(rows[2 * p + 1], pair[1]);
          }
        }
        const __m512 dy = _mm512_broadcast_f32x4(_mm_loadu_ps(y.d));
        const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.bsums + 16 * sb));
        const __m512i sums32 = _mm512_broadcast_i32x4(
            _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1)));
        __m512 dy_t[4];
        r8_each(dy, dy_t);
        const __m512i sums_t[4] = {_mm512_shuffle_epi32(sums32, static_cast<_MM_PERM_ENUM>(0)),
                                   _mm512_shuffle_epi32(sums32, static_cast<_MM_PERM_ENUM>(85)),
                                   _mm512_shuffle_epi32(sums32, static_cast<_MM_PERM_ENUM>(170)),
                                   _mm512_shuffle_epi32(sums32, static_cast<_MM_PERM_ENUM>(255))};
        for (int t = 0; t < 4; ++t) {
          acc[4 * g + t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(rows[t]), _mm512_mul_ps(d, dy_t[t]), acc[4 * g + t]);
          acc_min[4 * g + t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_madd_epi16(sums_t[t], mins)),
                                               _mm512_mul_ps(dmin, dy_t[t]), acc_min[4 * g + t]);
        }
      }
    }
  }
  for (int t = 0; t < 4 * Groups; ++t) r8_store(out + t * ldc, _mm512_sub_ps(acc[t], acc_min[t]), w1 != w0);
}

// A prompt of Q4_0 on repacked records as the AVX-512 path of llama.cpp's gemm_q4_b32_8x8_q8_0_lut_avx runs it: 16
// rows (two records side by side) by 16 tokens (4 interleaved groups of 4, `nb` blocks a group), 16 fp32
// accumulators (a token's 16 rows). Per block, each record's 8-byte chunks of rows 0 1 4 5 and 2 3 6 7 are put side
// by side, the nibbles sign-extended through the table and their 4-byte halves spread into two shuffle patterns; per
// group of 4 tokens the activations are spread likewise (tokens 0 1 and 2 3 in a 128-bit lane), so that each 32-bit
// lane holds one row by one token; the int8 products are mul_sum_i8_pairs on 512 bits (|x| of the activations, their
// sign on the weights by mask, vpdpbusd), four chained per pattern, and the patterns blended into a token's 16 rows
// in order. The same data movement and arithmetic as ggml's, in edgeplan's own code.
EDGEPLAN_QDOT_VNNI512 void gemm_q4_0_r8(const std::uint8_t* w0, const std::uint8_t* w1, const BlockQ8_0x4* a,
                                        std::uint64_t nb, float* out, std::uint64_t ldc) {
  const __m512i low = _mm512_set1_epi8(0xF), zero = _mm512_setzero_si512();
  const __m512i table = join(sign_extend_table256(), sign_extend_table256());
  __m512 acc[kR8PromptTokens];
  for (__m512& v : acc) v = _mm512_setzero_ps();
  for (std::uint64_t b = 0; b < nb; ++b) {
    const std::uint8_t* const rec[2] = {w0 + b * kR8Record, w1 + b * kR8Record};
    // w[v][c][s]: weights 8v + 4s .. 8v + 4s + 3 (v = 2h + q: nibbles h of bytes 8q..8q + 7), rows c of r8_row_pairs.
    __m512i w[4][2][2];
    for (int q = 0; q < 2; ++q) {
      __m512i raw[2];
      r8_row_pairs(rec, 16 + 64 * q, raw);
      for (int c = 0; c < 2; ++c) {
        const __m512i high = _mm512_and_si512(_mm512_srli_epi16(raw[c], 4), low);
        r8_weight_patterns(_mm512_shuffle_epi8(table, _mm512_and_si512(raw[c], low)), w[q][c]);
        r8_weight_patterns(_mm512_shuffle_epi8(table, high), w[2 + q][c]);
      }
    }
    const __m512 scales = join(fp16x8(rec[0]), fp16x8(rec[1]));
    for (std::uint64_t g = 0; g < kR8PromptTokens / 4; ++g) {  // tokens 4g..4g+3
      const BlockQ8_0x4& y = a[g * nb + b];
      __m512i x[4][2][2];  // x[v][p][s]: the activations of w[v][.][s] for tokens 2p and 2p + 1
      for (int v = 0; v < 4; ++v) r8_token_patterns(y.qs + 32 * v, x[v]);
      __m512i rows[2][2];  // [p]: tokens 2p and 2p + 1, rows in order
      for (int p = 0; p < 2; ++p) {
        __m512i sums[2];  // [c]: one row by one token a 32-bit lane
        for (int c = 0; c < 2; ++c) {
          __m512i pattern[2];
          for (int s = 0; s < 2; ++s) {
            pattern[s] = zero;
            for (int v = 3; v >= 0; --v) {
              const __m512i signed_w = _mm512_mask_sub_epi8(w[v][c][s], _mm512_movepi8_mask(x[v][p][s]), zero,
                                                            w[v][c][s]);
              pattern[s] = _mm512_dpbusd_epi32(pattern[s], _mm512_abs_epi8(x[v][p][s]), signed_w);
            }
          }
          sums[c] = _mm512_add_epi32(pattern[0], pattern[1]);
        }
        r8_token_rows(sums, rows[p]);
      }
      // The 4 tokens' scales in every 128-bit lane, then each in every lane.
      __m512 dy_t[4];
      r8_each(_mm512_cvtph_ps(_mm256_broadcastq_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(y.d)))), dy_t);
      for (int t = 0; t < 4; ++t) {
        const __m512 sum = _mm512_cvtepi32_ps(rows[t / 2][t % 2]);
        acc[4 * g + t] = _mm512_fmadd_ps(sum, _mm512_mul_ps(scales, dy_t[t]), acc[4 * g + t]);
      }
    }
  }
  for (std::uint64_t t = 0; t < kR8PromptTokens; ++t) r8_store(out + t * ldc, acc[t], w1 != w0);
}

// Q4_K: the nibbles are unsigned (0..15), so _mm256_maddubs_epi16 takes them as they are; each sub-block's pair
// sums are weighted by its scale with _mm256_madd_epi16, the mins subtracted through the activations' bsums, as
// ggml's AVX2 ggml_vec_dot_q4_K_q8_K does: _mm256_madd_epi16 of the 16 bsums by the mins (each twice), kept in fp32
// lanes per token and summed once at the end.
template <std::uint64_t T>
EDGEPLAN_QDOT_BODY void tile_q4_k(const void* wv, const void* av, std::uint64_t stride, std::uint64_t nb, float* out) {
  const auto* w = static_cast<const BlockQ4K*>(wv);
  const auto* a = static_cast<const BlockQ8K*>(av);
  const float* f16 = f16_table();
  __m256 acc[T] = {};
  __m256 mins[T] = {};
  const __m256i low = _mm256_set1_epi8(0xF);
  for (std::uint64_t b = 0; b < nb; ++b) {
    int sc[8], mn[8];
    for (int j = 0; j < 8; ++j) scale_min(j, w[b].scales, sc[j], mn[j]);
    alignas(32) std::int16_t mn16[16];
    for (int j = 0; j < 16; ++j) mn16[j] = static_cast<std::int16_t>(mn[j / 2]);
    const __m256i min_pairs = _mm256_load_si256(reinterpret_cast<const __m256i*>(mn16));
    __m256i isum[T] = {};
    for (int j = 0; j < 4; ++j) {
      const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qs + 32 * j));
      const __m256i lo = _mm256_and_si256(raw, low), hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low);
      const __m256i s0 = _mm256_set1_epi16(static_cast<short>(sc[2 * j]));
      const __m256i s1 = _mm256_set1_epi16(static_cast<short>(sc[2 * j + 1]));
      for (std::uint64_t t = 0; t < T; ++t) {
        const std::int8_t* y = a[t * stride + b].qs + 64 * j;
        const __m256i p0 = _mm256_madd_epi16(
            _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y))), s0);
        const __m256i p1 = _mm256_madd_epi16(
            _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + 32))), s1);
        isum[t] = _mm256_add_epi32(isum[t], _mm256_add_epi32(p0, p1));
      }
    }
    const float d = f16[w[b].d], dmin = f16[w[b].dmin];
    for (std::uint64_t t = 0; t < T; ++t) {
      const BlockQ8K& y = a[t * stride + b];
      const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.bsums));
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * y.d), _mm256_cvtepi32_ps(isum[t]), acc[t]);
      mins[t] = _mm256_fmadd_ps(_mm256_set1_ps(dmin * y.d), _mm256_cvtepi32_ps(_mm256_madd_epi16(bsums, min_pairs)),
                                mins[t]);
    }
  }
  for (std::uint64_t t = 0; t < T; ++t) out[t] = hsum(acc[t]) - hsum(mins[t]);
}
template <std::uint64_t T>
EDGEPLAN_QDOT_AVX2 void tile_q4_k_avx2(const void* w, const void* a, std::uint64_t s, std::uint64_t nb, float* out) {
  tile_q4_k<T>(w, a, s, nb, out);
}
template <std::uint64_t T>
EDGEPLAN_QDOT_EVEX void tile_q4_k_evex(const void* w, const void* a, std::uint64_t s, std::uint64_t nb, float* out) {
  tile_q4_k<T>(w, a, s, nb, out);
}

// Q6_K, as ggml's AVX2 ggml_vec_dot_q6_K_q8_K: per 128 weights the 6-bit values (0..63) joined from ql's nibbles
// and qh's bit pairs, _mm256_maddubs_epi16 with the activations, each 16 weights' pair sums weighted by their int8
// scale (_mm256_madd_epi16 of the scales spread by a byte shuffle), and 32 x sum(scale x bsum) subtracted once per
// block for the stored offset. llama.cpp has no repacked or tinyBLAS kernel of Q6_K on x86 without AMX, so its
// mul_mat calls this dot product once per weight row and token, a prompt's too: every tile here is one row by one
// token, its weights joined again for each token.
EDGEPLAN_QDOT_BODY float dot_q6_k(const BlockQ6K* w, const BlockQ8K* y, std::uint64_t nb) {
  const __m256i m3 = _mm256_set1_epi8(3), m15 = _mm256_set1_epi8(15);
  const float* f16 = f16_table();
  __m256 acc = _mm256_setzero_ps();
  for (std::uint64_t b = 0; b < nb; ++b) {
    const __m128i scales = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales));
    const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].bsums));
    const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(bsums, _mm256_cvtepi8_epi16(scales)), 5);
    __m256i sumi = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i low0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].ql + 64 * h));
      const __m256i low1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].ql + 64 * h + 32));
      const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qh + 32 * h));
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(low0, m15), _mm256_slli_epi16(_mm256_and_si256(high, m3), 4)),
          _mm256_or_si256(_mm256_and_si256(low1, m15),
                          _mm256_slli_epi16(_mm256_and_si256(high, _mm256_set1_epi8(12)), 2)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low0, 4), m15),
                          _mm256_and_si256(high, _mm256_set1_epi8(48))),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low1, 4), m15),
                          _mm256_srli_epi16(_mm256_and_si256(high, _mm256_set1_epi8(-64)), 2))};
      for (int j = 0; j < 4; ++j) {
        const int g = 8 * h + 2 * j;  // the scales of this quarter's two groups of 16
        constexpr std::int64_t kBytes = 0x0101010101010101;  // g in the low 8 bytes, g + 1 in the high 8
        const std::int64_t low = static_cast<std::int64_t>(g) * kBytes;
        const __m128i spread = _mm_set_epi64x(low + kBytes, low);
        const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs + 128 * h + 32 * j));
        const __m256i pairs = _mm256_maddubs_epi16(q[j], qy);
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales, spread)), pairs));
      }
    }
    const float d = y[b].d * f16[w[b].d];
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(_mm256_sub_epi32(sumi, offset)), acc);
  }
  return hsum(acc);
}

// Its two builds, each called once per row and token as ggml calls its vec_dot (through a pointer): never inlined
// into a prompt tile's loop over the tokens, where the compiler could share the joined weights between them.
__attribute__((noinline)) EDGEPLAN_QDOT_AVX2 float dot_q6_k_avx2(const BlockQ6K* w, const BlockQ8K* y,
                                                              std::uint64_t nb) {
  return dot_q6_k(w, y, nb);
}
__attribute__((noinline)) EDGEPLAN_QDOT_EVEX float dot_q6_k_evex(const BlockQ6K* w, const BlockQ8K* y,
                                                              std::uint64_t nb) {
  return dot_q6_k(w, y, nb);
}

template <std::uint64_t T, float (*dot)(const BlockQ6K*, const BlockQ8K*, std::uint64_t)>
void tile_q6_k(const void* wv, const void* av, std::uint64_t stride, std::uint64_t nb, float* out) {
  const auto* w = static_cast<const BlockQ6K*>(wv);
  const auto* a = static_cast<const BlockQ8K*>(av);
  for (std::uint64_t t = 0; t < T; ++t) out[t] = dot(w, a + t * stride, nb);
}

#endif  // EDGEPLAN_QDOT_X86

// AMX: llama.cpp's prompt GEMMs on CPUs with AMX-INT8 (ggml-cpu/amx/mmq.cpp, tinygemm_kernel_amx, which
// ggml_backend_amx_mul_mat runs for more than one token: one token takes its AVX-512 VNNI kernels). Weights are
// packed once per 16 rows x one block into VNNI order (4 consecutive weights of a row per 32-bit lane, as
// convert_B_packed_format does), with the 16 rows' scales beside them; each call multiplies 32 tokens by 32 rows
// as 2 x 2 tiles of 16 x 16 int32 (_tile_dpbssd, 32 weights deep), stores the tiles and scales them into the fp32
// output with AVX-512, as acc_C does. Q4_0 is kept as nibbles and unpacked into a tile per block (unpack_B, less
// 8); Q4_K multiplies its eight 32-weight groups one by one, weights each group's int32 tile by its 6-bit scales
// (scale_C) and subtracts the mins through the activations' group sums (acc_C of block_q4_K, _mm512_dpwssds_epi32);
// Q6_K multiplies its sixteen 16-weight groups the same way, each unpacked less 32 and padded to 32 weights deep with
// zero activations, weighted by its int8 scales, and scaled by d alone (acc_C of block_q6_K). The tile shapes are
// ggml_tile_config_init's. This is edgeplan's own code of that arithmetic and data movement.
constexpr std::uint64_t kAmxTile = 16;   // TILE_M = TILE_N: tokens and rows of one tile
constexpr std::uint64_t kAmxBlock = 32;  // tokens and rows of one kernel call (2 x 2 tiles)

// The byte of weight k (0..31) of row n (0..15) in a VNNI-ordered B tile of 8 rows of 64 bytes.
constexpr std::size_t vnni_index(std::size_t k, std::size_t n) { return (k / 4) * 64 + n * 4 + k % 4; }

// Bytes of the packed record of 16 rows x one block (get_tile_size of mmq.cpp): the int8 tile (Q8_0: 512) or its
// nibbles (Q4_0: 256; Q4_K: 256 per group of 32), then the per-row scales: Q4_0, Q8_0: 16 fp16; Q4_K: 8 x 16 int8
// scales, 4 x 32 int8 mins (groups 2j and 2j + 1 of a row side by side), 16 fp16 d, 16 fp16 dmin; Q8_0 last its
// 16 int32 compensations (128 x the row's weight sum in the block, which the one-token kernel subtracts).
constexpr std::uint64_t kQ8_0Comp = 512 + 32;  // Q8_0's compensations, after its tile and scales
constexpr std::uint64_t kQ4KScales = 8 * 256, kQ4KMins = kQ4KScales + 128, kQ4KD = kQ4KMins + 128,
                        kQ4KDmin = kQ4KD + 32;
// Q6_K's record: 16 groups of 16 weights, each 128 bytes of low nibbles (two 64-byte VNNI rows per 64 bytes) and
// 64 of high bit pairs (four rows, bits 2r, 2r + 1 for row r of the group), then 16 x 16 int8 scales, 16 fp16 d
// (mmq.cpp's offsets: quants, qh at 2048, scales at 3072, d at 3328).
constexpr std::uint64_t kQ6KHigh = 16 * 128, kQ6KScales = kQ6KHigh + 16 * 64, kQ6KD = kQ6KScales + 256;
std::uint64_t amx_record_bytes(QuantKind kind) {
  switch (kind) {
    case QuantKind::q4_0: return 256 + 32;
    case QuantKind::q8_0: return kQ8_0Comp + 64;
    case QuantKind::q4_k: return kQ4KDmin + 32;
    case QuantKind::q6_k: return kQ6KD + 32;
  }
  return 0;
}

// A 512-byte tile of values 0..15 as 256 bytes of nibbles: byte j of chunk c holds tile bytes 128c + j (low) and
// 128c + 64 + j (high), the order unpack_nibbles restores with two 512-bit masks.
void pack_nibbles(const std::uint8_t* tile, std::uint8_t* out) {
  for (std::size_t c = 0; c < 4; ++c) {
    for (std::size_t j = 0; j < 64; ++j) {
      out[64 * c + j] = static_cast<std::uint8_t>(tile[128 * c + j] | (tile[128 * c + 64 + j] << 4));
    }
  }
}

#if EDGEPLAN_QDOT_X86
#define EDGEPLAN_QDOT_AMX \
  __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512bw,avx512vnni,amx-tile,amx-int8")))

// GCC's tile loads are asm statements without a memory input: the unpacked tiles written just before must reach
// memory first.
#define EDGEPLAN_AMX_LOAD(tmm, base, stride) \
  do {                                       \
    __asm__ volatile("" ::: "memory");       \
    _tile_loadd(tmm, base, stride);          \
  } while (0)

struct alignas(64) TileConfig {  // the 64-byte operand of ldtilecfg (palette 1)
  std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
  std::uint16_t colsb[16] = {64, 64, 32, 32, 64, 64, 64, 64};  // bytes per row: B, B, A, A, C x 4
  std::uint8_t rows[16] = {8, 8, 16, 16, 16, 16, 16, 16};
};

EDGEPLAN_QDOT_AMX void amx_configure() {
  static const TileConfig config;
  _tile_loadconfig(&config);
}

// Q4_0's nibbles (less 8) or Q4_K's (as they are) into a 512-byte int8 tile (pack_nibbles' order).
template <bool kLess8>
EDGEPLAN_QDOT_AMX void unpack_nibbles(const std::uint8_t* packed, std::int8_t* tile) {
  const __m512i low = _mm512_set1_epi8(0xF), eight = _mm512_set1_epi8(kLess8 ? 8 : 0);
  for (std::size_t c = 0; c < 4; ++c) {
    const __m512i bytes = _mm512_loadu_si512(packed + 64 * c);
    _mm512_storeu_si512(tile + 128 * c, _mm512_sub_epi8(_mm512_and_si512(bytes, low), eight));
    _mm512_storeu_si512(tile + 128 * c + 64,
                        _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(bytes, 4), low), eight));
  }
}

// c[m][0..16) (+)= tile[m] x d_w x d_a for the 16 tokens of a tile (acc_C of block_q4_0 / block_q8_0); a is the
// first token's activation block, the next token's nb blocks on.
EDGEPLAN_QDOT_AMX void amx_scale_q8(float* c, std::uint64_t ldc, const std::int32_t* tile, const BlockQ8_0* a,
                                    std::uint64_t nb, const std::uint8_t* scales, bool accumulate) {
  const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales)));
  for (std::uint64_t m = 0; m < kAmxTile; ++m) {
    const __m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(_cvtsh_ss(a[m * nb].d)));
    const __m512 sum = accumulate ? _mm512_loadu_ps(c + m * ldc) : _mm512_setzero_ps();
    _mm512_storeu_ps(c + m * ldc, _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(tile + m * kAmxTile)), d, sum));
  }
}

// A block's packed weights into tile register kTmm (0 or 1): Q8_0's as they are, Q4_0's unpacked first. (The
// register is a literal in each branch: GCC's tile macros paste it into the instruction.)
template <bool kNibbles, int kTmm>
EDGEPLAN_QDOT_AMX void amx_load_weights(const std::uint8_t* record, std::int8_t* unpacked) {
  if constexpr (kNibbles) {
    unpack_nibbles<true>(record, unpacked);
    if constexpr (kTmm == 0) {
      EDGEPLAN_AMX_LOAD(0, unpacked, 64);
    } else {
      EDGEPLAN_AMX_LOAD(1, unpacked, 64);
    }
  } else if constexpr (kTmm == 0) {
    _tile_loadd(0, record, 64);
  } else {
    _tile_loadd(1, record, 64);
  }
}

// 32 tokens x 32 rows of Q4_0 or Q8_0: w0 and w1 are the packed records of the two 16-row groups at block 0 (the
// next block `record` bytes on), a the first token's activation blocks. As tinygemm_kernel_amx, the tiles of block
// b are stored while those of block b - 1 are scaled (two C buffers), so AMX and AVX-512 work overlap.
template <bool kNibbles>
EDGEPLAN_QDOT_AMX void amx_block_q8(const std::uint8_t* w0, const std::uint8_t* w1, std::uint64_t record,
                                    const BlockQ8_0* a, std::uint64_t nb, float* c, std::uint64_t ldc) {
  constexpr std::uint64_t kScales = kNibbles ? 256 : 512, kTileInts = kAmxTile * kAmxTile;
  alignas(64) std::int8_t b0[512], b1[512];
  alignas(64) std::int32_t buffers[2][4 * kTileInts];
  std::int32_t* cur = buffers[0];
  std::int32_t* pre = buffers[1];
  const BlockQ8_0* a1 = a + kAmxTile * nb;  // tokens 16..31
  const long lda = static_cast<long>(nb * sizeof(BlockQ8_0));
  // Tile t (0: tokens 0..15 x rows 0..15, 1: tokens 16..31, 2 and 3: rows 16..31) of block b into c.
  const auto scale = [&](int t, std::uint64_t b, const std::int32_t* tiles) {
    const std::uint8_t* scales = (t < 2 ? w0 : w1) + b * record + kScales;
    const BlockQ8_0* first = (t % 2 == 0 ? a : a1) + b;
    float* out = c + (t % 2 == 0 ? 0 : kAmxTile * ldc) + (t < 2 ? 0 : kAmxTile);
    amx_scale_q8(out, ldc, tiles + t * kTileInts, first, nb, scales, b > 0);
  };
  // In tinygemm_kernel_amx's order: each tile of block b - 1 is scaled between the loads and the product of the
  // same tile of block b.
  for (std::uint64_t b = 0; b < nb; ++b) {
    amx_load_weights<kNibbles, 0>(w0 + b * record, b0);
    _tile_zero(4);
    _tile_loadd(2, a[b].qs, lda);
    if (b > 0) scale(0, b - 1, pre);
    _tile_dpbssd(4, 2, 0);
    _tile_stored(4, cur, 64);
    _tile_zero(5);
    _tile_loadd(3, a1[b].qs, lda);
    if (b > 0) scale(1, b - 1, pre);
    _tile_dpbssd(5, 3, 0);
    _tile_stored(5, cur + kTileInts, 64);
    amx_load_weights<kNibbles, 1>(w1 + b * record, b1);
    _tile_zero(6);
    if (b > 0) scale(2, b - 1, pre);
    _tile_dpbssd(6, 2, 1);
    _tile_stored(6, cur + 2 * kTileInts, 64);
    _tile_zero(7);
    if (b > 0) scale(3, b - 1, pre);
    _tile_dpbssd(7, 3, 1);
    _tile_stored(7, cur + 3 * kTileInts, 64);
    std::swap(cur, pre);
  }
  for (int t = 0; t < 4; ++t) scale(t, nb - 1, pre);
}

// sumi[m] (+)= tile[m] x the group's 16 scales (scale_C).
EDGEPLAN_QDOT_AMX void amx_scale_group(const std::int32_t* tile, std::int32_t* sumi, const std::uint8_t* scales,
                                       bool accumulate) {
  const __m512i s = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales)));
  for (std::uint64_t m = 0; m < kAmxTile; ++m) {
    const __m512i prod = _mm512_mullo_epi32(_mm512_loadu_si512(tile + m * kAmxTile), s);
    _mm512_storeu_si512(sumi + m * kAmxTile,
                        accumulate ? _mm512_add_epi32(_mm512_loadu_si512(sumi + m * kAmxTile), prod) : prod);
  }
}

// c[m] (+)= d_a (d x sumi[m] - dmin x sum_j min_j bsum_j) for the 16 tokens of a tile (acc_C of block_q4_K).
EDGEPLAN_QDOT_AMX void amx_scale_q4_k(float* c, std::uint64_t ldc, const std::int32_t* sumi, const BlockQ8K* a,
                                      std::uint64_t nb, const std::uint8_t* record, bool accumulate) {
  const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(record + kQ4KD)));
  const __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(record + kQ4KDmin)));
  for (std::uint64_t m = 0; m < kAmxTile; ++m) {
    const BlockQ8K& y = a[m * nb];
    const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.bsums));
    const __m512i groups = _mm512_castsi128_si512(  // the eight group sums of 32, as int16 pairs (2j, 2j + 1)
        _mm_hadd_epi16(_mm256_extracti128_si256(bsums, 0), _mm256_extracti128_si256(bsums, 1)));
    __m512i mins = _mm512_setzero_si512();
    for (int j = 0; j < 4; ++j) {
      const __m512i pair = _mm512_permutexvar_epi32(_mm512_set1_epi32(j), groups);
      const __m512i m16 =
          _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(record + kQ4KMins + 32 * j)));
      mins = _mm512_dpwssds_epi32(mins, pair, m16);
    }
    __m512 sum = accumulate ? _mm512_loadu_ps(c + m * ldc) : _mm512_setzero_ps();
    sum = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(sumi + m * kAmxTile)),
                          _mm512_mul_ps(d, _mm512_set1_ps(y.d)), sum);
    sum = _mm512_fmadd_ps(_mm512_cvtepi32_ps(mins), _mm512_mul_ps(dmin, _mm512_set1_ps(-y.d)), sum);
    _mm512_storeu_ps(c + m * ldc, sum);
  }
}

// VNNI rows 2h and 2h + 1 of Q6_K's group j in a record as the stored 6-bit weights (0..63): the nibbles of its
// 64 bytes at 128j + 64h (low ones row 2h, high ones row 2h + 1) joined with their bit pairs in `high`, the group's
// 64 bytes of high bits (bits 2r, 2r + 1 for row r).
EDGEPLAN_QDOT_AMX inline void q6_k_rows(const std::uint8_t* record, int j, int h, __m512i high, __m512i& w0,
                                        __m512i& w1) {
  const __m512i low = _mm512_set1_epi8(0xF), pair = _mm512_set1_epi8(3);
  const __m512i bytes = _mm512_loadu_si512(record + 128 * j + 64 * h);
  const __m512i hi0 = _mm512_and_si512(_mm512_srli_epi16(high, 4 * h), pair);
  const __m512i hi1 = _mm512_and_si512(_mm512_srli_epi16(high, 4 * h + 2), pair);
  w0 = _mm512_or_si512(_mm512_and_si512(bytes, low), _mm512_slli_epi16(hi0, 4));
  w1 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(bytes, 4), low), _mm512_slli_epi16(hi1, 4));
}

// Q6_K's group j (16 weights) of a record as an int8 tile (unpack_B of block_q6_K): the four VNNI rows of the 6-bit
// weights less 32; the tile's rows 4..7 stay as they are, against zero activations (unpack_A of block_q6_K pads
// each token's 16 to 32).
EDGEPLAN_QDOT_AMX void unpack_q6_k(const std::uint8_t* record, int j, std::int8_t* tile) {
  const __m512i off = _mm512_set1_epi8(32);
  const __m512i high = _mm512_loadu_si512(record + kQ6KHigh + 64 * j);
  for (int h = 0; h < 2; ++h) {
    __m512i w0, w1;
    q6_k_rows(record, j, h, high, w0, w1);
    _mm512_storeu_si512(tile + 128 * h, _mm512_sub_epi8(w0, off));
    _mm512_storeu_si512(tile + 128 * h + 64, _mm512_sub_epi8(w1, off));
  }
}

// c[m] (+)= d_a x d x sumi[m] for the 16 tokens of a tile (acc_C of block_q6_K: no mins, the 32 is in the weights).
EDGEPLAN_QDOT_AMX void amx_scale_q6_k(float* c, std::uint64_t ldc, const std::int32_t* sumi, const BlockQ8K* a,
                                      std::uint64_t nb, const std::uint8_t* record, bool accumulate) {
  const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(record + kQ6KD)));
  for (std::uint64_t m = 0; m < kAmxTile; ++m) {
    const __m512 sum = accumulate ? _mm512_loadu_ps(c + m * ldc) : _mm512_setzero_ps();
    _mm512_storeu_ps(c + m * ldc, _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(sumi + m * kAmxTile)),
                                                  _mm512_mul_ps(d, _mm512_set1_ps(a[m * nb].d)), sum));
  }
}

// 32 tokens x 32 rows of Q4_K or Q6_K (tinygemm_kernel_amx of the K-quants): per block, the groups' products (Q4_K:
// eight of 32 weights; Q6_K: sixteen of 16, each padded to the tile's 32 with zero activations) are summed in int32
// under their scales, then scaled into c (Q4_K with the mins subtracted). The two halves of the tokens are written
// out one after the other: GCC's tile macros name the tile registers by literals.
template <QuantKind kKind>
EDGEPLAN_QDOT_AMX void amx_block_k(const std::uint8_t* w0, const std::uint8_t* w1, std::uint64_t record,
                                   const BlockQ8K* a, std::uint64_t nb, float* c, std::uint64_t ldc) {
  static_assert(kKind == QuantKind::q4_k || kKind == QuantKind::q6_k);
  constexpr bool kQ6 = kKind == QuantKind::q6_k;
  constexpr int kGroups = kQ6 ? 16 : 8, kWidth = kQ6 ? 16 : 32;  // groups per block, weights per group
  constexpr std::uint64_t kTileInts = kAmxTile * kAmxTile, kScales = kQ6 ? kQ6KScales : kQ4KScales;
  alignas(64) std::int8_t b0[512] = {}, b1[512] = {}, act[kAmxTile * 32] = {};
  alignas(64) std::int32_t tiles[4][kTileInts], sumi[4][kTileInts];
  const BlockQ8K* a1 = a + kAmxTile * nb;
  // The 16 tokens' activations of group j into a tile (unpack_A: a Q8_K block is 292 bytes; Q6_K's 16 leave the
  // other 16 bytes of each token's row zero).
  const auto gather = [&](const BlockQ8K* first, std::uint64_t b, int j) {
    for (std::uint64_t m = 0; m < kAmxTile; ++m) std::memcpy(act + 32 * m, first[m * nb + b].qs + kWidth * j, kWidth);
  };
  const auto unpack = [](const std::uint8_t* r, int j, std::int8_t* tile) {
    if constexpr (kQ6) {
      unpack_q6_k(r, j, tile);
    } else {
      unpack_nibbles<false>(r + 256 * j, tile);
    }
  };
  const auto scale = [&](float* out, const std::int32_t* sums, const BlockQ8K* first, const std::uint8_t* r,
                         bool accumulate) {
    if constexpr (kQ6) {
      amx_scale_q6_k(out, ldc, sums, first, nb, r, accumulate);
    } else {
      amx_scale_q4_k(out, ldc, sums, first, nb, r, accumulate);
    }
  };
  for (std::uint64_t b = 0; b < nb; ++b) {
    const std::uint8_t* r0 = w0 + b * record;
    const std::uint8_t* r1 = w1 + b * record;
    for (int j = 0; j < kGroups; ++j) {
      unpack(r0, j, b0);
      unpack(r1, j, b1);
      EDGEPLAN_AMX_LOAD(0, b0, 64);
      EDGEPLAN_AMX_LOAD(1, b1, 64);
      gather(a, b, j);
      EDGEPLAN_AMX_LOAD(2, act, 32);
      _tile_zero(4);
      _tile_zero(6);
      _tile_dpbssd(4, 2, 0);
      _tile_dpbssd(6, 2, 1);
      _tile_stored(4, tiles[0], 64);
      _tile_stored(6, tiles[2], 64);
      amx_scale_group(tiles[0], sumi[0], r0 + kScales + 16 * j, j > 0);
      amx_scale_group(tiles[2], sumi[2], r1 + kScales + 16 * j, j > 0);
      gather(a1, b, j);
      EDGEPLAN_AMX_LOAD(3, act, 32);
      _tile_zero(5);
      _tile_zero(7);
      _tile_dpbssd(5, 3, 0);
      _tile_dpbssd(7, 3, 1);
      _tile_stored(5, tiles[1], 64);
      _tile_stored(7, tiles[3], 64);
      amx_scale_group(tiles[1], sumi[1], r0 + kScales + 16 * j, j > 0);
      amx_scale_group(tiles[3], sumi[3], r1 + kScales + 16 * j, j > 0);
    }
    scale(c, sumi[0], a + b, r0, b > 0);
    scale(c + kAmxTile * ldc, sumi[1], a1 + b, r0, b > 0);
    scale(c + kAmxTile, sumi[2], a + b, r1, b > 0);
    scale(c + kAmxTile * ldc + kAmxTile, sumi[3], a1 + b, r1, b > 0);
  }
}

// One token on the AMX-packed weights: what ggml_backend_amx_mul_mat runs for M == 1 (tinygemm_kernel_vnni, AVX-512
// VNNI). A call takes kGroups 16-row groups side by side (llama.cpp: 4, 64 rows; 2 for the last 32), block by block:
// the token's activation block is broadcast 4 bytes at a time, and each _mm512_dpbusd_epi32 multiplies it with one
// 64-byte row of the packed tile, 16 rows' sums in the 16 lanes: no horizontal sum. vpdpbusd takes one operand
// unsigned: Q4_0's nibbles are (0..15), and 8 x the activations' sum is subtracted after; Q8_0 adds 128 to the
// activations and subtracts the records' compensation (128 x each row's weight sum, stored at packing).
// w is the first group's record of block 0; the next group starts `group` bytes on, the next block `record` on.
template <int kGroups, bool kNibbles>
EDGEPLAN_QDOT_AMX void gemv_packed_q8(const std::uint8_t* w, std::uint64_t group, std::uint64_t record,
                                      const BlockQ8_0* a, std::uint64_t nb, float* c) {
  constexpr std::uint64_t kScales = kNibbles ? 256 : 512;
  const __m512i low = _mm512_set1_epi8(0xF), eight = _mm512_set1_epi8(8), flip = _mm512_set1_epi8(-128);
  __m512 acc[kGroups];
  for (int g = 0; g < kGroups; ++g) acc[g] = _mm512_setzero_ps();
  for (std::uint64_t b = 0; b < nb; ++b) {
    __m512i x[8];
    __m512i comp = _mm512_setzero_si512();
    std::int32_t lanes[8];
    std::memcpy(lanes, a[b].qs, 32);
    for (int k = 0; k < 8; ++k) {
      x[k] = _mm512_set1_epi32(lanes[k]);
      if constexpr (kNibbles) {
        comp = _mm512_dpbusd_epi32(comp, eight, x[k]);
      } else {
        x[k] = _mm512_add_epi8(x[k], flip);
      }
    }
    const __m512 da = _mm512_set1_ps(_cvtsh_ss(a[b].d));
#pragma GCC unroll 4
    for (int g = 0; g < kGroups; ++g) {
      const std::uint8_t* r = w + g * group + b * record;
      __m512i sum = _mm512_setzero_si512();
      if constexpr (kNibbles) {
        for (int q = 0; q < 4; ++q) {
          const __m512i bytes = _mm512_loadu_si512(r + 64 * q);
          sum = _mm512_dpbusd_epi32(sum, _mm512_and_si512(bytes, low), x[2 * q]);
          sum = _mm512_dpbusd_epi32(sum, _mm512_and_si512(_mm512_srli_epi16(bytes, 4), low), x[2 * q + 1]);
        }
      } else {
        for (int q = 0; q < 8; ++q) sum = _mm512_dpbusd_epi32(sum, x[q], _mm512_loadu_si512(r + 64 * q));
        comp = _mm512_loadu_si512(r + kQ8_0Comp);
      }
      const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + kScales)));
      acc[g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(sum, comp)), _mm512_mul_ps(dw, da), acc[g]);
    }
  }
  for (int g = 0; g < kGroups; ++g) _mm512_storeu_ps(c + 16 * g, acc[g]);
}

// Q4_K's one token on the packed weights (tinygemm_kernel_vnni of block_q4_K): per block and group of 32, the
// token's 4-byte lanes broadcast from the group's 32 activations, the nibbles (unsigned) against them, the group's
// int32 sums weighted by its 6-bit scales; then d x d_a, and the mins through the activations' group sums.
template <int kGroups>
EDGEPLAN_QDOT_AMX void gemv_packed_q4_k(const std::uint8_t* w, std::uint64_t group, std::uint64_t record,
                                        const BlockQ8K* a, std::uint64_t nb, float* c) {
  const __m512i low = _mm512_set1_epi8(0xF);
  __m512 acc[kGroups];
  for (int g = 0; g < kGroups; ++g) acc[g] = _mm512_setzero_ps();
  for (std::uint64_t b = 0; b < nb; ++b) {
    __m512i x[8];
    for (int j = 0; j < 8; ++j) {
      x[j] = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[b].qs + 32 * j)));
    }
    const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[b].bsums));
    const __m512i sums = _mm512_castsi128_si512(
        _mm_hadd_epi16(_mm256_extracti128_si256(bsums, 0), _mm256_extracti128_si256(bsums, 1)));
    const __m512 da = _mm512_set1_ps(a[b].d);
#pragma GCC unroll 4
    for (int g = 0; g < kGroups; ++g) {
      const std::uint8_t* r = w + g * group + b * record;
      __m512i total = _mm512_setzero_si512();
      for (int j = 0; j < 8; ++j) {
        __m512i sum = _mm512_setzero_si512();
        for (int q = 0; q < 4; ++q) {
          const __m512i bytes = _mm512_loadu_si512(r + 256 * j + 64 * q);
          sum = _mm512_dpbusd_epi32(sum, _mm512_and_si512(bytes, low),
                                    _mm512_permutexvar_epi32(_mm512_set1_epi32(2 * q), x[j]));
          sum = _mm512_dpbusd_epi32(sum, _mm512_and_si512(_mm512_srli_epi16(bytes, 4), low),
                                    _mm512_permutexvar_epi32(_mm512_set1_epi32(2 * q + 1), x[j]));
        }
        const __m512i scale =
            _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + kQ4KScales + 16 * j)));
        total = _mm512_add_epi32(total, _mm512_mullo_epi32(sum, scale));
      }
      __m512i mins = _mm512_setzero_si512();
      for (int j = 0; j < 4; ++j) {
        const __m512i m16 =
            _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + kQ4KMins + 32 * j)));
        mins = _mm512_dpwssds_epi32(mins, _mm512_permutexvar_epi32(_mm512_set1_epi32(j), sums), m16);
      }
      const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + kQ4KD)));
      const __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + kQ4KDmin)));
      acc[g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), _mm512_mul_ps(d, da), acc[g]);
      acc[g] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(mins), _mm512_mul_ps(dmin, da), acc[g]);
    }
  }
  for (int g = 0; g < kGroups; ++g) _mm512_storeu_ps(c + 16 * g, acc[g]);
}

// Q6_K's one token on the packed weights (tinygemm_kernel_vnni of block_q6_K): per block and group of 16 weights,
// the four VNNI rows' 6-bit weights (0..63: the nibbles with their high bit pairs) against the token's 4-byte lanes,
// less 32 x the group's activation sum (q - 32), weighted by the group's int8 scales; then d x d_a.
template <int kGroups>
EDGEPLAN_QDOT_AMX void gemv_packed_q6_k(const std::uint8_t* w, std::uint64_t group, std::uint64_t record,
                                        const BlockQ8K* a, std::uint64_t nb, float* c) {
  __m512 acc[kGroups];
  for (int g = 0; g < kGroups; ++g) acc[g] = _mm512_setzero_ps();
  for (std::uint64_t b = 0; b < nb; ++b) {
    __m512i x[4];
    for (int j = 0; j < 4; ++j) x[j] = _mm512_loadu_si512(a[b].qs + 64 * j);
    const __m512i comp = _mm512_mullo_epi32(
        _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[b].bsums))), _mm512_set1_epi32(32));
    const __m512 da = _mm512_set1_ps(a[b].d);
#pragma GCC unroll 4
    for (int g = 0; g < kGroups; ++g) {
      const std::uint8_t* r = w + g * group + b * record;
      __m512i total = _mm512_setzero_si512();
      for (int j = 0; j < 16; ++j) {
        const __m512i high = _mm512_loadu_si512(r + kQ6KHigh + 64 * j);
        __m512i sum = _mm512_setzero_si512();
        for (int h = 0; h < 2; ++h) {
          __m512i w0, w1;
          q6_k_rows(r, j, h, high, w0, w1);
          const int lane = 4 * j % 16 + 2 * h;
          sum = _mm512_dpbusd_epi32(sum, w0, _mm512_permutexvar_epi32(_mm512_set1_epi32(lane), x[j / 4]));
          sum = _mm512_dpbusd_epi32(sum, w1, _mm512_permutexvar_epi32(_mm512_set1_epi32(lane + 1), x[j / 4]));
        }
        sum = _mm512_sub_epi32(sum, _mm512_permutexvar_epi32(_mm512_set1_epi32(j), comp));
        const __m512i scale =
            _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + kQ6KScales + 16 * j)));
        total = _mm512_add_epi32(total, _mm512_mullo_epi32(sum, scale));
      }
      const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + kQ6KD)));
      acc[g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), _mm512_mul_ps(d, da), acc[g]);
    }
  }
  for (int g = 0; g < kGroups; ++g) _mm512_storeu_ps(c + 16 * g, acc[g]);
}

// AVX-512 F, VL, BW and VNNI, with the OS saving their state (what __builtin_cpu_supports checks).
bool have_vnni512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
}

bool have_avx2() {
  // F16C from CPUID leaf 1 (ECX bit 29, cpuid.h's bit_F16C): clang 14's __builtin_cpu_supports has no "f16c".
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
}

// AMX-TILE and AMX-INT8 (CPUID leaf 7, EDX bits 24 and 25) with AVX-512 VNNI for the scaling, and the kernel's
// leave to use the tile data (Linux: arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, as ggml's AMX backend
// asks in amx.cpp); asked once per process.
bool have_amx() {
  static const bool usable = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
    if ((edx & (1u << 24)) == 0 || (edx & (1u << 25)) == 0 || !have_vnni512()) return false;
#ifdef __linux__
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
    return false;
#endif
  }();
  return usable;
}
#else
bool have_avx2() { return false; }
bool have_vnni512() { return false; }
bool have_amx() { return false; }
#endif

// The instruction set a kind's kernel runs with under `isa`: on an AVX-512 VNNI host, AVX-512 VNNI for the
// Q8_0-activation kernels, and the K-quant kernels' AVX2 code built for AVX-512 (they weight their pair sums by the
// sub-block scales, which vpdpbusd cannot; ggml's AVX-512 builds run its AVX2 code there too; two rows of Q4_K
// measured no faster than one); AVX2 elsewhere, or where `isa` asks for it.
Isa kernel_isa(QuantKind kind, QuantIsa isa) {
  if (isa == QuantIsa::scalar || !have_avx2()) return Isa::scalar;
  if (isa == QuantIsa::avx2 || !have_vnni512()) return Isa::avx2;
  return k_quant(kind) ? Isa::avx2_evex : Isa::vnni512;
}

// A matmul's instruction set: AMX under `best` where the CPU has it, the rows fill its 32-row calls (llama.cpp's
// AMX buffer takes weights of rows % 32 == 0 only: ggml-cpu/amx/amx.cpp) and the tokens its 32-token calls or are
// one (a decoded token: llama.cpp's AVX-512 VNNI kernel on the same packed weights), else kernel_isa's.
Isa matmul_isa(QuantKind kind, QuantIsa isa, std::uint64_t rows, std::uint64_t tokens) {
  const bool fits = tokens == 1 || tokens % kAmxBlock == 0;
  if (isa == QuantIsa::best && fits && rows % kAmxBlock == 0 && have_amx()) {
    return Isa::amx;
  }
  // A Q4_K prompt over whole 8-row groups on an AVX-512 host: llama.cpp's repacked AVX-512 GEMM (gemm_q4_k_r8).
  if (kind == QuantKind::q4_k && (isa == QuantIsa::best || isa == QuantIsa::vnni512) && tokens > 1 &&
      rows % kR8Rows == 0 && have_vnni512()) {
    return Isa::avx512;
  }
  return kernel_isa(kind, isa);
}

// The one-row kernel of `kind` under `isa` for tiles of T tokens.
template <std::uint64_t T>
Tile tile_for(QuantKind kind, Isa isa) {
#if EDGEPLAN_QDOT_X86
  if (isa == Isa::vnni512 && kind == QuantKind::q4_0) return tile_q8_vnni512<BlockQ4_0, unpack_q4_0, T>;
  if (isa == Isa::vnni512 && kind == QuantKind::q8_0) return tile_q8_vnni512<BlockQ8_0, unpack_q8_0, T>;
  if (avx2_code(isa) || isa == Isa::vnni512) {
    const bool evex = isa == Isa::avx2_evex;
    switch (kind) {
      case QuantKind::q4_0: return tile_q4_0_avx2<T>;
      case QuantKind::q8_0: return tile_q8_0_avx2<T>;
      case QuantKind::q4_k: return evex ? tile_q4_k_evex<T> : tile_q4_k_avx2<T>;
      case QuantKind::q6_k: return evex ? tile_q6_k<T, dot_q6_k_evex> : tile_q6_k<T, dot_q6_k_avx2>;
    }
  }
#else
  (void)isa;
#endif
  switch (kind) {
    case QuantKind::q4_0: return tile_q8_scalar<BlockQ4_0, q4_0_weight, T>;
    case QuantKind::q8_0: return tile_q8_scalar<BlockQ8_0, q8_0_weight, T>;
    case QuantKind::q4_k: return tile_q4_k_scalar<T>;
    case QuantKind::q6_k: return tile_q6_k_scalar<T>;
  }
  return tile_q4_k_scalar<T>;
}

// The register-blocked kernel of `kind` under `isa` for calls of T tokens, or none where only the one-row kernel
// exists (one token: one row per call, as ggml's vec_dot runs it; see rows_q8_vnni512).
template <std::uint64_t T>
RowsTile rows_tile_for(QuantKind kind, Isa isa) {
#if EDGEPLAN_QDOT_X86
  if constexpr (T > 1) {
    if (isa == Isa::vnni512 && kind == QuantKind::q4_0) return {tile2_q8_vnni512<BlockQ4_0, unpack_q4_0, T>, 2, T};
    if (isa == Isa::vnni512 && kind == QuantKind::q8_0) return {tile4_q8_0_vnni512<T>, 4, 4};
  }
#endif
  (void)kind;
  (void)isa;
  return {};
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::amx: return "AMX";
    case Isa::vnni512: return "AVX-512 VNNI";
    case Isa::avx512: return "AVX-512";
    case Isa::avx2: return "AVX2";
    case Isa::avx2_evex: return "AVX2 built for AVX-512";
    case Isa::scalar: return "scalar";
  }
  return "scalar";
}

// A fixed xorshift stream for the operands' bytes.
using kernel_parts::Bytes;

// The scales made finite and small, int8 weights kept off -128 (as ggml's quantizers do: the sign trick of
// dot_i8 needs |q| <= 127).
void settle(BlockQ4_0& b, Bytes& bytes) { b.d = bytes.half_scale(); }
void settle(BlockQ4K& b, Bytes& bytes) {
  b.d = bytes.half_scale();
  b.dmin = bytes.half_scale();
}
void settle(BlockQ6K& b, Bytes& bytes) { b.d = bytes.half_scale(); }
void settle(BlockQ8_0& b, Bytes& bytes) {
  b.d = bytes.half_scale();
  for (std::int8_t& q : b.qs) q = q == -128 ? -127 : q;
}

template <class Block>
kernel_parts::AlignedVector<Block> random_blocks(std::uint64_t count, Bytes& bytes) {
  kernel_parts::AlignedVector<Block> blocks(count);
  for (Block& b : blocks) {
    auto* p = reinterpret_cast<std::uint8_t*>(&b);
    for (std::size_t i = 0; i < sizeof(Block); ++i) p[i] = bytes.next();
    settle(b, bytes);
  }
  return blocks;
}

}  // namespace qdot

struct QuantMatmul::Data {
  QuantKind kind;
  qdot::Isa isa = qdot::Isa::scalar;
  std::uint64_t rows = 0, k = 0, tokens = 0;
  std::uint64_t weight_blocks = 0, activation_blocks = 0;  // per row
  // The operands and the output on 64-byte boundaries, as ggml's buffers hold them (kernel_parts::CacheAligned).
  kernel_parts::AlignedVector<qdot::BlockQ4_0> q4_0;
  kernel_parts::AlignedVector<qdot::BlockQ8_0> q8_0, act8, work8;  // work8, work_k: requantize_share's
  kernel_parts::AlignedVector<qdot::BlockQ4K> q4_k;
  kernel_parts::AlignedVector<qdot::BlockQ6K> q6_k;
  kernel_parts::AlignedVector<qdot::BlockQ8K> act_k, work_k;
  // A repacked prompt's activations 4 tokens a block: Q4_0's act8, Q4_K's act_k (and their work buffers).
  kernel_parts::AlignedVector<qdot::BlockQ8_0x4> act8x4, work8x4;
  kernel_parts::AlignedVector<qdot::BlockQ8Kx4> act_k4, work_k4;
  kernel_parts::AlignedVector<float> act_f32;  // the activations before quantization, tokens x k
  kernel_parts::AlignedVector<std::uint8_t> packed;  // isa amx: the weights in 16-row records (pack_amx); r8: in
  bool r8 = false;                                    // 8-row records (pack_r8: Q4_0 repacked as llama.cpp does)
  kernel_parts::AlignedVector<float> out;
};

namespace qdot {

// `tokens` rows of fp32 activations from x into y8 (Q8_0) or yk (Q8_K), as d's kind takes them: Q8_0 with AVX2
// where the kernels run it (ggml's path), Q8_K by the reference loop (ggml's on x86).
void quantize_activations(const QuantMatmul::Data& d, const float* x, std::uint64_t tokens, BlockQ8_0* y8,
                          BlockQ8K* yk) {
  const std::uint64_t blocks = tokens * d.activation_blocks;
  if (k_quant(d.kind)) {
    quantize_q8_k(x, yk, blocks);
    return;
  }
#if EDGEPLAN_QDOT_X86
  if (d.isa != Isa::scalar) {
    quantize_q8_0_avx2(x, y8, blocks);
    return;
  }
#endif
  quantize_q8_0_scalar(x, y8, blocks);
}

// The activations' quantization of a call's share of the tokens (in proportion to its rows, as llama.cpp's threads
// split the tokens), into the call's tokens of a work buffer made once (llama.cpp's wdata): the kernels read the
// operands quantized once (the same values), so threads never write what others read, and disjoint calls write
// disjoint tokens; the compiler is told the result is used.
void requantize_share(QuantMatmul::Data& d, std::uint64_t row_begin, std::uint64_t row_end) {
  const std::uint64_t t0 = d.tokens * std::min(row_begin, d.rows) / d.rows;
  const std::uint64_t t1 = d.tokens * std::min(row_end, d.rows) / d.rows;
  if (t1 <= t0) return;
#if EDGEPLAN_QDOT_X86
  // A repacked Q4_0 prompt's tokens straight into groups of 4 (ggml_quantize_mat_q8_0_4x8): the groups that start in
  // the share.
  if (!d.work8x4.empty()) {
    const std::uint64_t nb = d.activation_blocks;
    for (std::uint64_t g = (t0 + 3) / 4; g < (t1 + 3) / 4; ++g) {
      quantize_q8_0x4_avx2(d.act_f32.data() + 4 * g * d.k, d.k, d.work8x4.data() + g * nb, nb);
    }
    const void* kept = d.work8x4.data();
    __asm__ volatile("" : : "r"(kept) : "memory");
    return;
  }
#endif
  BlockQ8_0* y8 = k_quant(d.kind) ? nullptr : d.work8.data() + t0 * d.activation_blocks;
  BlockQ8K* yk = k_quant(d.kind) ? d.work_k.data() + t0 * d.activation_blocks : nullptr;
  quantize_activations(d, d.act_f32.data() + t0 * d.k, t1 - t0, y8, yk);
  // A repacked Q4_K prompt's groups of 4 tokens interleaved (ggml_quantize_mat_q8_K_4x8), those wholly in the share.
  if (!d.work_k4.empty()) interleave_4(d.work_k.data(), d.activation_blocks, (t0 + 3) / 4, t1 / 4, d.work_k4.data());
  const void* kept = y8 ? static_cast<const void*>(y8) : static_cast<const void*>(yk);
  __asm__ volatile("" : : "r"(kept) : "memory");
}

#if EDGEPLAN_QDOT_X86
// Whether d's weights are repacked into 8-row records as llama.cpp's CPU_REPACK buffer holds them on x86 without
// AMX (ggml_repack_get_optimal_repack_type: rows a multiple of 8): Q4_0 on the AVX-512 VNNI kernels, one token or a
// multiple of 16 (AVX2-only hosts run the plain tiles: their repacked kernels are not built here); Q4_K for one
// token, and a prompt on AVX-512 hosts (matmul_isa's avx512; AVX2-only hosts run the plain tiles).
bool repacks_r8(const QuantMatmul::Data& d) {
  if (d.rows % kR8Rows != 0) return false;
  if (d.kind == QuantKind::q4_0) return d.isa == Isa::vnni512 && (d.tokens == 1 || d.tokens % kR8PromptTokens == 0);
  return d.kind == QuantKind::q4_k && ((avx2_code(d.isa) && d.tokens == 1) || d.isa == Isa::avx512);
}

std::uint64_t r8_record_bytes(QuantKind kind) { return kind == QuantKind::q4_k ? kR8KRecord : kR8Record; }

// Q4_K's scales and mins of sub-block j of 8 rows into 12 bytes, as a Q4_K block packs its 8 sub-blocks' (rows 0-3:
// the 6 bits, with rows 4-7's top 2 bits above them; rows 4-7's low 4 bits of scale and min in bytes 8-11).
void pack_scales_mins(const BlockQ4K* const (&rows)[kR8Rows], int j, std::uint8_t* out) {
  int sc[kR8Rows], mn[kR8Rows];
  for (std::uint64_t r = 0; r < kR8Rows; ++r) scale_min(j, rows[r]->scales, sc[r], mn[r]);
  for (int r = 0; r < 4; ++r) {
    out[r] = static_cast<std::uint8_t>(sc[r] | (sc[r + 4] & 48) << 2);
    out[4 + r] = static_cast<std::uint8_t>(mn[r] | (mn[r + 4] & 48) << 2);
    out[8 + r] = static_cast<std::uint8_t>((sc[r + 4] & 15) | (mn[r + 4] & 15) << 4);
  }
}

// The weights into 8-row records, row group g's block b at (g x blocks + b) x record bytes: the scales first (Q4_K:
// d, dmin, then 12 bytes of scales and mins per sub-block), then byte j of row r's nibbles in chunk 8 x (j / 8) + r
// (make_block_q4_0x8 and make_block_q4_Kx8 with an interleave of 8; Q4_0's nibbles xor 0x88).
void pack_r8(QuantMatmul::Data& d) {
  const std::uint64_t nb = d.weight_blocks, record_bytes = r8_record_bytes(d.kind);
  d.packed.assign(d.rows / kR8Rows * nb * record_bytes, 0);
  for (std::uint64_t g = 0; g < d.rows / kR8Rows; ++g) {
    for (std::uint64_t b = 0; b < nb; ++b) {
      std::uint8_t* record = d.packed.data() + (g * nb + b) * record_bytes;
      if (d.kind == QuantKind::q4_0) {
        for (std::uint64_t r = 0; r < kR8Rows; ++r) {
          const BlockQ4_0& w = d.q4_0[(g * kR8Rows + r) * nb + b];
          std::memcpy(record + 2 * r, &w.d, 2);
          for (int j = 0; j < 16; ++j) record[16 + j / 8 * 64 + 8 * r + j % 8] = w.qs[j] ^ 0x88;
        }
        continue;
      }
      const BlockQ4K* rows[kR8Rows];
      for (std::uint64_t r = 0; r < kR8Rows; ++r) {
        rows[r] = &d.q4_k[(g * kR8Rows + r) * nb + b];
        std::memcpy(record + 2 * r, &rows[r]->d, 2);
        std::memcpy(record + 16 + 2 * r, &rows[r]->dmin, 2);
        for (int j = 0; j < 128; ++j) record[128 + j / 8 * 64 + 8 * r + j % 8] = rows[r]->qs[j];
      }
      for (int j = 0; j < 8; ++j) pack_scales_mins(rows, j, record + 32 + 12 * j);
    }
  }
  if (d.tokens > 1) {  // the prompt's activations 4 tokens a block
    if (d.kind == QuantKind::q4_k) {
      d.act_k4.resize(d.tokens / 4 * nb);
      d.work_k4.resize(d.tokens / 4 * nb);
      interleave_4(d.act_k.data(), nb, 0, d.tokens / 4, d.act_k4.data());
    } else {
      d.act8x4.resize(d.tokens / 4 * nb);
      d.work8x4.resize(d.tokens / 4 * nb);
      d.work8 = {};  // requantize_share writes work8x4 instead
      interleave_4(d.act8.data(), nb, 0, d.tokens / 4, d.act8x4.data());
    }
  }
  d.r8 = true;
}

// The 8-row groups of `d` that start in [row_begin, row_end), through the repacked kernels: one token a group at a
// time; a prompt two groups (the last alone where the range holds an odd number) by 16 tokens, Q4_0 a pair of groups
// through all the tokens, Q4_K 16 tokens through all the range's groups, then the tokens left 4 at a time (the loops
// of ggml_gemm_q4_K_8x8_q8_K).
void run_r8(QuantMatmul::Data& d, std::uint64_t row_begin, std::uint64_t row_end) {
  const std::uint64_t nb = d.weight_blocks, end = std::min(row_end, d.rows), record_bytes = r8_record_bytes(d.kind);
  const std::uint64_t first = (row_begin + kR8Rows - 1) / kR8Rows * kR8Rows;
  auto record = [&](std::uint64_t r) { return d.packed.data() + r / kR8Rows * nb * record_bytes; };
  auto pairs = [&](auto&& call) {  // call(row, second record)
    for (std::uint64_t r = first; r < end;) {
      const bool two = r + kR8Rows < end;
      call(r, record(two ? r + kR8Rows : r));
      r += two ? kR8PromptRows : kR8Rows;
    }
  };
  if (d.tokens == 1) {
    for (std::uint64_t r = first; r < end; r += kR8Rows) {
      if (d.kind == QuantKind::q4_k) {
        const auto gemv = d.isa == Isa::avx2_evex ? gemv_q4_k_r8_evex : gemv_q4_k_r8_avx2;
        gemv(record(r), d.act_k.data(), nb, d.out.data() + r);
      } else {
        gemv_q4_0_r8(record(r), d.act8.data(), nb, d.out.data() + r);
      }
    }
  } else if (d.kind == QuantKind::q4_k) {
    std::uint64_t t = 0;
    for (; t + kR8PromptTokens <= d.tokens; t += kR8PromptTokens) {
      pairs([&](std::uint64_t r, const std::uint8_t* second) {
        gemm_q4_k_r8<4>(record(r), second, d.act_k4.data() + t / 4 * nb, nb, d.out.data() + t * d.rows + r, d.rows);
      });
    }
    for (; t < d.tokens; t += 4) {
      pairs([&](std::uint64_t r, const std::uint8_t* second) {
        gemm_q4_k_r8<1>(record(r), second, d.act_k4.data() + t / 4 * nb, nb, d.out.data() + t * d.rows + r, d.rows);
      });
    }
  } else {
    for (std::uint64_t t = 0; t < d.tokens; t += kR8PromptTokens) {
      pairs([&](std::uint64_t r, const std::uint8_t* second) {
        gemm_q4_0_r8(record(r), second, d.act8x4.data() + t / 4 * nb, nb, d.out.data() + t * d.rows + r, d.rows);
      });
    }
  }
}
#endif

// The weights into AMX records, 16 rows x one block each, row group g's block b at (g x blocks + b) x record
// bytes (PACKED_INDEX of mmq.cpp).
void pack_amx(QuantMatmul::Data& d) {
  const std::uint64_t nb = d.weight_blocks, record = amx_record_bytes(d.kind);
  d.packed.assign(d.rows / kAmxTile * nb * record, 0);
  std::uint8_t tile[512];
  for (std::uint64_t g = 0; g < d.rows / kAmxTile; ++g) {
    for (std::uint64_t b = 0; b < nb; ++b) {
      std::uint8_t* p = d.packed.data() + (g * nb + b) * record;
      for (std::size_t n = 0; n < kAmxTile; ++n) {
        const std::uint64_t w = (g * kAmxTile + n) * nb + b;
        switch (d.kind) {
          case QuantKind::q4_0:
            for (int k = 0; k < 32; ++k) {
              tile[vnni_index(k, n)] = static_cast<std::uint8_t>(q4_0_weight(d.q4_0[w], k) + 8);
            }
            std::memcpy(p + 256 + 2 * n, &d.q4_0[w].d, 2);
            break;
          case QuantKind::q8_0: {
            std::int32_t sum = 0;
            for (std::size_t k = 0; k < 32; ++k) {
              p[vnni_index(k, n)] = static_cast<std::uint8_t>(d.q8_0[w].qs[k]);
              sum += d.q8_0[w].qs[k];
            }
            std::memcpy(p + 512 + 2 * n, &d.q8_0[w].d, 2);
            const std::int32_t comp = 128 * sum;
            std::memcpy(p + kQ8_0Comp + 4 * n, &comp, 4);
            break;
          }
          case QuantKind::q4_k:
            for (int j = 0; j < 8; ++j) {
              int scale = 0, min = 0;
              scale_min(j, d.q4_k[w].scales, scale, min);
              p[kQ4KScales + 16 * j + n] = static_cast<std::uint8_t>(scale);
              p[kQ4KMins + 32 * (j / 2) + 2 * n + j % 2] = static_cast<std::uint8_t>(min);
            }
            std::memcpy(p + kQ4KD + 2 * n, &d.q4_k[w].d, 2);
            std::memcpy(p + kQ4KDmin + 2 * n, &d.q4_k[w].dmin, 2);
            break;
          case QuantKind::q6_k:
            for (std::size_t grp = 0; grp < 16; ++grp) {
              p[kQ6KScales + 16 * grp + n] = static_cast<std::uint8_t>(d.q6_k[w].scales[grp]);
              for (std::size_t k = 0; k < 16; ++k) {  // row r = k / 4 of the group, byte 4n + k % 4 of it
                const int q = q6_k_weight(d.q6_k[w], static_cast<int>(16 * grp + k));
                const std::size_t r = k / 4, j = 4 * n + k % 4;
                p[128 * grp + 64 * (r / 2) + j] |= static_cast<std::uint8_t>((q & 0xF) << (4 * (r % 2)));
                p[kQ6KHigh + 64 * grp + j] |= static_cast<std::uint8_t>((q >> 4) << (2 * r));
              }
            }
            std::memcpy(p + kQ6KD + 2 * n, &d.q6_k[w].d, 2);
            break;
        }
      }
      if (d.kind == QuantKind::q4_0) pack_nibbles(tile, p);
      if (d.kind != QuantKind::q4_k) continue;
      for (int j = 0; j < 8; ++j) {  // group j: the low nibbles of bytes 32 (j / 2).. for even j, the high for odd
        for (std::size_t n = 0; n < kAmxTile; ++n) {
          const std::uint8_t* q = d.q4_k[(g * kAmxTile + n) * nb + b].qs + 32 * (j / 2);
          for (std::size_t k = 0; k < 32; ++k) tile[vnni_index(k, n)] = j % 2 == 0 ? q[k] & 0xF : q[k] >> 4;
        }
        pack_nibbles(tile, p + 256 * j);
      }
    }
  }
}

}  // namespace qdot

std::string_view weight_type(QuantKind k) {
  switch (k) {
    case QuantKind::q4_0: return "Q4_0";
    case QuantKind::q8_0: return "Q8_0";
    case QuantKind::q4_k: return "Q4_K";
    case QuantKind::q6_k: return "Q6_K";
  }
  return "";
}

std::string_view activation_type(QuantKind k) { return qdot::k_quant(k) ? "Q8_K" : "Q8_0"; }

std::uint64_t quant_row_bytes(QuantKind kind, std::uint64_t k) {
  switch (kind) {
    case QuantKind::q4_0: return k / 32 * sizeof(qdot::BlockQ4_0);
    case QuantKind::q8_0: return k / 32 * sizeof(qdot::BlockQ8_0);
    case QuantKind::q4_k: return k / 256 * sizeof(qdot::BlockQ4K);
    case QuantKind::q6_k: return k / 256 * sizeof(qdot::BlockQ6K);
  }
  return 0;
}

bool cpu_has_avx2() { return qdot::have_avx2(); }
bool cpu_has_amx() { return qdot::have_amx(); }
bool simd_kernel(QuantKind) { return qdot::have_avx2(); }

std::string_view quant_isa() {
  return qdot::have_amx() ? qdot::isa_name(qdot::Isa::amx)
                          : qdot::isa_name(qdot::kernel_isa(QuantKind::q4_0, QuantIsa::best));
}

QuantMatmul::QuantMatmul(QuantKind kind, std::uint64_t rows, std::uint64_t k, std::uint64_t tokens, QuantIsa isa)
    : data_(std::make_unique<Data>()) {
  if (rows == 0 || k == 0 || k % 256 != 0 || tokens == 0 || (tokens != 1 && tokens % qdot::kTileTokens != 0)) {
    throw std::invalid_argument(fmt::format("quantized matmul of {} x {} x {}: k must be a multiple of 256 and tokens 1 "
                                            "or a multiple of {}", rows, k, tokens, qdot::kTileTokens));
  }
  Data& d = *data_;
  d.kind = kind;
  d.isa = qdot::matmul_isa(kind, isa, rows, tokens);
  d.rows = rows;
  d.k = k;
  d.tokens = tokens;
  qdot::Bytes bytes;
  const bool k_quant = qdot::k_quant(kind);
  d.weight_blocks = k / (k_quant ? 256 : 32);
  d.activation_blocks = d.weight_blocks;
  switch (kind) {
    case QuantKind::q4_0: d.q4_0 = qdot::random_blocks<qdot::BlockQ4_0>(rows * d.weight_blocks, bytes); break;
    case QuantKind::q8_0: d.q8_0 = qdot::random_blocks<qdot::BlockQ8_0>(rows * d.weight_blocks, bytes); break;
    case QuantKind::q4_k: d.q4_k = qdot::random_blocks<qdot::BlockQ4K>(rows * d.weight_blocks, bytes); break;
    case QuantKind::q6_k: d.q6_k = qdot::random_blocks<qdot::BlockQ6K>(rows * d.weight_blocks, bytes); break;
  }
  d.act_f32.resize(tokens * k);
  for (float& x : d.act_f32) x = static_cast<float>(static_cast<int>(bytes.next()) - 128) / 64;
  if (k_quant) {
    d.act_k.resize(tokens * d.activation_blocks);
    d.work_k.resize(tokens * d.activation_blocks);
  } else {
    d.act8.resize(tokens * d.activation_blocks);
    d.work8.resize(tokens * d.activation_blocks);
  }
  qdot::quantize_activations(d, d.act_f32.data(), tokens, d.act8.data(), d.act_k.data());
  d.out.assign(tokens * rows, 0.0f);
  if (d.isa == qdot::Isa::amx) qdot::pack_amx(d);
#if EDGEPLAN_QDOT_X86
  if (qdot::repacks_r8(d)) qdot::pack_r8(d);
#endif
}

QuantMatmul::~QuantMatmul() = default;
QuantMatmul::QuantMatmul(QuantMatmul&&) noexcept = default;
QuantMatmul& QuantMatmul::operator=(QuantMatmul&&) noexcept = default;

namespace qdot {

// Weight row r of `d` (unpacked).
const void* row_weights(const QuantMatmul::Data& d, std::uint64_t r) {
  const std::uint64_t nb = d.weight_blocks;
  switch (d.kind) {
    case QuantKind::q4_0: return d.q4_0.data() + r * nb;
    case QuantKind::q8_0: return d.q8_0.data() + r * nb;
    case QuantKind::q4_k: return d.q4_k.data() + r * nb;
    case QuantKind::q6_k: return d.q6_k.data() + r * nb;
  }
  return nullptr;
}

// The quantized activations of token t of `d`.
const void* token_activations(const QuantMatmul::Data& d, std::uint64_t t) {
  return k_quant(d.kind) ? static_cast<const void*>(d.act_k.data() + t * d.activation_blocks)
                         : static_cast<const void*>(d.act8.data() + t * d.activation_blocks);
}

// Output rows [row_begin, row_end) of `d` for one token: one row a call, straight into the output, as ggml's mul_mat
// calls vec_dot for a decoded token. A row of K = 1,024 is 32 blocks (4 of a K-quant), so what a call costs around
// its loop counts: run_tiles' staging of each row's result cost Q8_0's one-token kernel 13% of its rate on the EPYC
// of docs/accuracy.md.
void run_rows(QuantMatmul::Data& d, std::uint64_t row_begin, std::uint64_t row_end) {
  const Tile tile = tile_for<1>(d.kind, d.isa);
  const void* a = token_activations(d, 0);
  const std::uint64_t nb = d.weight_blocks, end = std::min(row_end, d.rows);
  for (std::uint64_t r = row_begin; r < end; ++r) tile(row_weights(d, r), a, nb, nb, d.out.data() + r);
}

// Output rows [row_begin, row_end) of `d` for every token, in tiles of T tokens.
template <std::uint64_t T>
void run_tiles(QuantMatmul::Data& d, std::uint64_t row_begin, std::uint64_t row_end) {
  const Tile tile = tile_for<T>(d.kind, d.isa);
  const RowsTile many = rows_tile_for<T>(d.kind, d.isa);
  const std::uint64_t nb = d.weight_blocks, end = std::min(row_end, d.rows);
  for (std::uint64_t r = row_begin; r < end;) {
    const std::uint64_t n = many.run && r + many.rows <= end ? many.rows : 1;
    const void* w[kMaxTileRows];
    float out[kMaxTileRows][T];
    float* outs[kMaxTileRows];
    for (std::uint64_t q = 0; q < n; ++q) {
      w[q] = row_weights(d, r + q);
      outs[q] = out[q];
    }
    for (std::uint64_t t = 0; t < d.tokens; t += T) {
      const void* a = token_activations(d, t);
      if (n > 1) {
        many.run(w, a, nb, nb, outs);
      } else {
        tile(w[0], a, nb, nb, out[0]);
      }
      for (std::uint64_t q = 0; q < n; ++q) {
        for (std::uint64_t i = 0; i < T; ++i) d.out[(t + i) * d.rows + r + q] = out[q][i];
      }
    }
    r += n;
  }
}

#if EDGEPLAN_QDOT_X86
// The 32-row blocks of `d` that start in [row_begin, row_end), for every 32 tokens, through the AMX kernels.
EDGEPLAN_QDOT_AMX void run_amx(QuantMatmul::Data& d, std::uint64_t row_begin, std::uint64_t row_end) {
  amx_configure();
  const std::uint64_t nb = d.weight_blocks, record = amx_record_bytes(d.kind), group = nb * record;
  const std::uint64_t end = std::min(row_end, d.rows);
  for (std::uint64_t t = 0; t < d.tokens; t += kAmxBlock) {
    for (std::uint64_t r = (row_begin + kAmxBlock - 1) / kAmxBlock * kAmxBlock; r < end; r += kAmxBlock) {
      const std::uint8_t* w0 = d.packed.data() + r / kAmxTile * group;
      float* c = d.out.data() + t * d.rows + r;
      switch (d.kind) {
        case QuantKind::q4_0: amx_block_q8<true>(w0, w0 + group, record, d.act8.data() + t * nb, nb, c, d.rows); break;
        case QuantKind::q8_0: amx_block_q8<false>(w0, w0 + group, record, d.act8.data() + t * nb, nb, c, d.rows); break;
        case QuantKind::q4_k:
          amx_block_k<QuantKind::q4_k>(w0, w0 + group, record, d.act_k.data() + t * nb, nb, c, d.rows);
          break;
        case QuantKind::q6_k:
          amx_block_k<QuantKind::q6_k>(w0, w0 + group, record, d.act_k.data() + t * nb, nb, c, d.rows);
          break;
      }
    }
  }
}

// One token over the 64-row blocks of `d` that start in [row_begin, row_end) (the last block 32 rows where the
// rows are an odd number of 32s), as ggml_backend_amx_mul_mat's M == 1 path splits them.
EDGEPLAN_QDOT_AMX void run_amx_gemv(QuantMatmul::Data& d, std::uint64_t row_begin, std::uint64_t row_end) {
  constexpr std::uint64_t kRows = 4 * kAmxTile;
  const std::uint64_t nb = d.weight_blocks, record = amx_record_bytes(d.kind), group = nb * record;
  const std::uint64_t end = std::min(row_end, d.rows);
  for (std::uint64_t r = (row_begin + kRows - 1) / kRows * kRows; r < end; r += kRows) {
    const std::uint8_t* w = d.packed.data() + r / kAmxTile * group;
    float* c = d.out.data() + r;
    const bool full = d.rows - r >= kRows;
    switch (d.kind) {
      case QuantKind::q4_0:
        full ? gemv_packed_q8<4, true>(w, group, record, d.act8.data(), nb, c)
             : gemv_packed_q8<2, true>(w, group, record, d.act8.data(), nb, c);
        break;
      case QuantKind::q8_0:
        full ? gemv_packed_q8<4, false>(w, group, record, d.act8.data(), nb, c)
             : gemv_packed_q8<2, false>(w, group, record, d.act8.data(), nb, c);
        break;
      case QuantKind::q4_k:
        full ? gemv_packed_q4_k<4>(w, group, record, d.act_k.data(), nb, c)
             : gemv_packed_q4_k<2>(w, group, record, d.act_k.data(), nb, c);
        break;
      case QuantKind::q6_k:
        full ? gemv_packed_q6_k<4>(w, group, record, d.act_k.data(), nb, c)
             : gemv_packed_q6_k<2>(w, group, record, d.act_k.data(), nb, c);
        break;
    }
  }
}
#endif

}  // namespace qdot

void QuantMatmul::run(std::uint64_t row_begin, std::uint64_t row_end) {
  qdot::requantize_share(*data_, row_begin, row_end);
#if EDGEPLAN_QDOT_X86
  if (data_->isa == qdot::Isa::amx) {
    data_->tokens == 1 ? qdot::run_amx_gemv(*data_, row_begin, row_end) : qdot::run_amx(*data_, row_begin, row_end);
    return;
  }
  if (data_->r8) {
    qdot::run_r8(*data_, row_begin, row_end);
    return;
  }
#endif
  if (data_->tokens == 1) {
    qdot::run_rows(*data_, row_begin, row_end);
  } else {
    qdot::run_tiles<qdot::kTileTokens>(*data_, row_begin, row_end);
  }
}

double QuantMatmul::flops() const {
  return 2.0 * static_cast<double>(data_->rows) * static_cast<double>(data_->k) * static_cast<double>(data_->tokens);
}

std::uint64_t QuantMatmul::rows() const { return data_->rows; }

std::uint64_t QuantMatmul::chunk_rows(unsigned threads) const {
  const Data& d = *data_;
  if (d.r8) {  // repack.cpp's forward_mul_mat: 4 chunks a thread, on 8-row boundaries
    const std::uint64_t chunk = (d.rows + 4ull * threads - 1) / (4ull * threads);
    return std::max<std::uint64_t>(qdot::kR8Rows, (chunk + qdot::kR8Rows - 1) / qdot::kR8Rows * qdot::kR8Rows);
  }
  return d.tokens == 1 && d.isa != qdot::Isa::amx ? qdot::kGemvChunkRows : 0;
}

std::string QuantMatmul::kernel() const {
  if (data_->isa == qdot::Isa::amx && data_->tokens == 1) {
    return fmt::format("{} x {} int8 dot products, 64x1 tile, AVX-512 VNNI on AMX-packed weights",
                       weight_type(data_->kind), activation_type(data_->kind));
  }
  if (data_->isa == qdot::Isa::amx) {
    return fmt::format("{} x {} int8 dot products, {}x{} tile, AMX", weight_type(data_->kind),
                       activation_type(data_->kind), qdot::kAmxBlock, qdot::kAmxBlock);
  }
  if (data_->r8) {
    return fmt::format("{} x {} int8 dot products, {} tile on 8-row interleaved weights, {}", weight_type(data_->kind),
                       activation_type(data_->kind),
                       data_->tokens == 1 ? "8x1" : "16x16",
                       qdot::isa_name(data_->isa));
  }
  const qdot::RowsTile many = data_->tokens == 1 ? qdot::rows_tile_for<1>(data_->kind, data_->isa)
                                                 : qdot::rows_tile_for<qdot::kTileTokens>(data_->kind, data_->isa);
  // Q6_K's vector tiles are one row by one token (tile_q6_k), whatever the tokens.
  const bool one_token = data_->tokens == 1 || (data_->kind == QuantKind::q6_k && qdot::avx2_code(data_->isa));
  return fmt::format("{} x {} int8 dot products, {}x{} tile, {}", weight_type(data_->kind), activation_type(data_->kind),
                     many.rows, many.run ? many.tokens : one_token ? 1 : qdot::kTileTokens,
                     qdot::isa_name(data_->isa));
}

std::span<const float> QuantMatmul::output() const { return data_->out; }

}  // namespace edgeplan::io
