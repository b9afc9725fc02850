#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <limits>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "edgeplan/core/limits.hpp"
#include "edgeplan/io/inputs.hpp"
#include "edgeplan/io/model_file.hpp"
#include "edgeplan/io/parallel.hpp"
#include "edgeplan/io/require.hpp"
#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/io/suggest.hpp"
#include "edgeplan/io/sweep.hpp"
#include "edgeplan/io/warnings.hpp"
#include "edgeplan/io/text.hpp"

namespace edgeplan::cli {
namespace {

constexpr std::array kCommands{
    Command{"decode", "Decode speed: weight bytes per format, tokens/s, optional speculation", setup_decode},
    Command{"kv", "KV-cache budget and the longest context per cache type", setup_kv},
    Command{"place", "Operator placement of a prefill layer across NPU, GPU and CPU, fallbacks and transfers",
            setup_place},
    Command{"stream", "Weight loading from storage: preload, demand paging, prefetch, hot subsets, LLM in a flash",
            setup_stream},
    Command{"lora", "LoRA adapters: hot-swap time and memory versus merged copies", setup_lora},
    Command{"spec", "Speculative decoding / MTP: expected tokens, speedup, best draft length", setup_spec},
    Command{"route", "Device versus private and public cloud, per request or over a trace of traffic", setup_route},
    Command{"report", "One page for a device and model: fit, speed, context, load, adapters, fallbacks, routing",
            setup_report},
    Command{"check", "CI gate: requirements on device/model pairs from a plan file; exit 1 when any fails", setup_check},
    Command{"fit", "Which known models and formats run on a device within constraints, ranked, Pareto front", setup_fit},
    Command{"profiles", "List the device and model profiles and where each comes from", setup_profiles},
    Command{"inspect", "What a model file holds: architecture, parameters, bytes by tensor type, context, KV",
            setup_inspect},
    Command{"import", "Write the TOML model profile equivalent to a model file (GGUF or config.json)", setup_import},
    Command{"quant", "Weight quantization error (MAE, max, RMSE, cosine of W.x) and bytes per method", setup_quant},
    Command{"bench", "Measure this machine: memory read bandwidth, matmul GFLOPS, storage read rate", setup_bench, true},
    Command{"calibrate", "Fit a device's utilization, per-token overhead and prefill efficiency to llama-bench results",
            setup_calibrate},
};

// The profiles a --set key may start with.
const std::vector<std::string> kOverrideProfiles{"device", "model", "cloud"};

io::Format parse_format(const std::string& f) {
  if (f == "table") return io::Format::table;
  if (f == "json") return io::Format::json;
  if (f == "csv") return io::Format::csv;
  if (f == "md") return io::Format::md;
  throw UsageError(fmt::format("--format {}: expected table, json, csv or md", f));
}

void add_common(CLI::App& app, CommonOptions& o) {
  app.add_option("--profiles", o.profile_dirs, "Directory of profiles searched before the built-in ones (repeatable)")
      ->type_name("DIR");
  app.add_option("--set", o.sets, "Override a profile value, e.g. device.bandwidth_gbps=120 (repeatable)")
      ->type_name("KEY=VALUE");
  app.add_option("--format", o.format, "Output format: table, json, csv or md (Markdown)")->type_name("FMT")->capture_default_str();
  app.add_option("--sweep", o.sweeps, "Run once per value: KEY=V1,V2,... or KEY=START:STOP:STEP (repeatable: all combinations)")
      ->type_name("KEY=VALUES");
  app.add_option("--require", o.requirements, "Fail (exit 1) unless 'FIELD OP VALUE' holds, e.g. 'fits == true' (repeatable)")
      ->type_name("EXPR");
}

// The largest value of each whole-number option that has no CLI::Range of its own, by name. A name means the
// same thing in every subcommand.
constexpr std::array<std::pair<std::string_view, std::uint64_t>, 8> kOptionMaxima{{
    {"--context", kMaxContextTokens},          // tokens in the KV cache (core/kv.hpp)
    {"--min-context", kMaxContextTokens},
    {"--prompt", limits::kPromptTokens},       // tokens of one prefill
    {"--seq", limits::kPromptTokens},
    {"--rank", limits::kLoraRank},
    {"--mtp-layers", limits::kLayers},
    {"--threads", 4096},                       // as bench --threads
    {"--seed", std::numeric_limits<std::uint64_t>::max()},  // any seed
}};

// CLI11 reads "-1" into an unsigned option as a huge number, a value past 2^64 as 2^64 - 1, and "nan", "inf"
// or 1e300 into a double: every numeric option of every subcommand gets a check that refuses them before
// conversion. Whole numbers are bounded by kOptionMaxima (an unlisted one, as profile numbers, by
// io::kMaxMagnitude), other numbers like profile numbers.
void check_numeric_options(CLI::App& app) {
  static const CLI::Validator finite(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end != text.c_str() && *end == '\0' && !std::isfinite(v)) {
          return "expected a finite number (got " + text + ")";
        }
        if (end != text.c_str() && *end == '\0' && std::abs(v) > io::kMaxMagnitude) {
          return fmt::format("expected a number of at most {:g} in magnitude (got {})", io::kMaxMagnitude, text);
        }
        return "";
      },
      "", "finite");
  for (CLI::Option* o : app.get_options()) {
    if (o->get_type_name() == "UINT") {
      std::uint64_t max = static_cast<std::uint64_t>(io::kMaxMagnitude);
      for (const auto& [name, bound] : kOptionMaxima) {
        if (o->check_name(std::string(name))) max = bound;
      }
      o->check(CLI::Validator(
          [max](std::string& text) -> std::string {
            if (!text.empty() && text.front() == '-') return "expected a whole number of 0 or more (got " + text + ")";
            std::uint64_t v = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (end != text.data() + text.size()) return "";  // not a whole number: CLI11 says it cannot convert it
            if (ec == std::errc::result_out_of_range || v > max) {
              return fmt::format("expected a whole number of at most {} (got {})", max, text);
            }
            return "";
          },
          "", "whole"));
    }
    if (o->get_type_name() == "FLOAT") o->check(finite);
  }
}

