// What cli/plan.hpp declares that several commands share and none owns: the roofline chart and the prefill basis
// (decode, report), the device's provenance and its notes (also calibrate, route), --spec's parameters. Kept out of
// the command files, so a change to one compiles only that command (docs/performance.md, "Compiling a command file").
#include <algorithm>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "cli/plan.hpp"
#include "edgeplan/core/roofline.hpp"
#include "edgeplan/util/names.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::cli {

std::string roofline_basis(const PrefillEstimate& e) {
  const UnitUtilization& f = *e.fitted;
  return fmt::format("the roofline of [units.{}] x utilization {:.3f}, fitted to {} {} runs ({}; leave-one-chip-out "
                     "error {:.1f}%)", to_string(f.unit), f.utilization, f.runs, f.runtime, f.measured,
                     f.loo_error_percent);
}

void add_roofline_chart(const DeviceSpec& device, const ModelSpec& m, std::span<const FormatPlan> formats,
                        std::uint64_t context_tokens, std::uint64_t prompt_tokens, double prompt_flops, io::Report& r) {
  std::vector<std::pair<std::string, RooflineWork>> points;
  for (const FormatPlan& f : formats) {
    points.emplace_back(fmt::format("decode {}", f.format->name), decode_work(m, context_tokens, f.decode));
    if (f.prefill) {
      points.emplace_back(fmt::format("prefill {}", f.format->name),
                          prefill_work(prompt_flops, prompt_tokens, device.kv_cache.ubatch_tokens, f.weights.bytes,
                                       f.prefill->seconds));
    }
  }
  const Roofs roofs = device_roofs(device);
  const double bandwidth = roofs.bandwidth_bytes_per_s;
  // The intensities drawn: the points' and the ridges', with two octaves of room on either side.
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  const auto span = [&](double intensity) {
    lo = std::min(lo, intensity / 4);
    hi = std::max(hi, intensity * 4);
  };
  for (const auto& [name, work] : points) span(operational_intensity(work));
  for (const ComputeRoof& c : roofs.compute) span(ridge_intensity(bandwidth, c.flops_per_s));
  io::Table t{"roofline", {{"series", "series"}, {"FLOP/byte", "flop_per_byte", 3},
                           {"GFLOP/s", "flops_per_s", 1, false, units::kGiga}}, {}};
  const std::string memory = fmt::format("{:.1f} GB/s", bandwidth / units::kGBps);
  if (roofs.compute.empty()) {
    const std::string roof = "roof: " + memory;
    for (double at : {lo, hi}) t.add({roof, at, at * bandwidth});
  }
  for (const ComputeRoof& c : roofs.compute) {
    const std::string roof = fmt::format("roof: {} {:.2f} TFLOP/s, {}", c.name, c.flops_per_s / units::kTera, memory);
    for (double at : {lo, ridge_intensity(bandwidth, c.flops_per_s), hi}) {
      t.add({roof, at, attainable_flops_per_s(at, bandwidth, c.flops_per_s)});
    }
  }
  for (const auto& [name, work] : points) t.add({name, operational_intensity(work), achieved_flops_per_s(work)});
  r.chart_tables.push_back(std::move(t));
  const char* peaks = roofs.source == RoofSource::units     ? "the peaks of its [units]"
                      : roofs.source == RoofSource::prefill ? "its [prefill] peak (the profile has no [units])"
                                                            : "no compute roof: the profile has no [units] or [prefill]";
  io::Chart c{fmt::format("roofline: decode and prefill against {}'s {} and {}", device.name, memory, peaks), "roofline",
              "line", "flop_per_byte", "flops_per_s", "", "series"};
  c.x_log = 10;
  c.y_log = 10;
  r.charts.push_back(std::move(c));
}

io::Node prefill_basis_json(const PrefillEstimate& e) {
  io::Node j{{"source", to_string(e.source)}};
  if (!e.fitted) return j;
  j["unit"] = to_string(e.fitted->unit);
  j["utilization"] = e.fitted->utilization;
  j["fitted_runs"] = e.fitted->runs;
  j["runtime"] = e.fitted->runtime;
  j["loo_error_percent"] = e.fitted->loo_error_percent;
  return j;
}

