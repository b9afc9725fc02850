// Weight quantization error: quantize a weight matrix W (rows = output channels, row-major) to integers,
// dequantize it back to Ŵ, and measure what was lost.
//   symmetric, b bits:   s = max|w| / (2^(b-1) - 1),  q = round(clamp(w / s, -qmax, qmax)),  ŵ = s x q
//   asymmetric, b bits:  s = (max' - min') / (2^b - 1) with the range widened to hold 0 (min' = min(min, 0),
//                        max' = max(max, 0)), zero point z = round(-min' / s), q = clamp(round(w / s) + z,
//                        0, 2^b - 1),  ŵ = s x (q - z)
//   ggml Q8_0:  blocks of 32, d = max|w| / 127, q = round(w / d), ŵ = fp16(d) x q
//   ggml Q4_0:  blocks of 32, d = m / -8 where m is the value of largest magnitude, q = clamp(round(w / d),
//               -8, 7), ŵ = fp16(d) x q
// with one scale per tensor, per output channel (row) or per group of G consecutive weights of a row (the
// last group of a row may be shorter). Rounding is to nearest, ties to even (numpy's np.round); ggml rounds
// ties away from zero, which differs only on exact ties. An all-zero group gets s = 1 (every q = 0).
// Metrics: mean absolute error, max error and RMSE of Ŵ - W over all weights, and the cosine similarity of
// W.x and Ŵ.x for random normal inputs x (the lowest over the inputs).
// Bytes: the integer payload (b bits per weight, rows packed to whole bytes), fp32 scales and b-bit zero
// points per group; Q8_0 / Q4_0 cost their ggml block bytes (34 and 18 per 32 weights, fp16 scale included).
// Source: the deployment walkthrough's quantize_fp32_to_int8 (per-channel vs per-tensor, MAE, cosine of W.x,
// 4.00x FP32 -> INT8 without scales, ~3% scale overhead at 128 weights per fp32 scale) and ggml's
// quantize_row_q8_0 / quantize_row_q4_0 reference code. Documented in docs/model.md, section "quant".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/util/result.hpp"

namespace edgeplan {

enum class QuantScheme { symmetric, asymmetric, q8_0, q4_0 };
enum class Granularity { tensor, channel, group };

struct QuantMethod {
  std::string name;                       // "int8-sym-channel", "int4-asym-g128", "q8_0"
  QuantScheme scheme = QuantScheme::symmetric;
  std::uint32_t bits = 8;                 // 8 or 4
  Granularity granularity = Granularity::channel;
  std::uint64_t group_weights = 0;        // weights per scale with Granularity::group (32 for q8_0 / q4_0)
};

// Every method: int8 and int4, symmetric and asymmetric, per tensor / channel / group of 32, 64, 128, then
// q8_0 and q4_0.
std::span<const QuantMethod> quant_methods();
const QuantMethod* find_quant_method(std::string_view name);  // case-insensitive; nullptr when unknown

// A row-major matrix of fp32 values.
struct MatrixView {
  std::span<const float> values;  // rows x cols
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
};

// The quantized form of a matrix, as integers before bit packing, with one scale per group.
struct Quantized {
  std::vector<std::int16_t> codes;   // rows x cols: -qmax..qmax (symmetric, q8_0), 0..2^b-1 (asymmetric), -8..7 (q4_0)
  std::vector<float> scales;         // dequantization scale per group, in row order (fp16-rounded for q8_0 / q4_0)
  std::vector<float> zero_points;    // per group; 0 for the symmetric schemes
  std::vector<float> dequantized;    // rows x cols: Ŵ
};

// Fails when the method cannot store the shape (q8_0 / q4_0 need rows whose length is a multiple of 32) or
// the matrix is empty or its size is not rows x cols.
Result<Quantized> quantize(const QuantMethod& m, const MatrixView& w);

struct QuantBytes {
  double fp32_bytes = 0;        // rows x cols x 4
  double payload_bytes = 0;     // the integers
  double scale_bytes = 0;       // fp32 scales (fp16 for q8_0 / q4_0)
  double zero_point_bytes = 0;  // asymmetric only
  double total_bytes = 0;       // payload + scales + zero points
};

QuantBytes quant_bytes(const QuantMethod& m, std::uint64_t rows, std::uint64_t cols);

struct QuantError {
  double mean_abs_error = 0;  // mean |ŵ - w|
  double max_abs_error = 0;   // max |ŵ - w|
  double rmse = 0;            // sqrt(mean (ŵ - w)^2)
  double cosine = 1;          // lowest cosine similarity of W.x and Ŵ.x over the inputs (1 when both are 0)
};

// Quantizes and measures in one pass over the rows, on `threads` threads (results do not depend on the
// count). `inputs` holds the input vectors x as rows of length w.cols. Fails as quantize() does, or when
// the inputs' length differs from w.cols.
Result<QuantError> evaluate(const QuantMethod& m, const MatrixView& w, const MatrixView& inputs, unsigned threads);

// SplitMix64 (Steele, Lea and Flood, 2014): the fixed PRNG behind every synthetic matrix, so that a seed
// gives the same matrix on every machine.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  double uniform();  // [0, 1) from the top 53 bits
  double normal();   // standard normal by Box-Muller (the cosine branch, one uniform pair per value)

 private:
  std::uint64_t state_;
};

// The walkthrough's test matrix: N(0, std^2) weights in which each row, with probability
// outlier_fraction, is scaled by a factor drawn uniformly from [outlier_min, outlier_max] ("some channels
// are 2-3x larger"). Per row the PRNG gives the outlier draw, the factor draw (always taken), then the cols
// normal values.
struct SyntheticSpec {
  std::uint64_t rows = 512;
  std::uint64_t cols = 512;
  double std = 0.02;
  double outlier_fraction = 0.1;
  double outlier_min = 2;
  double outlier_max = 3;
  std::uint64_t seed = 42;
};

std::vector<float> synthetic_matrix(const SyntheticSpec& s);

// count standard normal values from SplitMix64(seed): the random inputs x.
std::vector<float> random_normal(std::uint64_t count, std::uint64_t seed);

}  // namespace edgeplan
