// edgeplan stream: loading the weights from storage (core/stream.hpp): preload, demand paging, prefetch
// windows and hot subsets, and decode when the weights do not all fit in memory.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/plan.hpp"
#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/stream.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::cli {
namespace {

struct StreamOptions {
  std::string device, model, quant, prefetch = "32", hot, runtime;  // hot: none unless asked for
};

std::vector<std::uint64_t> parse_windows(const std::string& text) {
  std::vector<std::uint64_t> out;
  for (const std::string& item : split_list(text, "--prefetch")) {
    const double v = parse_number(item, "--prefetch");
    if (v < 1 || v != std::floor(v) || v > 1e9) {
      throw UsageError(fmt::format("--prefetch: a window is a whole number of pages from 1 to 1000000000 (got {})", item));
    }
    out.push_back(static_cast<std::uint64_t>(v));
  }
  return out;
}

std::vector<double> parse_fractions(const std::string& text) {
  std::vector<double> out;
  if (text.empty()) return out;
  for (const std::string& item : split_list(text, "--hot")) {
    const double v = parse_number(item, "--hot");
    if (v <= 0 || v > 1) throw UsageError(fmt::format("--hot: a fraction must be in (0, 1] (got {})", item));
    out.push_back(v);
  }
  return out;
}

// A load scenario: its name, hot fraction and window (0 = preload).
struct Scenario {
  std::string name;
  double hot = 1;
  std::uint64_t window = 0;
};

std::string window_name(std::uint64_t window, std::uint64_t readahead) {
  if (window == 1) return "";
  return window == readahead ? fmt::format("readahead-{}", window) : fmt::format("prefetch-{}", window);
}

std::string scenario_name(double hot, std::uint64_t window, std::uint64_t readahead) {
  const std::string w = window_name(window, readahead);
  if (hot == 1) return w.empty() ? "demand" : w;
  const std::string h = fmt::format("hot-{}", hot);
  return w.empty() ? h : h + "+" + w;
}

}  // namespace

std::string storage_assumption(const DeviceSpec& d) {
  if (!d.storage || d.storage->read_bytes_per_s < d.bandwidth_bytes_per_s) return "";
  return fmt::format("storage read at the DRAM rate ({:g} GB/s) is the chapter's assumption, not a flash figure "
                     "(UFS 4.0 reads up to 4.2 GB/s)", d.storage->read_bytes_per_s / units::kGBps);
}

std::string storage_class_line(const StorageSpec& s) {
  if (s.read_low_bytes_per_s == 0) return "";
  return fmt::format("storage class {}: devices of it read {:.2f}-{:.2f} GB/s", s.storage_class,
                     s.read_low_bytes_per_s / units::kGBps, s.read_high_bytes_per_s / units::kGBps);
}

