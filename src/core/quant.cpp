#include "edgeplan/core/quant.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "edgeplan/core/float16.hpp"
#include "edgeplan/core/formats.hpp"
#include "edgeplan/util/parallel.hpp"
#include "edgeplan/util/names.hpp"

namespace edgeplan {
namespace {

constexpr std::uint64_t kGgmlBlock = 32;

std::vector<QuantMethod> make_methods() {
  std::vector<QuantMethod> out;
  for (std::uint32_t bits : {8u, 4u}) {
    for (QuantScheme scheme : {QuantScheme::symmetric, QuantScheme::asymmetric}) {
      const std::string stem =
          "int" + std::to_string(bits) + (scheme == QuantScheme::symmetric ? "-sym-" : "-asym-");
      out.push_back({stem + "tensor", scheme, bits, Granularity::tensor, 0});
      out.push_back({stem + "channel", scheme, bits, Granularity::channel, 0});
      for (std::uint64_t g : {32u, 64u, 128u}) {
        out.push_back({stem + "g" + std::to_string(g), scheme, bits, Granularity::group, g});
      }
    }
  }
  out.push_back({"q8_0", QuantScheme::q8_0, 8, Granularity::group, kGgmlBlock});
  out.push_back({"q4_0", QuantScheme::q4_0, 4, Granularity::group, kGgmlBlock});
  return out;
}

bool is_ggml(const QuantMethod& m) { return m.scheme == QuantScheme::q8_0 || m.scheme == QuantScheme::q4_0; }

// How one group is quantized: code = round(clamp(w x inv_scale + zero_point, lo, hi)),
// ŵ = (code - zero_point) x scale.
struct GroupParams {
  float inv_scale = 1;
  float scale = 1;
  float zero_point = 0;
  float lo = 0;
  float hi = 0;
};

// The value range of a group.
struct Range {
  float min = 0;
  float max = 0;
};

Range range_of(std::span<const float> v) {
  Range r{v[0], v[0]};
  for (float x : v) {
    r.min = std::min(r.min, x);
    r.max = std::max(r.max, x);
  }
  return r;
}

GroupParams group_params(const QuantMethod& m, Range r) {
  GroupParams p;
  const float amax = std::max(std::fabs(r.min), std::fabs(r.max));
  switch (m.scheme) {
    case QuantScheme::symmetric: {
      const auto qmax = static_cast<float>((1u << (m.bits - 1)) - 1);
      p.scale = amax > 0 ? amax / qmax : 1.0f;
      p.inv_scale = 1.0f / p.scale;
      p.lo = -qmax;
      p.hi = qmax;
      break;
    }
    case QuantScheme::asymmetric: {
      const auto levels = static_cast<float>((1u << m.bits) - 1);
      const float lo = std::min(r.min, 0.0f), hi = std::max(r.max, 0.0f);
      p.scale = hi > lo ? (hi - lo) / levels : 1.0f;
      p.inv_scale = 1.0f / p.scale;
      p.zero_point = std::clamp(std::nearbyint(-lo * p.inv_scale), 0.0f, levels);
      p.lo = 0;
      p.hi = levels;
      break;
    }
    case QuantScheme::q8_0: {
      const float d = amax / 127.0f;
      p.inv_scale = d > 0 ? 1.0f / d : 0.0f;
      p.scale = f16_to_f32(f32_to_f16(d));
      p.lo = -127;
      p.hi = 127;
      break;
    }
    case QuantScheme::q4_0: {
      const float extreme = std::fabs(r.min) > std::fabs(r.max) ? r.min : r.max;
      const float d = extreme / -8.0f;
      p.inv_scale = d != 0 ? 1.0f / d : 0.0f;
      p.scale = f16_to_f32(f32_to_f16(d));
      p.lo = -8;
      p.hi = 7;
      break;
    }
  }
  return p;
}

// Round to nearest, ties to even, for |v| < 2^22 (codes are at most 255): vectorises, unlike nearbyint.
inline float round_even(float v) {
  constexpr float kMagic = 12582912.0f;  // 1.5 x 2^23
  return (v + kMagic) - kMagic;
}

// Quantizes one group into codes (when given) and dequantized values.
void quantize_group(const GroupParams& p, std::span<const float> w, std::int16_t* codes, float* deq) {
  const std::size_t n = w.size();
  for (std::size_t i = 0; i < n; ++i) {
    const float q = round_even(std::clamp(w[i] * p.inv_scale + p.zero_point, p.lo, p.hi));
    deq[i] = (q - p.zero_point) * p.scale;
    if (codes) codes[i] = static_cast<std::int16_t>(q);
  }
}

std::uint64_t weights_per_group(const QuantMethod& m, std::uint64_t cols) {
  return m.granularity == Granularity::group ? m.group_weights : cols;
}

std::uint64_t groups_per_row(const QuantMethod& m, std::uint64_t cols) {
  const std::uint64_t g = weights_per_group(m, cols);
  return (cols + g - 1) / g;
}

std::optional<Error> check_shape(const QuantMethod& m, const MatrixView& w) {
  if (w.rows == 0 || w.cols == 0) return Error{"the matrix is empty"};
  if (w.values.size() != w.rows * w.cols) {
    return Error{"the matrix has " + std::to_string(w.values.size()) + " values, not rows x cols = " +
                 std::to_string(w.rows * w.cols)};
  }
  if (is_ggml(m) && w.cols % kGgmlBlock != 0) {
    return Error{m.name + " needs rows whose length is a multiple of 32 (got " + std::to_string(w.cols) + ")"};
  }
  return std::nullopt;
}

// Quantizes row `r` of w, group by group; `tensor` holds the parameters of a per-tensor method.
// Writes the row's dequantized values, and codes / scales / zero points when the pointers are given.
void quantize_row(const QuantMethod& m, const MatrixView& w, std::uint64_t r, const GroupParams& tensor,
                  float* deq, std::int16_t* codes, float* scales, float* zeros) {
  const std::span<const float> row = w.values.subspan(r * w.cols, w.cols);
  const std::uint64_t g = weights_per_group(m, w.cols);
  for (std::uint64_t start = 0, i = 0; start < w.cols; start += g, ++i) {
    const std::span<const float> part = row.subspan(start, std::min(g, w.cols - start));
    const GroupParams p = m.granularity == Granularity::tensor ? tensor : group_params(m, range_of(part));
    quantize_group(p, part, codes ? codes + start : nullptr, deq + start);
    if (scales) scales[i] = p.scale;
    if (zeros) zeros[i] = p.zero_point;
  }
}

GroupParams tensor_params(const QuantMethod& m, const MatrixView& w, unsigned threads) {
  if (m.granularity != Granularity::tensor) return {};
  std::vector<Range> per_row(w.rows);
  util::parallel_for(w.rows, [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t r = begin; r < end; ++r) per_row[r] = range_of(w.values.subspan(r * w.cols, w.cols));
  }, 1, threads);
  Range all = per_row[0];
  for (const Range& r : per_row) all = {std::min(all.min, r.min), std::max(all.max, r.max)};
  return group_params(m, all);
}

// Sums over a row in 16 independent fp32 lanes, so the compiler can vectorise them; the lane order is fixed,
// so the result does not depend on the machine's vector width. Rows are summed in double.
constexpr std::size_t kLanes = 16;
using Lanes = std::array<float, kLanes>;

double lane_sum(const Lanes& lanes) {
  double s = 0;
  for (float v : lanes) s += v;
  return s;
}

double dot(const float* a, const float* b, std::uint64_t n) {
  Lanes acc{};
  std::uint64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (std::size_t l = 0; l < kLanes; ++l) acc[l] += a[i + l] * b[i + l];
  }
  for (; i < n; ++i) acc[0] += a[i] * b[i];
  return lane_sum(acc);
}