io::Node provenance_json(const DeviceSpec& d) {
  if (!d.provenance) return nullptr;
  const Provenance& p = *d.provenance;
  io::Node j{{"method", to_string(p.method)}};
  if (!p.runtime.empty()) j["runtime"] = p.runtime;
  if (p.measurements > 0) j["measurements"] = p.measurements;
  if (p.method == Calibration::fitted) j["residual_percent"] = p.residual_percent;
  if (!p.from.empty()) j["from"] = p.from;
  if (!p.kernels.empty()) j["kernels"] = p.kernels;
  return j;
}

bool marks_uncalibrated(const DeviceSpec& d) {
  return !calibrated(d.provenance) && !(d.provenance && d.provenance->method == Calibration::reference);
}

std::string uncalibrated_note(const DeviceSpec& d) {
  if (!d.provenance) return fmt::format("* uncalibrated: {} has no [provenance]", d.name);
  if (d.provenance->method == Calibration::carried) {
    return fmt::format("* uncalibrated: {} is not measured; its utilization, overhead and prefill efficiency are "
                       "carried over from {} ({})", d.name, d.provenance->from, d.provenance->runtime);
  }
  if (d.provenance->method == Calibration::class_model) {
    return fmt::format("* not measured: {} runs {} at the figures of runtime class {}, fitted on other devices of its "
                       "class from their datasheets ({} figures)", d.name, d.provenance->runtime, d.provenance->from,
                       d.provenance->measurements);
  }
  if (d.provenance->method == Calibration::measured) {
    return fmt::format("* uncalibrated: {} is measured by edgeplan bench ({}), nothing fitted to a runtime: run "
                       "`edgeplan calibrate` on llama-bench results", d.name, d.provenance->kernels);
  }
  return fmt::format("* uncalibrated: {} is datasheet only (vendor figures at utilization {:.2f}; nothing fitted)",
                     d.name, d.utilization);
}

std::string runtime_line(const DeviceSpec& d) {
  if (d.provenance && d.provenance->method == Calibration::reference) return "runtime: none (the chapter's reference device)";
  const std::string runtime = d.provenance && !d.provenance->runtime.empty() ? d.provenance->runtime : "not stated";
  std::string how = !d.provenance ? "no [provenance]" : to_string(d.provenance->method);
  if (d.provenance && d.provenance->method == Calibration::class_model) how = "runtime class " + d.provenance->from;
  if (d.provenance && d.provenance->method == Calibration::fitted) {
    how = fmt::format("fitted to {} figures of this device", d.provenance->measurements);
  }
  std::string out = fmt::format("runtime {} ({})", runtime, how);
  if (d.errors) {
    const auto band = [](const ErrorBand& b) { return fmt::format("{:+.1f}% to {:+.1f}%", 100 * b.low, 100 * b.high); };
    out += fmt::format("; range: 80% of figures left out of the class's fit were within decode {}", band(d.errors->decode));
    if (d.errors->prefill) out += fmt::format(", prefill {}", band(*d.errors->prefill));
  }
  return out;
}

std::string runtime_mismatch(const DeviceSpec& d, const ModelSpec& m) {
  if (!m.file_format || !d.provenance || d.provenance->runtime.empty()) return "";
  if (d.provenance->runtime.starts_with("llama.cpp")) return "";
  return fmt::format("runtime mismatch: {} was fitted to {}, and the model is a llama.cpp GGUF: the figures carry "
                     "that runtime's efficiency, not llama.cpp's", d.name, d.provenance->runtime);
}

SpecParams parse_spec(const std::string& text) {
  SpecParams p;
  bool alpha = false, gamma = false, cost = false;
  for (const std::string& item : split_list(text, "--spec")) {
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    if (eq == std::string::npos) throw UsageError(fmt::format("--spec '{}': expected KEY=VALUE", item));
    const double v = parse_number(item.substr(eq + 1), "--spec " + key);
    if (key == "alpha") {
      p.alpha = need_alpha(v, "--spec alpha");
      alpha = true;
    } else if (key == "gamma") {
      p.gamma = need_gamma(v, "--spec gamma");
      gamma = true;
    } else if (key == "cost") {
      p.cost = need_cost(v, "--spec cost");
      cost = true;
    } else {
      const std::vector<std::string> keys{"alpha", "gamma", "cost"};
      throw UsageError(fmt::format("--spec: unknown key '{}'{}", key, util::did_you_mean(key, keys)));
    }
  }
  if (!alpha || !gamma || !cost) throw UsageError("--spec needs alpha, gamma and cost, e.g. alpha=0.75,gamma=4,cost=0.15");
  return p;
}

}  // namespace edgeplan::cli