// Decimals needed to show every value of a sweep axis as typed (at most 6).
int decimals_of(const std::vector<std::string>& values) {
  int most = 0;
  for (const std::string& v : values) {
    const auto dot = v.find('.');
    if (dot != std::string::npos) most = std::max(most, static_cast<int>(v.size() - dot - 1));
  }
  return std::min(most, 6);
}

io::Cell sweep_cell(const std::string& value) {
  double v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec == std::errc() && p == value.data() + value.size()) return v;
  return value;
}

// The options of sweep combination `index`: the common ones with the combination's values as --set overrides.
CommonOptions combination_options(const CommonOptions& common, const std::vector<io::SweepAxis>& axes,
                                  std::uint64_t index) {
  CommonOptions options = common;
  const std::vector<std::string> values = io::sweep_combination(axes, index);
  for (std::size_t a = 0; a < axes.size(); ++a) options.sets.push_back(axes[a].key + "=" + values[a]);
  return options;
}

// The value index of each axis in combination `index` (the last axis varying fastest).
void combination_indices(const std::vector<io::SweepAxis>& axes, std::uint64_t index, std::vector<std::size_t>& out) {
  out.resize(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    out[a] = index % axes[a].values.size();
    index /= axes[a].values.size();
  }
}

// The swept values of combination `at` as the cells in front of each of its rows.
void sweep_cells(const std::vector<io::SweepAxis>& axes, const std::vector<std::size_t>& at,
                 std::vector<io::Cell>& out) {
  out.clear();
  for (std::size_t a = 0; a < axes.size(); ++a) out.push_back(sweep_cell(axes[a].values[at[a]]));
}

// The first combination in [0, n) for which valid(device, index) is false (n when none), checked on all cores,
// each with its own copy of `device`.
template <class Valid>
std::uint64_t first_invalid(std::uint64_t n, const DeviceSpec& device, Valid valid) {
  std::vector<std::uint64_t> first(io::worker_count(), n);
  io::parallel_for(n, [&](unsigned w, std::uint64_t begin, std::uint64_t end) {
    DeviceSpec d = device;
    Valid check = valid;  // its own copy: `valid` may keep scratch state
    for (std::uint64_t i = begin; i < end; ++i) {
      if (!check(d, i)) {
        first[w] = i;
        return;
      }
    }
  }, io::kParallelGrain);
  return *std::min_element(first.begin(), first.end());
}