// What one row contributes to the metrics.
struct RowStats {
  double sum_abs = 0;
  double sum_sq = 0;
  double max_abs = 0;
};

RowStats row_stats(const float* w, const float* deq, std::uint64_t n) {
  Lanes abs{}, sq{}, mx{};
  std::uint64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (std::size_t l = 0; l < kLanes; ++l) {
      const float e = std::fabs(deq[i + l] - w[i + l]);
      abs[l] += e;
      sq[l] += e * e;
      mx[l] = std::max(mx[l], e);
    }
  }
  for (; i < n; ++i) {
    const float e = std::fabs(deq[i] - w[i]);
    abs[0] += e;
    sq[0] += e * e;
    mx[0] = std::max(mx[0], e);
  }
  return {lane_sum(abs), lane_sum(sq), *std::max_element(mx.begin(), mx.end())};
}

}  // namespace

std::span<const QuantMethod> quant_methods() {
  static const std::vector<QuantMethod> methods = make_methods();
  return methods;
}

const QuantMethod* find_quant_method(std::string_view name) {
  return util::find_named(quant_methods(), name, [](const QuantMethod& m) { return m.name; });
}

Result<Quantized> quantize(const QuantMethod& m, const MatrixView& w) {
  if (auto e = check_shape(m, w)) return *e;
  const GroupParams tensor = tensor_params(m, w, 1);
  const std::uint64_t groups = groups_per_row(m, w.cols);
  Quantized q;
  q.codes.resize(w.values.size());
  q.dequantized.resize(w.values.size());
  q.scales.resize(m.granularity == Granularity::tensor ? 1 : w.rows * groups);
  q.zero_points.resize(q.scales.size());
  for (std::uint64_t r = 0; r < w.rows; ++r) {
    const bool own = m.granularity != Granularity::tensor;
    quantize_row(m, w, r, tensor, q.dequantized.data() + r * w.cols, q.codes.data() + r * w.cols,
                 own ? q.scales.data() + r * groups : nullptr, own ? q.zero_points.data() + r * groups : nullptr);
  }
  if (m.granularity == Granularity::tensor) {
    q.scales[0] = tensor.scale;
    q.zero_points[0] = tensor.zero_point;
  }
  return q;
}

