// edgeplan calibrate: fit a device's decode utilization, per-token overhead and prefill efficiency to
// llama-bench results (core/calibrate.hpp), compare predicted with measured, and write the fitted profile.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cli/calibrate.hpp"
#include "cli/command.hpp"
#include "cli/fitted_profile.hpp"
#include "cli/plan.hpp"
#include "edgeplan/core/calibrate.hpp"
#include "edgeplan/core/decode.hpp"
#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/prefill.hpp"
#include "edgeplan/util/names.hpp"
#include "edgeplan/util/units.hpp"
#include "edgeplan/io/input_file.hpp"
#include "edgeplan/io/llama_bench.hpp"

namespace edgeplan::cli {
namespace {

struct CalibrateOptions {
  std::string device, model, results, runtime, runtime_class;
  io::OutputPath write;
};

// One fitted measurement with what the model needs to predict it.
struct Point {
  const io::BenchRow* row = nullptr;
  BenchTest kind = BenchTest::decode;
  double weight_bytes = 0;  // decode
  double kv_bytes = 0;      // decode at a depth: the KV cache at the test's context (bench_context)
  double compute_s = 0;     // decode: the token's matmuls and attention at the device's [decode] rates (0 without)
  ModelSpec model{};        // prefill; decode with [decode]
  const FileType* format = nullptr;  // the row's model_type as a file type (prefill: quantized formats run at the
                                     // quantized efficiency); nullptr when it names none
};

double predict(const Point& p, const DeviceSpec& d) {
  if (p.kind == BenchTest::decode) return decode(d, {p.weight_bytes, p.kv_bytes, p.compute_s}).tok_per_s;
  return d.prefill ? prefill(*d.prefill, p.model, *p.format, p.row->n_prompt).tok_per_s : 0;
}

// The KV cache type a row ran with: its type_k and type_v, llama-bench's default f16 where it gives none.
KvCacheType row_kv_type(const io::BenchRow& row) {
  const auto type = [&](std::string_view key, const std::string& name) -> const KvType& {
    if (name.empty()) return *find_kv_type("f16");
    auto t = util::lookup_or_suggest(kv_types(), name, [](const KvType& k) { return k.name; }, "cache type");
    if (!t) throw UsageError(fmt::format("{}: {}: {}", row.where, key, t.error().message));
    return **t;
  };
  return {type("type_k", row.type_k), type("type_v", row.type_v)};
}

// The runtimes the rows measured (BenchRow::runtime_label: "llama.cpp Metal"), in the order first seen.
std::vector<std::string> runtime_labels(const std::vector<io::BenchRow>& rows) {
  std::vector<std::string> labels;
  for (const io::BenchRow& row : rows) {
    std::string label = row.runtime_label();
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(std::move(label));
  }
  return labels;
}

// The rows a fit of `device` takes: a file of published measurements (rows naming their device) gives the rows of
// the device's profile name; then the rows of `runtime` where given. A fit takes one runtime: rows of several
// without --runtime are refused, so that no runtime's figures are fitted as another's.
std::vector<io::BenchRow> rows_to_fit(std::vector<io::BenchRow> rows, const std::string& device,
                                      const std::string& runtime, const std::string& file) {
  if (std::any_of(rows.begin(), rows.end(), [](const io::BenchRow& row) { return !row.device.empty(); })) {
    std::vector<std::string> devices;
    for (const io::BenchRow& row : rows) {
      if (std::find(devices.begin(), devices.end(), row.device) == devices.end()) devices.push_back(row.device);
    }
    std::erase_if(rows, [&](const io::BenchRow& row) { return row.device != device; });
    if (rows.empty()) {
      throw UsageError(fmt::format("{} holds no measurement of device {} (its devices: {}){}", file, device,
                                   fmt::join(devices, ", "), util::did_you_mean(device, devices)));
    }
  }
  const std::vector<std::string> labels = runtime_labels(rows);
  if (!runtime.empty()) {
    std::erase_if(rows, [&](const io::BenchRow& row) { return row.runtime_label() != runtime; });
    if (rows.empty()) {
      throw UsageError(fmt::format("--runtime '{}': {} has no row of it for {} (its runtimes: {}){}", runtime, file,
                                   device, fmt::join(labels, ", "), util::did_you_mean(runtime, labels)));
    }
  } else if (labels.size() > 1) {
    throw UsageError(fmt::format("{} measured {} under {} runtimes ({}): a fit takes one; choose it with --runtime",
                                 file, device, labels.size(), fmt::join(labels, ", ")));
  }
  return rows;
}

double rms(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return v.empty() ? 0 : std::sqrt(s / static_cast<double>(v.size()));
}

}  // namespace

Runner setup_calibrate(Options& opts) {
  auto o = std::make_shared<CalibrateOptions>();
  opts.add(Opt::device, o->device, "Device profile to calibrate (name or .toml path)");
  opts.add(Opt::runtime_class, o->runtime_class, "Fit this runtime class across the devices that name it, each "
           "device left out in turn, to published measurements (a .csv file or a directory of them) in place of one "
           "device").excludes(Opt::device);
  opts.add(Opt::file, o->results, "llama-bench results: its -o json, jsonl or csv output").required();
  opts.add(Opt::model, o->model,
           "Model profile of the benchmarked model (weights by format); default: each row's model_size and "
           "model_n_params");
  opts.add(Opt::runtime, o->runtime, "Fit only the rows of this runtime and backend, as the results name it "
           "(llama-bench's: 'llama.cpp ' and its backends column, 'llama.cpp Metal'); needed when they hold several");
  opts.add(Opt::write_profile, o->write, "Write the calibrated device profile to FILE");
  return [o](const Context& ctx) {
    if (!o->runtime_class.empty()) return calibrate_class(o->runtime_class, o->results, o->write, ctx);
    if (o->device.empty()) throw UsageError("calibrate needs --device (a device to fit) or --class (a runtime class)");
    io::Report r;
    r.command = "calibrate";
    const DeviceSpec device = ctx.device(o->device, r.inputs);
    std::optional<ModelSpec> model;
    if (!o->model.empty()) model = ctx.model(o->model, r.inputs);
    const std::vector<io::BenchRow> rows = rows_to_fit(
        unwrap(io::parse_llama_bench(read_results(o->results, "llama-bench results"), o->results)), device.name, o->runtime, o->results);
    r.inputs["llama_bench"] = o->results;
    if (!o->runtime.empty()) r.inputs["runtime"] = o->runtime;

    std::vector<Point> points;
    std::vector<DecodeSample> decode_samples;
    std::vector<PrefillSample> prefill_samples;  // float weights
    std::vector<QuantizedPrefillSample> quantized_samples;
    std::vector<std::string> skipped;
    RowModels row_models{ctx};
    bool unshaped = false;  // a row costed from its model_size and model_n_params, without a model profile
    for (const io::BenchRow& row : rows) {
      const ModelSpec* row_model = model ? &*model : row_models.of(row.model);
      const BenchTest kind = row.kind(row_model != nullptr);
      if (kind == BenchTest::not_fitted) {
        skipped.push_back(row.test());
        continue;
      }
      if (!row.source.empty() && !row.format) {
        skipped.push_back(fmt::format("{} of {} (its format is no llama.cpp file type)", row.test(), row.model));
        continue;
      }
      if (!row_model && !row.source.empty() && (row.model_size_bytes <= 0 || row.model_n_params <= 0)) {
        skipped.push_back(fmt::format("{} of {} (no model profile, and no size published)", row.test(), row.model));
        continue;
      }
      Point p{.row = &row, .kind = kind, .weight_bytes = row.model_size_bytes, .format = row.format};
      // The row's weight format, where `why` needs it.
      const auto format = [&](std::string_view why) -> const FileType& {
        if (!p.format) {
          throw UsageError(fmt::format("{}: cannot tell the weight format from model_type '{}' ({}; a measurement "
                                       "names it in its format column)", row.where, row.model_type, why));
        }
        return *p.format;
      };
      if (row_model) {
        p.weight_bytes = unwrap(weight_size(*row_model, format(model ? "needed with --model" : "needed to cost the "
                                                                "row's model profile"))).active_bytes;
        p.model = *row_model;
      } else {
        unshaped = true;
        if (row.model_size_bytes <= 0 || row.model_n_params <= 0) {
          throw UsageError(fmt::format("{}: model_size and model_n_params must be above 0 (or pass --model)", row.where));
        }
        p.model.name = row.model_type;
        p.model.params = row.model_n_params;
      }
      if (p.kind == BenchTest::decode) {
        const std::uint64_t context = bench_context(row.n_depth, row.n_gen);
        // At a depth the token reads the cache as decode counts it at that context; a test from an empty cache
        // (depth 0) reads a few cells against the weights and is fitted on the weights alone, as before depths were.
        if (row.n_depth > 0) p.kv_bytes = kv_cache_bytes(p.model, row_kv_type(row), context, device.kv_cache);
        if (device.decode) {
          p.compute_s = decode_compute_s(*device.decode, p.model, format("needed for the device's [decode] rates"),
                                         context);
        }
        decode_samples.push_back(decode_sample(p.weight_bytes + p.kv_bytes, row.avg_tok_per_s, p.compute_s));
      } else {
        format("needed for prefill");
        PrefillSample sample = prefill_sample(prefill_flops(p.model, row.n_prompt), row.n_prompt, row.avg_tok_per_s);
        if (device.prefill) {
          sample = need(row.where, weights_part(sample, attention_flops(p.model, row.n_prompt), *device.prefill));
        }
        if (is_quantized(*p.format)) {
          quantized_samples.push_back({sample, p.format, matmul_weights(p.model, *p.format)});
        } else {
          prefill_samples.push_back(sample);
        }
      }
      points.push_back(std::move(p));
    }
    if (points.empty()) throw UsageError(fmt::format("{}: no pp or tg test to fit (only {})", o->results,
                                                     fmt::join(skipped, ", ")));

    DeviceSpec fitted = device;
    // A measured profile's figures are bench's rates, not ceilings: fitted uncapped, then raised (core/calibrate.hpp).
    const bool measured_profile = device.provenance && device.provenance->method == Calibration::measured;
    const bool capped = !measured_profile;
    if (!decode_samples.empty()) {
      auto fit = measured_profile || device.decode
                     ? fit_measured_decode(decode_samples, device.bandwidth_bytes_per_s, device.utilization)
                     : fit_decode(decode_samples, device.bandwidth_bytes_per_s, device.per_token_overhead_s);
      if (!fit) throw UsageError(fmt::format("{}: decode: {}", o->results, fit.error().message));
      fitted.utilization = fit->utilization;
      fitted.per_token_overhead_s = fit->per_token_overhead_s;
      r.results["utilization"] = fit->utilization;
      r.results["per_token_overhead_ms"] = fit->per_token_overhead_s * units::kMsPerS;
      r.header.push_back(fmt::format("decode: utilization {:.3f} -> {:.3f}, overhead {:.3f} -> {:.3f} ms/token (tg tests: {})",
                                     device.utilization, fit->utilization, device.per_token_overhead_s * units::kMsPerS,
                                     fit->per_token_overhead_s * units::kMsPerS, decode_samples.size()));
      if (!fit->overhead_fitted) {
        const bool one_size = std::all_of(decode_samples.begin(), decode_samples.end(), [&](const DecodeSample& s) {
          return s.bytes_per_token == decode_samples.front().bytes_per_token;
        });
        r.notes.push_back(one_size ? "the tg tests read a single size of weights: overhead kept as in the profile, only "
                                     "utilization fitted (benchmark two formats or models to fit both)"
                                   : "the measured time per token did not grow with the bytes read per token: overhead "
                                     "kept as in the profile, only utilization fitted");
      }
      if (fit->with_compute) {
        r.notes.push_back("the device's [decode] rates give each tg row's compute term: the bandwidth kept, the "
                          "overhead fitted to what max(bandwidth term, compute term) leaves of each row's time");
      } else if (!fit->utilization_fitted) {
        r.notes.push_back(fmt::format("the tg tests read too narrow a span of weight sizes (the largest below {}x the "
                                      "smallest) to fit both: the measured bandwidth kept, only the overhead fitted",
                                      kMinDecodeBytesSpread));
      }
    } else {
      r.notes.push_back("no tg test: decode utilization and overhead not fitted");
    }
    const bool any_prefill = !prefill_samples.empty() || !quantized_samples.empty();
    if (any_prefill && device.prefill) {
      if (!prefill_samples.empty()) {
        auto eff = fit_prefill_efficiency(prefill_samples, device.prefill->peak_flops, capped);
        if (!eff) throw UsageError(fmt::format("{}: prefill: {}", o->results, eff.error().message));
        fitted.prefill->efficiency = *eff;
        r.results["prefill_efficiency"] = *eff;
        r.header.push_back(fmt::format("prefill (float weights): efficiency {:.3f} -> {:.3f} of {:.2f} TFLOPS (pp tests: {})",
                                       device.prefill->efficiency, *eff, device.prefill->peak_flops / units::kTera,
                                       prefill_samples.size()));
      }
      if (!quantized_samples.empty()) {
        auto fit = fit_quantized_prefill(quantized_samples, *device.prefill, capped);
        if (!fit) throw UsageError(fmt::format("{}: prefill: {}", o->results, fit.error().message));
        fitted.prefill->quantized_efficiency = fit->quantized_efficiency;
        fitted.prefill->type_efficiency = fit->type_efficiency;
        r.results["prefill_quantized_efficiency"] = fit->quantized_efficiency;
        r.header.push_back(fmt::format("prefill (quantized weights): efficiency {:.3f} -> {:.3f} of {:.2f} TFLOPS (pp tests: {})",
                                       device.prefill->quantized_efficiency, fit->quantized_efficiency,
                                       device.prefill->peak_flops / units::kTera, quantized_samples.size()));
        for (std::size_t i = 0; i < kPrefillTypes.size(); ++i) {
          const auto& was = device.prefill->type_efficiency[i];
          const auto& now = fit->type_efficiency[i];
          if (!now) continue;
          r.results[fmt::format("prefill_{}_efficiency", kPrefillTypes[i])] = *now;
          r.header.push_back(fmt::format("prefill ({} weights): efficiency {:.3f} -> {:.3f} ({})", kPrefillTypes[i],
                                         was.value_or(device.prefill->quantized_efficiency), *now,
                                         fit->measured[i] ? fmt::format("pp tests: {}", fit->measured[i])
                                                          : fmt::format("not measured: follows the measured types, "
                                                                        "alpha {:.2f}", fit->type_spread)));
        }
      }
    } else if (any_prefill) {
      r.notes.push_back("the device has no [prefill] tflops: prefill efficiency not fitted (add [prefill] to fit it)");
    } else {
      r.notes.push_back("no pp test: prefill efficiency not fitted");
    }
    if (measured_profile) {
      const DeviceSpec unraised = fitted;
      raise_measured_peaks(fitted);
      if (fitted.bandwidth_bytes_per_s != unraised.bandwidth_bytes_per_s) {
        r.results["bandwidth_gbps"] = fitted.bandwidth_bytes_per_s / units::kGBps;
        r.notes.push_back(fmt::format("measured profile: the runtime read faster than bench measured, so bandwidth_gbps "
                                      "rises from {:.2f} to {:.2f} at utilization 1", device.bandwidth_bytes_per_s /
                                      units::kGBps, fitted.bandwidth_bytes_per_s / units::kGBps));
      }
      if (fitted.prefill && fitted.prefill->peak_flops != unraised.prefill->peak_flops) {
        r.results["prefill_tflops"] = fitted.prefill->peak_flops / units::kTera;
        r.notes.push_back(fmt::format("measured profile: the runtime's kernels beat bench's, so prefill.tflops rises from "
                                      "{:.4f} to {:.4f} (the fastest fitted rate) and the efficiencies fall with it",
                                      device.prefill->peak_flops / units::kTera, fitted.prefill->peak_flops / units::kTera));
      }
    }
    if (unshaped && any_prefill) {
      r.notes.push_back("without --model, prefill FLOPs count model_n_params (embeddings included) and no attention");
    }
    if (unshaped && !decode_samples.empty()) {
      r.notes.push_back("without --model, decode is fitted on the whole file (model_size), while a token reads one row "
                        "of an untied token_embd and used / experts of a mixture: pass --model for the bytes decode "
                        "counts");
    }
    if (!skipped.empty()) {
      r.notes.push_back(fmt::format("not fitted (prompt+generation tests, prompt tests at a depth or of an unpublished "
                                    "length, generation tests at a depth without a model profile, and published rows "
                                    "that cannot be costed): {}", fmt::join(skipped, ", ")));
    }

    io::Table t{"tests", {{"#", "index"},
                          {"test", "test"},
                          {"model", "model_type"},
                          {"measured tok/s", "measured_tok_per_s", 2},
                          {"+/-", "stddev_tok_per_s", 2},
                          {"before tok/s", "before_tok_per_s", 2},
                          {"predicted tok/s", "predicted_tok_per_s", 2},
                          {"error %", "error_percent", 1}}, {}};
    std::vector<double> decode_errors, prefill_errors;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const Point& p = points[i];
      const double measured = p.row->avg_tok_per_s;
      const io::Cell before = p.kind == BenchTest::prefill && !device.prefill ? io::Cell{} : io::Cell{predict(p, device)};
      const bool predicted = p.kind == BenchTest::decode || fitted.prefill.has_value();
      const double error = predicted ? (predict(p, fitted) - measured) / measured * 100 : 0;
      if (predicted) (p.kind == BenchTest::decode ? decode_errors : prefill_errors).push_back(error);
      t.add({static_cast<std::int64_t>(i + 1), p.row->test(), p.row->model_type, measured, p.row->stddev_tok_per_s,
             before, predicted ? io::Cell{predict(p, fitted)} : io::Cell{}, predicted ? io::Cell{error} : io::Cell{}});
    }
    // The fitted runs and their largest in-sample error become the profile's [provenance].
    if (const std::size_t runs = decode_errors.size() + prefill_errors.size(); runs > 0) {
      double largest = 0;
      for (const auto* errors : {&decode_errors, &prefill_errors}) {
        for (const double e : *errors) largest = std::max(largest, std::abs(e));
      }
      Provenance& p = fitted.provenance.emplace();
      p.method = Calibration::fitted;
      p.runtime = fmt::format("{}", fmt::join(runtime_labels(rows), " / "));
      p.measurements = static_cast<std::uint32_t>(runs);
      p.residual_percent = largest;
      p.from = o->results;
      r.header.push_back(fmt::format("provenance: fitted to {} (runs: {}), largest in-sample error {:.1f}%",
                                     fitted.provenance->runtime, runs, largest));
      r.results["provenance"] = provenance_json(fitted);
    }
    if (!decode_errors.empty()) r.results["decode_rms_error_percent"] = rms(decode_errors);
    if (!prefill_errors.empty()) r.results["prefill_rms_error_percent"] = rms(prefill_errors);
    r.tables.push_back(std::move(t));

    if (!o->write.path.empty()) {
      const std::string text = fitted_profile(ctx, o->device, device, fitted, o->results);
      if (auto error = io::write_output(o->write, input_files(r.inputs, {o->results}), text)) {
        throw UsageError(error->message);
      }
      r.inputs["write"] = o->write.path;
      r.notes.push_back(fmt::format("wrote the calibrated profile to {}", o->write.path));
    }
    r.title = fmt::format("calibrate: {} against {}{}", device.name, o->results,
                          model ? fmt::format(" ({})", model->name) : std::string());
    return r;
  };
}

}  // namespace edgeplan::cli