// A sweep over device numbers only, on a command that computes its rows from a DeviceSpec: each value is
// read once (as the profile loader reads it) and set on a copy of the device per combination, on all cores.
// Returns nullopt when the sweep is not of that kind. An invalid value or combination is reported by running
// the command on the first combination that has one, so the error is word for word the loader's.
std::optional<io::RowSource> device_number_rows(const Runner& runner, const CommonOptions& common,
                                                const std::vector<io::SweepAxis>& axes, std::uint64_t n) {
  if (!runner.device_rows) return std::nullopt;
  const auto& schema = io::schema::device_schema();
  struct Axis {
    const io::schema::Row<DeviceSpec>* row;
    std::vector<std::optional<io::schema::Value>> values;  // nullopt when the loader would reject the value
  };
  auto direct = std::make_shared<std::vector<Axis>>();
  for (const io::SweepAxis& a : axes) {
    const io::schema::Row<DeviceSpec>* row =
        a.key.starts_with("device.") ? io::schema::find_row(schema, std::string_view(a.key).substr(7)) : nullptr;
    if (!row || !row->settable || (row->type != io::schema::Type::number && row->type != io::schema::Type::count)) {
      return std::nullopt;
    }
    Axis& axis = direct->emplace_back(Axis{row, std::vector<std::optional<io::schema::Value>>(a.values.size())});
    io::parallel_for(a.values.size(), [&](unsigned, std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t i = begin; i < end; ++i) axis.values[i] = io::schema::parse_fast(*row, a.values[i]);
    }, io::kParallelGrain);
  }
  auto base = std::make_shared<const DeviceRows>(runner.device_rows(Context(common)));
  for (const io::SweepAxis& a : axes) {  // a key of a section the device does not have: the loader's road
    if (!io::schema::held(schema, std::string_view(a.key).substr(7), base->device)) return std::nullopt;
  }
  // Sets combination i's values on d; false when the loader would reject one of them or the combination.
  auto set = [&axes, direct = std::shared_ptr<const std::vector<Axis>>(direct),
              at = std::vector<std::size_t>()](DeviceSpec& d, std::uint64_t i) mutable {
    combination_indices(axes, i, at);
    bool valid = true;
    for (std::size_t a = 0; a < direct->size(); ++a) {
      const std::optional<io::schema::Value>& v = (*direct)[a].values[at[a]];
      if (v) (*direct)[a].row->set(d, *v);
      valid = valid && v.has_value();
    }
    return valid && io::schema::consistent(io::schema::device_schema(), d);
  };
  if (const std::uint64_t bad = first_invalid(n, base->device, set); bad < n) {
    runner(Context(combination_options(common, axes, bad)));  // throws the loader's error
    throw UsageError(fmt::format("--sweep: combination {} was rejected here but not by the profile loader (a bug)", bad + 1));
  }
  return io::RowSource{n, [base, set, &axes] {
                         return [base, set, &axes, device = base->device, at = std::vector<std::size_t>(),
                                 prefix = std::vector<io::Cell>()](std::uint64_t i, Rows& rows) mutable {
                           set(device, i);
                           combination_indices(axes, i, at);
                           sweep_cells(axes, at, prefix);
                           base->rows(device, prefix, rows);
                         };
                       }};
}

// What a run of a command says besides its output: requirements that failed (exit 1) and figures that could
// not be evaluated (exit 2).
struct Verdict {
  std::vector<std::string> failures, errors;
};

// The command's own gate (check) first, then the --require expressions.
Verdict verdict_of(const io::Report& report, const std::vector<io::Requirement>& reqs) {
  Verdict v{report.failures, report.errors};
  const std::vector<std::string> unmet = unwrap(io::check_requirements(io::full_results(report), reqs));
  v.failures.insert(v.failures.end(), unmet.begin(), unmet.end());
  return v;
}