QuantBytes quant_bytes(const QuantMethod& m, std::uint64_t rows, std::uint64_t cols) {
  QuantBytes b;
  const auto weights = static_cast<double>(rows * cols);
  b.fp32_bytes = weights * 4;
  if (is_ggml(m)) {
    const GgmlType* t = find_ggml_type(m.scheme == QuantScheme::q8_0 ? "Q8_0" : "Q4_0");
    b.total_bytes = static_cast<double>(tensor_bytes(*t, cols, rows).value_or(0));
    b.payload_bytes = weights * m.bits / 8;
    b.scale_bytes = b.total_bytes - b.payload_bytes;
    return b;
  }
  const double groups = m.granularity == Granularity::tensor ? 1.0 : static_cast<double>(rows * groups_per_row(m, cols));
  b.payload_bytes = static_cast<double>(rows * ((cols * m.bits + 7) / 8));
  b.scale_bytes = groups * 4;
  if (m.scheme == QuantScheme::asymmetric) b.zero_point_bytes = std::ceil(groups * m.bits / 8);
  b.total_bytes = b.payload_bytes + b.scale_bytes + b.zero_point_bytes;
  return b;
}

Result<QuantError> evaluate(const QuantMethod& m, const MatrixView& w, const MatrixView& inputs, unsigned threads) {
  if (auto e = check_shape(m, w)) return *e;
  if (inputs.cols != w.cols || inputs.rows == 0 || inputs.values.size() != inputs.rows * inputs.cols) {
    return Error{"the inputs must be vectors of length " + std::to_string(w.cols)};
  }
  const GroupParams tensor = tensor_params(m, w, threads);
  const std::uint64_t k = inputs.rows;
  std::vector<RowStats> stats(w.rows);
  std::vector<double> y(w.rows * k), y_hat(w.rows * k);  // W.x and Ŵ.x, row-major by output
  util::parallel_for(w.rows, [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    std::vector<float> deq(w.cols);
    for (std::uint64_t r = begin; r < end; ++r) {
      quantize_row(m, w, r, tensor, deq.data(), nullptr, nullptr, nullptr);
      const float* row = w.values.data() + r * w.cols;
      stats[r] = row_stats(row, deq.data(), w.cols);
      for (std::uint64_t j = 0; j < k; ++j) {
        const float* x = inputs.values.data() + j * w.cols;
        y[r * k + j] = dot(row, x, w.cols);
        y_hat[r * k + j] = dot(deq.data(), x, w.cols);
      }
    }
  }, 1, threads);
  QuantError out;
  double sum_abs = 0, sum_sq = 0;
  for (const RowStats& s : stats) {
    sum_abs += s.sum_abs;
    sum_sq += s.sum_sq;
    out.max_abs_error = std::max(out.max_abs_error, s.max_abs);
  }
  const auto n = static_cast<double>(w.values.size());
  out.mean_abs_error = sum_abs / n;
  out.rmse = std::sqrt(sum_sq / n);
  for (std::uint64_t j = 0; j < k; ++j) {
    double yy = 0, hh = 0, yh = 0;
    for (std::uint64_t r = 0; r < w.rows; ++r) {
      const double a = y[r * k + j], b = y_hat[r * k + j];
      yy += a * a;
      hh += b * b;
      yh += a * b;
    }
    const double cosine = (yy == 0 && hh == 0) ? 1.0 : (yy == 0 || hh == 0) ? 0.0 : yh / std::sqrt(yy * hh);
    out.cosine = std::min(out.cosine, cosine);
  }
  return out;
}

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double SplitMix64::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double SplitMix64::normal() {
  const double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::vector<float> synthetic_matrix(const SyntheticSpec& s) {
  SplitMix64 rng(s.seed);
  std::vector<float> out;
  out.reserve(s.rows * s.cols);
  for (std::uint64_t r = 0; r < s.rows; ++r) {
    const bool outlier = rng.uniform() < s.outlier_fraction;
    const double factor = s.outlier_min + (s.outlier_max - s.outlier_min) * rng.uniform();
    const double std = s.std * (outlier ? factor : 1.0);
    for (std::uint64_t c = 0; c < s.cols; ++c) out.push_back(static_cast<float>(std * rng.normal()));
  }
  return out;
}

std::vector<float> random_normal(std::uint64_t count, std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<float> out(count);
  for (float& v : out) v = static_cast<float>(rng.normal());
  return out;
}

}  // namespace edgeplan
