#include "cli/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "edgeplan/core/calibrate.hpp"
#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/place.hpp"
#include "edgeplan/core/prefill.hpp"
#include "edgeplan/core/runtime_class.hpp"
#include "edgeplan/io/input_file.hpp"
#include "edgeplan/io/llama_bench.hpp"
#include "edgeplan/io/runtime_class.hpp"
#include "edgeplan/io/toml_parse.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::cli {
namespace {

namespace fs = std::filesystem;

// The published rows of `results`: a file, or every .csv file of a directory in name order.
std::vector<io::BenchRow> read_rows(const std::string& results) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(results, ec)) {
    for (const auto& e : fs::directory_iterator(results, ec)) {
      if (e.path().extension() == ".csv") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) throw UsageError(fmt::format("{}: no .csv file of measurements in the directory", results));
  } else {
    files.emplace_back(results);
  }
  std::vector<io::BenchRow> rows;
  for (const fs::path& f : files) {
    std::vector<io::BenchRow> read = unwrap(io::parse_llama_bench(read_results(f.string(), "measurements"), f.string()));
    rows.insert(rows.end(), std::make_move_iterator(read.begin()), std::make_move_iterator(read.end()));
  }
  return rows;
}

// A figure of the fit with what names it in the table.
struct Figure {
  ClassSample sample;
  std::string model, format, test;
  double measured = 0;  // tok/s
};

inline constexpr std::uint64_t kLongestGeneration = 256, kLongestPrompt = 1024;

// Rounded as the class profile writes its figures (so the profile reads back as what was fitted).
double rounded(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

void round_band(ErrorBand& b) {
  b.low = rounded(b.low, 3);
  b.high = rounded(b.high, 3);
  b.median_abs = rounded(b.median_abs, 3);
  b.max_abs = rounded(b.max_abs, 3);
}

// The figures of class c among `rows`: those of devices that name c in their runtimes, run under c's runtime, of a
// model with a profile in a llama.cpp file type; of each figure measured several ways (threads, builds) the
// fastest, as a planner predicts a well-set-up run. `skipped` counts the rest by reason.
std::vector<Figure> class_figures(const RuntimeClass& c, const std::vector<io::BenchRow>& rows, const Context& ctx,
                                  std::map<std::string, int>& skipped) {
  std::map<std::string, DeviceSpec> members;
  for (const io::ProfileText& text : io::list_profiles("devices", ctx.search_path())) {
    DeviceSpec d = unwrap(io::load_device(text, ctx.overrides()));
    if (std::find(d.runtimes.begin(), d.runtimes.end(), c.name) != d.runtimes.end()) members.emplace(d.name, d);
  }
  RowModels models{ctx};
  std::map<std::tuple<std::string, std::string, std::string, std::string>, Figure> best;
  for (const io::BenchRow& row : rows) {
    if (row.runtime_label() != c.runtime) continue;
    const auto member = members.find(row.device);
    if (member == members.end()) {
      ++skipped["device without a profile that names the class"];
      continue;
    }
    const DeviceSpec& d = member->second;
    const ModelSpec* m = models.of(row.model);
    if (!m || !row.format) {
      ++skipped[m ? "format no llama.cpp file type" : "model without a profile"];
      continue;
    }
    const ModelSpec& model = *m;
    const BenchTest kind = row.kind(true);
    if (kind == BenchTest::not_fitted) {
      ++skipped[row.n_prompt == 0 ? "prefill of an unpublished length" : "a prompt+generation test"];
      continue;
    }
    const bool decode = kind == BenchTest::decode;
    Figure f{.sample = {}, .model = row.model, .format = std::string(row.format->name), .test = row.test(),
             .measured = row.avg_tok_per_s};
    f.sample.device = d.name;
    f.sample.decode = decode;
    // The class predicts llama-bench's short tests (tg128, pp512); longer ones also measure how a runtime's
    // attention slows with context, which it does not fit.
    if (row.n_gen > kLongestGeneration || row.n_prompt > kLongestPrompt) {
      ++skipped[fmt::format("a test longer than tg{} or pp{}", kLongestGeneration, kLongestPrompt)];
      continue;
    }
    if (decode) {
      if (row.n_prompt > 0 || row.n_depth > 0) {
        ++skipped["decode after a prompt or at a depth"];
        continue;
      }
      // A tg test of n_gen tokens reads, on average, the cache of its middle token besides the weights.
      const double kv = row.n_gen > 0 ? kv_cache_bytes(model, *find_kv_type("f16"), bench_context(0, row.n_gen),
                                                       d.kv_cache)
                                      : 0;
      f.sample.x = (unwrap(weight_size(model, *row.format)).active_bytes + kv) / d.bandwidth_bytes_per_s;
      f.sample.seconds = 1 / row.avg_tok_per_s;
    } else {
      const auto unit = d.units.find(c.unit);
      if (unit == d.units.end() || !unit->second.fp16_flops_per_s) {
        ++skipped["prefill on a device without the unit's peak"];
        continue;
      }
      f.sample.quantized = is_quantized(*row.format);
      if (f.sample.quantized) f.sample.type = prefill_type_index(row.format->base);
      f.sample.x = prefill_flops(model, row.n_prompt) / *unit->second.fp16_flops_per_s;
      f.sample.seconds = static_cast<double>(row.n_prompt) / row.avg_tok_per_s;
    }
    const auto key = std::tuple{d.name, row.model, f.format, f.test};
    const auto it = best.find(key);
    if (it == best.end()) {
      best.emplace(key, std::move(f));
    } else {
      ++skipped["the same figure measured again, slower"];
      if (f.measured > it->second.measured) it->second = std::move(f);
    }
  }
  std::vector<Figure> out;
  for (auto& [key, f] : best) out.push_back(std::move(f));
  return out;
}

}  // namespace

