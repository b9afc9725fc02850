// Calibration: fit a device's decode and prefill parameters to measured throughput.
//   decode:  time/token t = b / (bandwidth x utilization) + overhead  (core/decode.hpp), linear in the bytes
//            read per token b. Ordinary least squares of t on b over the measurements gives the slope
//            a = 1 / (bandwidth x utilization) and the intercept = overhead; with a negative intercept the fit
//            is redone through the origin (overhead 0). With a single distinct b the two cannot be told
//            apart: the overhead is kept as given and only the slope is fitted, a = sum b(t - o) / sum b^2
//            (also when the line's slope is not positive). A measured profile keeps its bandwidth instead and fits
//            the overhead when the bytes span less than kMinDecodeBytesSpread (fit_measured_decode).
//   prefill: time T = FLOPs / (peak x efficiency)  (core/prefill.hpp). Least squares through the origin of
//            T on FLOPs: k = sum F T / sum F^2, efficiency = 1 / (peak x k). Quantized weights: each sample's FLOPs
//            are first scaled by quantized_efficiency / e, e the efficiency its weight type had (prefill_efficiency),
//            so the one fit says how far all types move together: quantized_efficiency becomes the fitted value and
//            every per-type efficiency not measured scales with it. When the profile gives per-type efficiencies,
//            each measured type of kPrefillTypes (a file type's base type) is also fitted on its own samples alone:
//            of each, the FLOPs of its matrices in that type, and the time left once the matrices in other types
//            (Q4_K_M's Q6_K ones) have taken theirs at the profile's efficiencies; and the types with an
//            efficiency of their own but no samples follow the measured ones on log e = mean(log e_fit) + alpha x
//            (log e_before - mean(log e_before)), alpha the least-squares slope over the measured types clamped to
//            [0, 1] (alpha 1, the profile's ratios kept, with one measured type or measured types whose efficiencies
//            before were within kMinTypeSpread of each other: a slope over so narrow a span is timing noise).
// A measured profile (bench's rates, [provenance] method "measured") is no ceiling: a runtime's kernels may beat
// bench's. Its fit is not capped at 1; then raise_measured_peaks sets the peak to the fastest fitted rate:
//   utilization u > 1:  bandwidth x= u, utilization = 1
//   efficiencies e > 1: tflops x= max e, every efficiency /= max e     (the same rates, none above the peak)
// Source: the per-token overhead model of docs/accuracy.md (fitted there to llama.cpp's Apple Silicon results), fitted
// to llama.cpp llama-bench tg (decode) and pp (prefill) results. Documented in docs/model.md, "calibrate".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "edgeplan/core/device.hpp"
#include "edgeplan/core/prefill.hpp"
#include "edgeplan/util/result.hpp"