// Runs `runner` once per combination of the sweeps, on all cores, and writes one table: a column per swept key
// in front of the columns of the command's first table. Requirements are checked on every combination; the
// failures and the figures that could not be evaluated are returned, in combination order.
Verdict run_sweep(const Command& command, const Runner& runner, const CommonOptions& common,
                                   const std::vector<io::SweepAxis>& axes, const std::vector<io::Requirement>& reqs,
                                   io::Format format, std::ostream& out) {
  const std::uint64_t n = unwrap(io::sweep_size(axes));
  const io::Report first = runner(Context(combination_options(common, axes, 0)));
  if (first.tables.empty()) throw UsageError(fmt::format("--sweep: {} has no table to sweep", first.command));
  io::Report head;
  head.command = first.command;
  head.title = fmt::format("sweep of {} ({} combinations): {}", first.command, n, first.title);
  head.inputs = first.inputs;
  if (format == io::Format::json) {  // only JSON prints the inputs
    io::Json sweeps = io::Json::array();
    for (const io::SweepAxis& a : axes) sweeps.push_back({{"key", a.key}, {"values", a.values}});
    head.inputs["sweep"] = sweeps;
  }
  io::Table t{"sweep", {}, {}};
  for (const io::SweepAxis& a : axes) t.columns.push_back({a.key, a.key, decimals_of(a.values)});
  for (const io::Column& c : first.tables.front().columns) t.columns.push_back(c);
  head.tables.push_back(std::move(t));

  if (reqs.empty()) {
    if (std::optional<io::RowSource> direct = device_number_rows(runner, common, axes, n)) {
      io::render_rows(head, *direct, format, out);
      return {};
    }
  }
  // Any other sweep: the command runs per combination, on all cores unless it measures the machine. Every
  // combination is run before anything is written, so an error (the first in combination order) leaves no
  // output, as without a sweep. A sweep of at most kKeptCombinations keeps its rows from that run; a larger one
  // keeps only the verdicts and runs each combination again when its rows are written, a block at a time (table
  // and Markdown measure their columns first, so they run it twice more): memory stays bounded.
  constexpr std::uint64_t kKeptCombinations = 8192;
  const bool keep = n <= kKeptCombinations || command.measures;
  const auto run_one = [&](std::uint64_t i) {
    io::Report one = runner(Context(combination_options(common, axes, i)));
    if (one.tables.empty()) throw UsageError(fmt::format("--sweep: {} has no table to sweep", one.command));
    return one;
  };
  std::vector<Rows> rows(keep ? n : 0);
  std::vector<std::vector<std::pair<std::uint64_t, Verdict>>> verdicts(io::worker_count());  // the non-empty ones
  std::atomic<std::uint64_t> first_error{n};
  std::vector<std::pair<std::uint64_t, std::exception_ptr>> errors(io::worker_count(), {n, nullptr});
  io::parallel_for(n, [&](unsigned w, std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end && i < first_error.load(); ++i) {
      try {
        io::Report one = run_one(i);
        Verdict v = verdict_of(one, reqs);
        if (!v.failures.empty() || !v.errors.empty()) verdicts[w].emplace_back(i, std::move(v));
        if (keep) rows[i] = std::move(one.tables.front().rows);
      } catch (...) {
        errors[w] = {i, std::current_exception()};
        for (std::uint64_t seen = first_error.load(); i < seen && !first_error.compare_exchange_weak(seen, i);) {
        }
        return;
      }
    }
  }, command.measures ? n : 1);
  for (const auto& [i, e] : errors) {
    if (e && i == first_error.load()) std::rethrow_exception(e);
  }
  const io::RowSource kept{n, [&] {
                             return [&, at = std::vector<std::size_t>(), prefix = std::vector<io::Cell>()](
                                        std::uint64_t i, Rows& made) mutable {
                               combination_indices(axes, i, at);
                               sweep_cells(axes, at, prefix);
                               const Rows rerun = keep ? Rows() : run_one(i).tables.front().rows;
                               for (const auto& row : keep ? rows[i] : rerun) {
                                 std::vector<io::Cell>& r = made.emplace_back(prefix);
                                 r.insert(r.end(), row.begin(), row.end());
                               }
                             };
                           }};
  io::render_rows(head, kept, format, out);
  std::vector<std::pair<std::uint64_t, Verdict>> found;
  for (auto& each : verdicts) std::move(each.begin(), each.end(), std::back_inserter(found));
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Verdict all;
  for (const auto& [i, verdict] : found) {
    const std::vector<std::string> values = io::sweep_combination(axes, i);
    std::string label;
    for (std::size_t a = 0; a < axes.size(); ++a) label += (label.empty() ? "" : ", ") + axes[a].key + "=" + values[a];
    for (const std::string& f : verdict.failures) all.failures.push_back(fmt::format("[{}] {}", label, f));
    for (const std::string& e : verdict.errors) all.errors.push_back(fmt::format("[{}] {}", label, e));
  }
  return all;
}

}  // namespace