std::string read_results(const std::string& path, std::string_view kind) {
  auto text = io::read_input(path, io::kMaxBenchResultsBytes, std::string(kind));
  if (!text) throw UsageError(fmt::format("cannot read {} '{}': {}", kind, path, text.error().message));
  return std::move(*text);
}

const ModelSpec* RowModels::of(const std::string& name) {
  if (name.empty()) return nullptr;
  auto it = loaded_.find(name);
  if (it == loaded_.end()) {
    std::optional<ModelSpec> m;
    if (auto text = io::find_profile("models", name, ctx_.search_path())) {
      m = unwrap(io::load_model(*text, ctx_.overrides()));
    }
    it = loaded_.emplace(name, std::move(m)).first;
  }
  return it->second ? &*it->second : nullptr;
}

io::Report calibrate_class(const std::string& name, const std::string& results, const io::OutputPath& write,
                           const Context& ctx) {
  io::Report r;
  r.command = "calibrate";
  const io::ProfileText text = ctx.find("runtimes", name);
  RuntimeClass before = unwrap(io::load_runtime_class(text));
  r.inputs["class"] = io::Node{{"name", before.name}, {"source", text.display}};
  r.inputs["measurements"] = results;
  std::map<std::string, int> skipped;
  const std::vector<Figure> figures = class_figures(before, read_rows(results), ctx, skipped);
  std::vector<ClassSample> samples;
  for (const Figure& f : figures) samples.push_back(f.sample);
  if (samples.empty()) {
    throw UsageError(fmt::format("{}: no figure of {} on a device that names class {}", results, before.runtime, name));
  }
  RuntimeClass fit = unwrap(fit_with_bands(samples));
  fit.name = before.name;
  fit.runtime = before.runtime;
  fit.unit = before.unit;
  fit.utilization = rounded(fit.utilization, 3);
  fit.per_token_overhead_s = rounded(fit.per_token_overhead_s * units::kMsPerS, 2) / units::kMsPerS;
  if (fit.prefill_efficiency) fit.prefill_efficiency = rounded(*fit.prefill_efficiency, 3);
  if (fit.quantized_efficiency) fit.quantized_efficiency = rounded(*fit.quantized_efficiency, 3);
  for (std::optional<double>& e : fit.type_efficiency) {
    if (e) e = rounded(*e, 3);
  }
  round_band(fit.decode_error);
  if (fit.prefill_error) round_band(*fit.prefill_error);

  r.title = fmt::format("calibrate: runtime class {} ({}) against {}", name, fit.runtime, results);
  r.header.push_back(fmt::format("decode: utilization {:.3f}, overhead {:.2f} ms/token; fitted on {} ({} figures)",
                                 fit.utilization, fit.per_token_overhead_s * units::kMsPerS,
                                 fmt::join(fit.fitted_on, ", "), fit.measurements));
  if (fit.prefill_efficiency) {
    std::vector<std::string> types;
    for (std::size_t i = 0; i < kPrefillTypes.size(); ++i) {
      if (fit.type_efficiency[i]) types.push_back(fmt::format("{} {:.3f}", kPrefillTypes[i], *fit.type_efficiency[i]));
    }
    r.header.push_back(fmt::format("prefill: efficiency {:.3f} (float weights), {:.3f} (quantized{}) of the {} fp16 peak",
                                   *fit.prefill_efficiency, *fit.quantized_efficiency,
                                   types.empty() ? "" : fmt::format("; {}", fmt::join(types, ", ")), to_string(fit.unit)));
  }
  const auto band_line = [](std::string_view what, const ErrorBand& b) {
    return fmt::format("{} left out: median |error| {:.1f}%, largest {:.1f}%, 80% of figures within {:+.1f}% to "
                       "{:+.1f}% ({} figures)", what, 100 * b.median_abs, 100 * b.max_abs, 100 * b.low, 100 * b.high,
                       b.figures);
  };
  r.header.push_back(band_line("decode, each device", fit.decode_error));
  if (fit.prefill_error) r.header.push_back(band_line("prefill, each device", *fit.prefill_error));
  r.results["utilization"] = fit.utilization;
  r.results["per_token_overhead_ms"] = fit.per_token_overhead_s * units::kMsPerS;

  io::Table t{"figures", {{"device", "device"}, {"model", "model"}, {"format", "format"}, {"test", "test"},
                          {"measured tok/s", "measured_tok_per_s", 2}, {"fitted tok/s", "fitted_tok_per_s", 2},
                          {"left out tok/s", "left_out_tok_per_s", 2}, {"left-out error %", "left_out_error_percent", 1}},
              {}};
  const std::vector<std::optional<double>> left_out = left_out_ratios(samples);
  for (std::size_t i = 0; i < figures.size(); ++i) {
    const Figure& f = figures[i];
    const std::optional<double> fitted = predicted_over_measured(fit, f.sample);
    t.add({f.sample.device, f.model, f.format, f.test, f.measured,
           fitted ? io::Cell{*fitted * f.measured} : io::Cell{},
           left_out[i] ? io::Cell{*left_out[i] * f.measured} : io::Cell{},
           left_out[i] ? io::Cell{100 * (*left_out[i] - 1)} : io::Cell{}});
  }
  r.tables.push_back(std::move(t));
  for (const auto& [why, n] : skipped) r.notes.push_back(fmt::format("not fitted: {} ({})", why, n));

  if (!write.path.empty()) {
    const toml::table was = unwrap(io::parse_toml(text.text, text.display));
    const std::string description = was["description"].value_or(std::string(fit.runtime));
    const std::vector<std::string> comments{
        fmt::format("Runtime class {}: written by `edgeplan calibrate --class {} {}`; edit only the description,", name,
                    name, results),
        "runtime and unit, then run it again (docs/profiles.md, \"Runtime class\"; docs/accuracy.md, \"Runtime classes\")."};
    if (auto error = io::write_output(write, input_files(r.inputs, {results}), io::runtime_class_text(fit, comments,
                                                                                                      description))) {
      throw UsageError(error->message);
    }
    r.notes.push_back(fmt::format("wrote the fitted class to {}", write.path));
  }
  return r;
}

}  // namespace edgeplan::cli