namespace edgeplan {

// Which fit a llama-bench test feeds: tg (generation only) the decode fit, pp (prompt only) the prefill fit;
// prompt+generation (pg) tests mix the two and are not fitted. A tg test at a depth (n_depth > 0: that many tokens
// already in the cache) is fitted where the model's layers are known (`shaped`: the cache it reads and attends to
// are counted, bench_context); a pp test at a depth is not.
enum class BenchTest { decode, prefill, not_fitted };
BenchTest bench_test_kind(std::uint64_t n_prompt, std::uint64_t n_gen, std::uint64_t n_depth, bool shaped);

// The context of a tg test's average token: the depth, then the n_gen tokens it generates, token i (from 0)
// attending to n_depth + i + 1 cells: n_depth + (n_gen + 1) / 2, rounded down.
std::uint64_t bench_context(std::uint64_t n_depth, std::uint64_t n_gen);

struct DecodeSample {
  double bytes_per_token = 0;  // weights (and KV) read per generated token
  double s_per_token = 0;      // measured: 1 / tok_per_s
  double compute_s = 0;        // the token's matmuls at the device's one-token rates (decode_compute_s); 0: none
};

struct DecodeFit {
  double utilization = 1;         // fitted fraction of the device's bandwidth
  double per_token_overhead_s = 0;
  bool overhead_fitted = false;   // false: overhead kept as given (one size of weights, or time not growing with it)
  bool utilization_fitted = true; // false: a measured bandwidth kept (fit_measured_decode on a narrow span of bytes)
  bool with_compute = false;      // the samples' compute terms were fitted around (fit_measured_decode)
};

// A tg result as a sample: `bytes_per_token` read per token at the measured rate (s_per_token = 1 / tok/s).
DecodeSample decode_sample(double bytes_per_token, double measured_tok_per_s, double compute_s = 0);

// Fails when there is no sample, when the kept overhead alone is longer than a measured token, or when the fit
// needs a utilization above 1 (the profile's bandwidth is below what was measured). Time not growing with bytes
// is fitted as one size of weights is (the overhead kept). capped false: a utilization above 1 is returned.
Result<DecodeFit> fit_decode(std::span<const DecodeSample> samples, double bandwidth_bytes_per_s, double overhead_s,
                             bool capped = true);

// The same for a measured profile (bench's bandwidth, at `utilization`), uncapped: the free line only when the
// largest bytes per token are at least kMinDecodeBytesSpread x the smallest (and time grows with them); else the
// measured bandwidth is kept and the overhead alone fitted, o = mean(t - b / (bandwidth x utilization)) (below 0:
// no overhead, utilization through the origin). Samples with a compute term (the device's [decode] rates) follow
// decode's own form, t = o + max(b / (bandwidth x utilization), compute): the bandwidth is kept and the overhead
// alone fitted, o = mean(t - max(b / (bandwidth x utilization), compute)) (below 0: none). Never refuses samples
// with a positive time.
inline constexpr double kMinDecodeBytesSpread = 1.5;
Result<DecodeFit> fit_measured_decode(std::span<const DecodeSample> samples, double bandwidth_bytes_per_s,
                                      double utilization);

struct PrefillSample {
  double flops = 0;    // FLOPs of the prompt (core/prefill.hpp)
  double seconds = 0;  // measured: prompt tokens / tok_per_s
};

// A pp result as a sample: a prompt of `prompt_tokens` costing `flops` at the measured rate
// (seconds = prompt tokens / tok/s). Float and quantized weights are fitted apart (their own efficiency).
PrefillSample prefill_sample(double flops, std::uint64_t prompt_tokens, double measured_tok_per_s);
// The part of a sample the efficiency fits are about: with the profile's attention_efficiency, the prompt's
// attention FLOPs (attention_flops) and their time at that efficiency taken out; the sample itself without one.
// Fails when the attention alone would take as long as the measured prompt.
Result<PrefillSample> weights_part(const PrefillSample& sample, double attention_flops, const PrefillSpec& unit);

// The fitted efficiency. Fails without samples or when it would exceed 1 (the peak is too low).
Result<double> fit_prefill_efficiency(std::span<const PrefillSample> samples, double peak_flops, bool capped = true);

// A pp result of quantized weights, with the format they were stored as and its matrices' types (matmul_weights).
struct QuantizedPrefillSample {
  PrefillSample sample;
  const FileType* format = nullptr;
  std::vector<TypedWeights> matmuls;
};

// The narrowest spread of the measured types' efficiencies before (largest / smallest) that fits alpha.
inline constexpr double kMinTypeSpread = 1.25;
struct QuantizedPrefillFit {
  double quantized_efficiency = 1;  // the fitted efficiency of types without one of their own
  std::array<std::optional<double>, kPrefillTypes.size()> type_efficiency{};  // fitted, or scaled with the rest
  std::array<std::size_t, kPrefillTypes.size()> measured{};  // samples each type's own fit used (0: scaled)
  double type_spread = 1;  // alpha: how much of the profile's per-type ratios the unmeasured types keep, [0, 1]
};

// Fits the quantized efficiencies of `before` to the samples (see the top of this header). Fails without samples or
// when an efficiency would exceed 1.
Result<QuantizedPrefillFit> fit_quantized_prefill(std::span<const QuantizedPrefillSample> samples,
                                                  const PrefillSpec& before, bool capped = true);

// A measured device's fit with its figures above 1 made rates again (see the top of this header); unchanged when
// none is above 1.
void raise_measured_peaks(DeviceSpec& fitted);

}  // namespace edgeplan