Runner setup_stream(Options& opts) {
  auto o = std::make_shared<StreamOptions>();
  opts.add(Opt::device, o->device, "Device profile name or .toml path (needs [storage])").required();
  opts.add(Opt::model, o->model).required();
  opts.add(Opt::quant, o->quant);
  opts.add(Opt::runtime, o->runtime, runtime_help());
  opts.add(Opt::prefetch, o->prefetch).show_default();
  opts.add(Opt::hot, o->hot);
  return [o](const Context& ctx) {
    io::Report r;
    r.command = "stream";
    const DeviceSpec device = ctx.device(o->device, r.inputs, o->runtime);
    if (!device.storage) {
      throw UsageError(fmt::format("device '{}' has no [storage] section: add class (a storage class, e.g. \"nvme-gen4\"; "
                                   "`edgeplan profiles` lists them) or read_gbps, and page_kib, page_fault_us and "
                                   "readahead_kib (docs/profiles.md)", device.name));
    }
    const StorageSpec& storage = *device.storage;
    const ModelSpec model = ctx.model(o->model, r.inputs);
    const FileType& ft = need_format(quant_or_file_format(o->quant, model));
    const std::vector<std::uint64_t> windows = parse_windows(o->prefetch);
    const std::vector<double> fractions = parse_fractions(o->hot);
    r.inputs["quant"] = ft.name;
    r.notes = requantize_note(model, ft);
    io::Node& pages = r.inputs["prefetch_pages"] = io::Node::array();
    for (std::uint64_t w : windows) pages.push_back(w);
    io::Node& hot = r.inputs["hot_fractions"] = io::Node::array();
    for (double f : fractions) hot.push_back(f);
    const WeightSize weights = unwrap(weight_size(model, ft));

    // Every fraction (1 = the whole file) with no prefetch, the OS readahead and each window.
    std::vector<std::uint64_t> paged{1};
    if (storage.readahead_pages > 1) paged.push_back(storage.readahead_pages);
    for (const std::uint64_t w : windows) {
      if (std::find(paged.begin(), paged.end(), w) == paged.end()) paged.push_back(w);
    }
    std::vector<double> hots{1};
    for (const double f : fractions) {
      if (f != 1) hots.push_back(f);
    }

    std::vector<Scenario> scenarios{{"preload", 1, 0}};
    for (const double f : hots) {
      for (const std::uint64_t w : paged) scenarios.push_back({scenario_name(f, w, storage.readahead_pages), f, w});
    }
    io::Table load{"load", {{"scenario", "scenario"},
                            {"hot", "hot_fraction", 2},
                            {"window (pages)", "window_pages", 0},
                            {"pages", "pages", 0, true},
                            {"faults", "faults", 0, true},
                            {"read (s)", "bandwidth_s", 3},
                            {"faults (s)", "fault_s", 3},
                            {"total (s)", "total_s", 3}}, {}};
    // Under a storage class, where each total falls between its fastest and slowest devices.
    const bool ranged = storage.read_low_bytes_per_s > 0;
    if (ranged) load.columns.insert(load.columns.end(), {{"low (s)", "total_low_s", 3}, {"high (s)", "total_high_s", 3}});
    std::uint64_t file_pages = 0;
    for (const Scenario& s : scenarios) {
      const LoadResult l = load_time(storage, {weights.bytes, s.hot, s.window == 0 ? LoadMode::preload : LoadMode::paged,
                                               s.window == 0 ? 1 : s.window});
      file_pages = l.file_pages;
      std::vector<io::Cell> row{s.name, s.hot, s.window == 0 ? io::Cell{} : io::Cell{static_cast<std::int64_t>(s.window)},
                                static_cast<std::int64_t>(l.pages), static_cast<std::int64_t>(l.faults), l.bandwidth_s,
                                l.fault_s, l.total_s};
      if (ranged) row.insert(row.end(), {l.total_range->low, l.total_range->high});
      load.add(std::move(row));
    }
    r.tables.push_back(std::move(load));

    const double budget = device.memory_bytes - device.reserved_bytes;
    io::Table flash{"flash", {{"scenario", "scenario"},
                              {"hot", "hot_fraction", 2},
                              {"window (pages)", "window_pages", 0},
                              io::counted({"touched (GB)", "touched_bytes", 2, false, units::kGB}),
                              io::counted({"in DRAM (GB)", "resident_bytes", 2, false, units::kGB}),
                              io::counted({"from storage (GB)", "streamed_bytes", 2, false, units::kGB}),
                              {"faults/token", "faults_per_token", 0, true},
                              {"ms/token", "ms_per_token", 1},
                              {"tok/s", "tok_per_s", 2}}, {}};
    // Under a runtime class or a storage class, where each rate falls.
    const bool rate_ranged = device.errors.has_value() || ranged;
    if (rate_ranged) {
      flash.columns.insert(flash.columns.end(), {{"tok/s low", "tok_per_s_low", 2}, {"tok/s high", "tok_per_s_high", 2}});
    }
    for (const double f : hots) {
      for (const std::uint64_t w : paged) {
        const FlashResult fr = flash_decode(device, {weights.bytes, budget, f, w});
        std::vector<io::Cell> row{scenario_name(f, w, storage.readahead_pages), f, static_cast<std::int64_t>(w),
                                  fr.touched_bytes, fr.resident_bytes, fr.streamed_bytes,
                                  static_cast<std::int64_t>(fr.stream.faults), fr.s_per_token * units::kMsPerS,
                                  fr.tok_per_s};
        if (rate_ranged) row.insert(row.end(), {fr.tok_per_s_range->low, fr.tok_per_s_range->high});
        flash.add(std::move(row));
      }
    }
    r.tables.push_back(std::move(flash));

    r.results["weights_bytes"] = io::Node::count(weights.bytes);
    r.results["file_pages"] = file_pages;
    r.results["budget_bytes"] = io::Node::count(budget);
    const bool weights_fit = edgeplan::weights_fit(device.memory_bytes, device.reserved_bytes, weights.bytes);
    r.results["weights_fit"] = weights_fit;

    r.title = fmt::format("stream: {} ({}) on {}", model.name, ft.name, device.name);
    r.header.push_back(fmt::format("model file {:.2f} GB, {} pages x {:g} KiB; read {:g} GB/s, page fault {:g} us, "
                                   "readahead {} page(s)",
                                   weights.bytes / units::kGB,
                                   with_thousands(file_pages),
                                   storage.page_bytes / units::kKiB, storage.read_bytes_per_s / units::kGBps,
                                   storage.page_fault_s * units::kUsPerS, storage.readahead_pages));
    if (const std::string a = storage_assumption(device); !a.empty()) r.header.push_back(a);
    if (const std::string c = storage_class_line(storage); !c.empty()) r.header.push_back(c);
    r.header.push_back(runtime_line(device));  // the flash table's decode
    r.header.push_back(fmt::format("memory for weights {:.2f} GiB (memory - reserved): {}", budget / units::kGiB,
                                   weights_fit ? "the whole model stays in DRAM"
                                                           : "the rest is read from storage every token"));
    r.notes.push_back("load: preload reads every page with no faults (mlock); paged scenarios fault once per window "
                      "of pages; hot-F touches a fraction F of the pages");
    r.notes.push_back("flash: each token reads the touched weights from DRAM, after streaming from storage what "
                      "does not fit");
    if (hots.size() > 1) {
      r.notes.push_back("hot-F assumes an activation-sparsity predictor, as in LLM in a flash (Alizadeh et al., 2023): "
                        "each token needs, and the predictor picks in advance, only a fraction F of the weights; "
                        "without one, decode touches every weight (the rows with hot 1.00)");
    }
    return r;
  };
}

}  // namespace edgeplan::cli