std::span<const Command> commands() { return kCommands; }

Context::Context(const CommonOptions& options) : path_(unwrap(io::default_search_path(options.profile_dirs))) {
  overrides_ = unwrap(io::parse_overrides(options.sets, kOverrideProfiles));
}

io::ProfileText Context::find(const std::string& kind, const std::string& name) const {
  io::ProfileText text = unwrap(io::find_profile(kind, name, path_));
  if (!text.shadows.empty()) io::warn(fmt::format("{} is read from {}, which shadows {}", name, text.display, text.shadows));
  return text;
}

namespace {

// Records a loaded profile under inputs[key]: its name, where it came from, and the values used.
template <class Spec>
Spec recorded(Spec spec, const io::ProfileText& text, const char* key, io::Json& inputs) {
  io::Json j = {{"name", spec.name}, {"source", text.display}};
  j.update(io::to_json(spec));
  inputs[key] = std::move(j);
  return spec;
}

}  // namespace

DeviceSpec Context::device(const std::string& name, io::Json& inputs) const {
  const io::ProfileText text = find("devices", name);
  return recorded(unwrap(io::load_device(text, overrides_)), text, "device", inputs);
}

ModelSpec Context::model(const std::string& name, io::Json& inputs) const {
  const io::ProfileText text = io::is_model_file(name) ? unwrap(io::model_file_profile(name)) : find("models", name);
  return recorded(unwrap(io::load_model(text, overrides_)), text, "model", inputs);
}

io::Report run_command(const std::string& name, const std::vector<std::string>& args, const Context& ctx) {
  for (const Command& c : kCommands) {
    if (name != c.name) continue;
    CLI::App app{c.description, c.name};
    const Runner runner = c.setup(app);
    check_numeric_options(app);
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
    try {
      app.parse(reversed);
    } catch (const CLI::ParseError& e) {
      throw UsageError(fmt::format("{}: {}", name, e.what()));
    }
    return runner(ctx);
  }
  throw UsageError("no command " + name);
}

std::vector<std::string> split_list(const std::string& text, const std::string& option) {
  std::vector<std::string> out;
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    std::string item(rest.substr(0, comma));
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (item.empty()) throw UsageError(fmt::format("{} '{}': empty item in the list", option, text));
    out.push_back(item);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

std::string with_thousands(std::uint64_t v) { return io::group_digits(std::to_string(v)); }

std::string rounded_with_thousands(double v) {
  if (!std::isfinite(v)) return fmt::format("{}", v);
  return (v < 0 ? "-" : "") + io::group_digits(fmt::format("{:.0f}", std::abs(v)));
}

double parse_number(const std::string& text, const std::string& what) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v)) {
    throw UsageError(fmt::format("{}: '{}' is not a number", what, text));
  }
  return v;
}

namespace {

// Warnings recorded while the command ran come after its output (and after an error), each once.
void print_warnings(std::ostream& err) {
  for (const std::string& w : io::take_warnings()) err << "edgeplan: warning: " << w << "\n";
}

int run_command_line(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"edgeplan: capacity planner for running large language models on edge devices", "edgeplan"};
  app.set_version_flag("--version", std::string("edgeplan ") + EDGEPLAN_VERSION);
  app.require_subcommand(1);
  app.footer("Run 'edgeplan COMMAND --help' for a command's options. Exit codes: 0 ok, 1 a --require failed, "
             "2 bad usage or input.");
  CommonOptions common;
  std::vector<std::tuple<CLI::App*, Runner, const Command*>> runners;
  for (const Command& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    add_common(*sub, common);
    runners.emplace_back(sub, c.setup(*sub), &c);
    check_numeric_options(*sub);
  }

