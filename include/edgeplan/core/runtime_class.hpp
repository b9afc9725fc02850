// A runtime class: one runtime on one kind of device ("llama.cpp Metal on Apple M-series GPUs"). Its decode
// utilization and per-token overhead, and its prefill efficiency against the fp16 peak of the unit it runs on, are
// fitted across the devices of the class that have published measurements, and give any device of the class its
// speed from its datasheet alone (bandwidth_gbps, the unit's fp16_tflops):
//   decode:  t = b / (B_d x u) + o   pooled over the devices as x = b / B_d: t = x / u + o (fit_decode_line)
//   prefill: T = F / (P_d x e)       pooled as x = F / P_d: T = x / e, float and quantized weights apart
//            (fit_prefill_efficiency_relative)
// Both fits weigh each figure by its relative error, so a fast device counts as much as a slow one.
// A figure the class gives carries an interval: each device of the class is left out in turn, the class refitted on
// the others, and the left-out device's figures predicted; the 10th and 90th percentiles of predicted / measured - 1
// over all of them (the error band) bound where a measured figure falls: [predicted / (1 + high),
// predicted / (1 + low)] for a rate, [time x (1 + low), time x (1 + high)] for a time.
// Source: the per-token overhead model of docs/accuracy.md, fitted per device there; documented in docs/model.md,
// "runtime classes".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "edgeplan/core/device.hpp"
#include "edgeplan/core/prefill.hpp"
#include "edgeplan/util/result.hpp"

namespace edgeplan {

// The band of a set of errors (predicted / measured - 1); all zero for none.
ErrorBand error_band(std::vector<double> errors);

// Where a measured figure falls around a predicted rate (tok/s) under a band.
Interval rate_interval(double predicted_rate, const ErrorBand& band);
// The same for a predicted time (s): a rate over-predicted by e is a time under-predicted by it.
Interval time_interval(double predicted_s, const ErrorBand& band);

struct RuntimeClass {
  std::string name;                // the profile's name: "llama.cpp-metal-apple-m"
  std::string runtime;             // the runtime measurements name: "llama.cpp Metal" (BenchRow::runtime_label)
  UnitKind unit = UnitKind::gpu;   // the unit it runs on: its fp16 peak is the prefill's
  double utilization = 1;          // decode: fraction of the device's bandwidth
  double per_token_overhead_s = 0;
  std::optional<double> prefill_efficiency;    // float weights, of the unit's fp16 peak; none: not measured
  std::optional<double> quantized_efficiency;  // quantized weights
  // Quantized weights of one ggml base type (kPrefillTypes, same order) with figures of their own: overrides
  // quantized_efficiency for that type (llama.cpp's CPU kernels differ by type: Q4_0 and Q8_0 are repacked).
  std::array<std::optional<double>, kPrefillTypes.size()> type_efficiency{};
  ErrorBand decode_error;
  std::optional<ErrorBand> prefill_error;      // with a prefill efficiency
  std::vector<std::string> fitted_on;          // the devices whose measurements it was fitted to
  std::uint32_t measurements = 0;              // figures fitted
  bool operator==(const RuntimeClass&) const = default;
};

// The device under class c: its utilization and overhead; its prefill at c's efficiencies of its [units.U] fp16 peak
// (none when c has no prefill fit or the device no such unit: another runtime's [prefill] is never carried over);
// no [decode] one-token rates (bench's kernels, not c's); its provenance the class (method class_model, from = c's
// name). A device fitted to c's runtime itself (provenance fitted, same runtime) keeps its own figures. Either way the
// device's errors are c's bands, where c has them (figures > 0).
DeviceSpec with_runtime_class(DeviceSpec d, const RuntimeClass& c);

// One published figure of a device of the class, as the pooled fits take it.
struct ClassSample {
  std::string device;
  bool decode = true;       // decode (tg) or prefill (pp)
  bool quantized = false;   // prefill: quantized weights, fitted apart from float ones
  double x = 0;             // decode: bytes a token reads / the device's bandwidth (s at 1 byte/s); prefill: FLOPs / peak
  double seconds = 0;       // decode: measured s per token; prefill: measured s for the prompt
  std::optional<std::size_t> type{};  // prefill of quantized weights: the file's base type in kPrefillTypes, if one
};

// The decode line t = x / utilization + overhead through the decode samples, least squares on the relative error
// (each figure counts alike, whatever its speed: sum ((predicted - measured) / measured)^2 is least); with an overhead
// that comes out at or below 0, through the origin. Fails without a decode sample, or at a utilization above 1.
struct DecodeLine {
  double utilization = 1;
  double overhead_s = 0;
};
Result<DecodeLine> fit_decode_line(std::span<const ClassSample> samples);

// The prefill efficiency T = x / efficiency through the prefill samples of float (quantized false) or quantized
// weights, of base type `type` alone where given, least squares on the relative error. Fails without such a sample,
// or at an efficiency above 1.
Result<double> fit_prefill_efficiency_relative(std::span<const ClassSample> samples, bool quantized,
                                               std::optional<std::size_t> type = std::nullopt);

// The class's figures fitted to `samples` (fit_decode_line, fit_prefill_efficiency_relative for float and quantized
// weights apart, either alone standing for both, and each quantized base type with samples of its own; name, runtime
// and unit are the caller's): fails as they do.
Result<RuntimeClass> fit_runtime_class(std::span<const ClassSample> samples);

// The prediction a fitted class makes for a sample over its measured rate (the error is this - 1); nullopt for a
// prefill sample of a class without a prefill fit.
std::optional<double> predicted_over_measured(const RuntimeClass& c, const ClassSample& s);

// Each sample predicted by the class fitted on the other devices' samples alone (predicted_over_measured); nullopt
// where those cannot be fitted (no decode figure among them) or give it no prediction.
std::vector<std::optional<double>> left_out_ratios(std::span<const ClassSample> samples);

// The class fitted to all samples, with its error bands from left_out_ratios (a class of one device has no band:
// figures 0).
Result<RuntimeClass> fit_with_bands(std::span<const ClassSample> samples);

}  // namespace edgeplan
