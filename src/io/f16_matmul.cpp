#include "edgeplan/io/f16_matmul.hpp"

#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "edgeplan/core/float16.hpp"
#include "edgeplan/io/kernel_parts.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define EDGEPLAN_F16MM_X86 1
#endif

namespace edgeplan::io {
namespace f16mm {

constexpr int kTileRows = 4, kTileTokens = 3, kLanes = 8;  // tinyBLAS's tile for 16 vector registers, 8 fp32 lanes

// One tile of R weight rows x T tokens (R <= kTileRows, T <= kTileTokens; the smaller ones finish the edges):
// out[t * out_stride + r] = w row r . a row t over k. The lanes are kept as the AVX2 kernel keeps them (lane l sums
// the products of k = l, l + 8, ... below the last multiple of 8), then summed in its order, and the last k % 8
// products added one by one, so the two agree but for the fused roundings.
using Tile = void (*)(const std::uint16_t* w, const std::uint16_t* a, std::uint64_t k, float* out,
                      std::uint64_t out_stride, int rows, int tokens);

float lane_sum(const float* lanes) {  // the order of the AVX2 kernel's horizontal sum
  const float s0 = lanes[0] + lanes[4], s1 = lanes[1] + lanes[5], s2 = lanes[2] + lanes[6], s3 = lanes[3] + lanes[7];
  return (s0 + s2) + (s1 + s3);
}

// w row r . a row t over [from, k), one product at a time: the tail past the last multiple of 8.
float dot_tail(const std::uint16_t* w, const std::uint16_t* a, std::uint64_t from, std::uint64_t k) {
  float sum = 0;
  for (std::uint64_t i = from; i < k; ++i) sum += f16_to_f32(w[i]) * f16_to_f32(a[i]);
  return sum;
}

void tile_scalar(const std::uint16_t* w, const std::uint16_t* a, std::uint64_t k, float* out, std::uint64_t out_stride,
                 int rows, int tokens) {
  const std::uint64_t k8 = k / kLanes * kLanes;
  float acc[kTileRows][kTileTokens][kLanes] = {};
  for (std::uint64_t i = 0; i < k8; i += kLanes) {
    for (int r = 0; r < rows; ++r) {
      for (int t = 0; t < tokens; ++t) {
        for (int l = 0; l < kLanes; ++l) {
          acc[r][t][l] += f16_to_f32(w[r * k + i + l]) * f16_to_f32(a[t * k + i + l]);
        }
      }
    }
  }
  for (int r = 0; r < rows; ++r) {
    for (int t = 0; t < tokens; ++t) {
      out[t * out_stride + r] = lane_sum(acc[r][t]) + dot_tail(w + r * k, a + t * k, k8, k);
    }
  }
}

#if EDGEPLAN_F16MM_X86
#define EDGEPLAN_F16MM_AVX2 __attribute__((target("avx2,fma,f16c")))

EDGEPLAN_F16MM_AVX2 __m256 load_half8(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}


template <int R, int T>
EDGEPLAN_F16MM_AVX2 void tile_avx2_fixed(const std::uint16_t* w, const std::uint16_t* a, std::uint64_t k, float* out,
                                         std::uint64_t out_stride) {
  __m256 acc[R][T];
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  }
  const std::uint64_t k8 = k / kLanes * kLanes;
  for (std::uint64_t i = 0; i < k8; i += kLanes) {
    __m256 x[T];
    for (int t = 0; t < T; ++t) x[t] = load_half8(a + t * k + i);
    for (int r = 0; r < R; ++r) {
      const __m256 y = load_half8(w + r * k + i);
      for (int t = 0; t < T; ++t) acc[r][t] = _mm256_fmadd_ps(y, x[t], acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) out[t * out_stride + r] = kernel_parts::hsum(acc[r][t]) + dot_tail(w + r * k, a + t * k, k8, k);
  }
}

template <int R>
EDGEPLAN_F16MM_AVX2 void tile_avx2_rows(const std::uint16_t* w, const std::uint16_t* a, std::uint64_t k, float* out,
                                        std::uint64_t out_stride, int tokens) {
  switch (tokens) {
    case 3: tile_avx2_fixed<R, 3>(w, a, k, out, out_stride); break;
    case 2: tile_avx2_fixed<R, 2>(w, a, k, out, out_stride); break;
    default: tile_avx2_fixed<R, 1>(w, a, k, out, out_stride); break;
  }
}

EDGEPLAN_F16MM_AVX2 void tile_avx2(const std::uint16_t* w, const std::uint16_t* a, std::uint64_t k, float* out,
                                   std::uint64_t out_stride, int rows, int tokens) {
  switch (rows) {
    case 4: tile_avx2_rows<4>(w, a, k, out, out_stride, tokens); break;
    case 3: tile_avx2_rows<3>(w, a, k, out, out_stride, tokens); break;
    case 2: tile_avx2_rows<2>(w, a, k, out, out_stride, tokens); break;
    default: tile_avx2_rows<1>(w, a, k, out, out_stride, tokens); break;
  }
}
#endif

// Values in [-1, 1) in steps of 1/128, exact in fp16, from the kernels' fixed stream.
kernel_parts::AlignedVector<std::uint16_t> random_halves(std::uint64_t count, kernel_parts::Bytes& bytes) {
  kernel_parts::AlignedVector<std::uint16_t> v(count);
  for (std::uint16_t& h : v) h = f32_to_f16(static_cast<float>(static_cast<int>(bytes.next()) - 128) / 128.0f);
  return v;
}

}  // namespace f16mm

struct F16Matmul::Data {
  bool avx2 = false;
  std::uint64_t rows = 0, k = 0, tokens = 0;
  kernel_parts::AlignedVector<std::uint16_t> w, a;  // on 64-byte boundaries, as ggml's buffers hold them
  kernel_parts::AlignedVector<float> out;
};

F16Matmul::F16Matmul(std::uint64_t rows, std::uint64_t k, std::uint64_t tokens, QuantIsa isa)
    : data_(std::make_unique<Data>()) {
  if (rows == 0 || tokens == 0 || k == 0) {
    throw std::invalid_argument(fmt::format("fp16 matmul of {} x {} x {}: every size must be positive", rows, k, tokens));
  }
  Data& d = *data_;
  d.avx2 = isa != QuantIsa::scalar && cpu_has_avx2();
  d.rows = rows;
  d.k = k;
  d.tokens = tokens;
  kernel_parts::Bytes bytes;
  d.w = f16mm::random_halves(rows * k, bytes);
  d.a = f16mm::random_halves(tokens * k, bytes);
  d.out.assign(tokens * rows, 0.0f);
}

F16Matmul::~F16Matmul() = default;
F16Matmul::F16Matmul(F16Matmul&&) noexcept = default;
F16Matmul& F16Matmul::operator=(F16Matmul&&) noexcept = default;

void F16Matmul::run(std::uint64_t row_begin, std::uint64_t row_end) {
  Data& d = *data_;
  f16mm::Tile tile = f16mm::tile_scalar;
#if EDGEPLAN_F16MM_X86
  if (d.avx2) tile = f16mm::tile_avx2;
#endif
  row_end = std::min(row_end, d.rows);
  for (std::uint64_t r = row_begin; r < row_end; r += f16mm::kTileRows) {  // these rows meet every token
    const int rows = static_cast<int>(std::min<std::uint64_t>(f16mm::kTileRows, row_end - r));
    for (std::uint64_t t = 0; t < d.tokens; t += f16mm::kTileTokens) {
      const int tokens = static_cast<int>(std::min<std::uint64_t>(f16mm::kTileTokens, d.tokens - t));
      tile(d.w.data() + r * d.k, d.a.data() + t * d.k, d.k, d.out.data() + t * d.rows + r, d.rows, rows, tokens);
    }
  }
}

double F16Matmul::flops() const {
  return 2.0 * static_cast<double>(data_->rows) * static_cast<double>(data_->k) * static_cast<double>(data_->tokens);
}

std::uint64_t F16Matmul::rows() const { return data_->rows; }

std::string F16Matmul::kernel() const {
  return fmt::format("F16 x F16 fp32 FMA, {}x{} tile, {}", f16mm::kTileRows, f16mm::kTileTokens,
                     data_->avx2 ? "AVX2" : "scalar");
}

std::span<const float> F16Matmul::output() const { return data_->out; }
std::span<std::uint16_t> F16Matmul::weights() { return data_->w; }
std::span<std::uint16_t> F16Matmul::activations() { return data_->a; }

}  // namespace edgeplan::io