  // Bare `edgeplan`, `edgeplan help` and `edgeplan help COMMAND` print the help, as --help does.
  if (argc == 1 || std::string_view(argv[1]) == "help") {
    if (argc > 3) {
      err << "edgeplan: error: help takes at most one command\n";
      return kExitUsage;
    }
    if (argc == 3) {
      for (auto& [sub, runner, command] : runners) {
        if (command->name == std::string_view(argv[2])) {
          out << sub->help("edgeplan");
          return kExitOk;
        }
      }
    }
    if (argc < 3 || std::string_view(argv[2]) == "--help" || std::string_view(argv[2]) == "-h") {
      out << app.help();
      return kExitOk;
    }
    std::vector<std::string> names;
    for (const Command& c : kCommands) names.emplace_back(c.name);
    err << fmt::format("edgeplan: error: unknown command '{}'{}\n", io::clipped(argv[2]), io::did_you_mean(argv[2], names));
    return kExitUsage;
  }
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const Command& c : kCommands) names.emplace_back(c.name);
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      err << fmt::format("edgeplan: error: unknown command '{}'{}\n", io::clipped(argv[1]), io::did_you_mean(argv[1], names));
      return kExitUsage;
    }
  }
  // An option the command does not have, named before CLI11 reports something less direct about it ("--device is
  // required" for a misspelt --device): with the nearest option the command has.
  for (auto& [sub, runner, command] : runners) {
    if (argc < 2 || command->name != std::string_view(argv[1])) continue;
    std::vector<std::string> known{"--help"};
    for (const CLI::Option* o : sub->get_options()) {
      for (const std::string& name : o->get_lnames()) known.push_back("--" + name);
    }
    for (int i = 2; i < argc && std::string_view(argv[i]) != "--"; ++i) {
      const std::string_view arg = argv[i];
      if (!arg.starts_with("--")) continue;
      const std::string name(arg.substr(0, arg.find('=')));
      if (std::find(known.begin(), known.end(), name) != known.end()) continue;
      err << fmt::format("edgeplan: error: {} has no option {}{}\n", command->name, io::clipped(name),
                         io::did_you_mean(name, known));
      err << fmt::format("Run 'edgeplan {} --help' for its options.\n", command->name);
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);
    err << "edgeplan: error: " << io::escaped(e.what()) << "\n";
    err << "Run 'edgeplan --help' or 'edgeplan COMMAND --help' for usage.\n";
    return kExitUsage;
  }

  const auto finish = [&err](int code) {
    print_warnings(err);
    return code;
  };
  try {
    const io::Format format = parse_format(common.format);
    std::vector<io::Requirement> reqs;
    for (const std::string& r : common.requirements) reqs.push_back(unwrap(io::parse_requirement(r)));
    std::vector<io::SweepAxis> axes;
    for (const std::string& s : common.sweeps) axes.push_back(unwrap(io::parse_sweep(s)));
    for (auto& [sub, runner, command] : runners) {
      if (!sub->parsed()) continue;
      Verdict verdict;
      if (axes.empty()) {
        const io::Report report = runner(Context(common));
        verdict = verdict_of(report, reqs);
        out << io::render(report, format);
      } else {
        verdict = run_sweep(*command, runner, common, axes, reqs, format, out);
      }
      for (const std::string& f : verdict.failures) err << "edgeplan: " << io::escaped(f) << "\n";
      for (const std::string& e : verdict.errors) err << "edgeplan: error: " << io::escaped(e) << "\n";
      if (!out.flush()) {  // a full disk or a closed pipe: the output is not all there
        err << fmt::format("edgeplan: error: cannot write the output{}\n",
                           errno != 0 ? fmt::format(" ({})", std::strerror(errno)) : "");
        return finish(kExitUsage);
      }
      if (!verdict.errors.empty()) return finish(kExitUsage);
      return finish(verdict.failures.empty() ? kExitOk : kExitRequirementFailed);
    }
  } catch (const UsageError& e) {
    err << "edgeplan: error: " << io::escaped(e.what()) << "\n";
    return finish(kExitUsage);
  }
  return finish(kExitUsage);
}

}  // namespace

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    return run_command_line(argc, argv, out, err);
  } catch (const std::exception& e) {  // a bug: say so instead of aborting
    err << "edgeplan: internal error: " << io::escaped(e.what()) << "\n";
  } catch (...) {
    err << "edgeplan: internal error: an exception of unknown type\n";
  }
  print_warnings(err);
  return kExitUsage;
}

}  // namespace edgeplan::cli
