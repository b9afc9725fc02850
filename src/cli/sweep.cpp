// The sweep road (--sweep, lists of devices and models): option axes make command lines, each parsed once;
// profile keys are set on structs where the command computes its rows from them, else --set per combination.
#include <algorithm>
#include <atomic>
#include <iterator>
#include <limits>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/app.hpp"
#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/io/text.hpp"
#include "edgeplan/util/names.hpp"
#include "edgeplan/util/parallel.hpp"
#include "edgeplan/util/text.hpp"

namespace edgeplan::cli {
namespace {

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
  if (const std::optional<double> v = util::parse_number(value)) return *v;
  return value;
}

// The value index of each axis in combination `index` (the last axis varying fastest).
void combination_indices(const std::vector<io::SweepAxis>& axes, std::uint64_t index, std::vector<std::size_t>& out) {
  out.resize(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    out[a] = index % axes[a].values.size();
    index /= axes[a].values.size();
  }
}

// Combination `index` for people: "device.bandwidth_gbps=50, context=4096".
std::string combination_label(const std::vector<io::SweepAxis>& axes, std::uint64_t index) {
  const std::vector<std::string> values = io::sweep_combination(axes, index);
  std::string label;
  for (std::size_t a = 0; a < axes.size(); ++a) label += (label.empty() ? "" : ", ") + axes[a].key + "=" + values[a];
  return label;
}

// The swept values of a combination as the cells in front of each of its rows, and the value index of each axis
// they hold.
struct SweptCells {
  std::vector<std::size_t> at;
  std::vector<io::Cell> cells;
};

// Makes `out` the cells of combination `at`, reading again only the values of the axes that changed since the
// combination it held (the last axis varies fastest: most combinations change one).
void sweep_cells(const std::vector<io::SweepAxis>& axes, const std::vector<std::size_t>& at, SweptCells& out) {
  if (out.cells.size() != axes.size()) {
    out.cells.assign(axes.size(), io::Cell());
    out.at.assign(axes.size(), std::numeric_limits<std::size_t>::max());  // no value held yet
  }
  for (std::size_t a = 0; a < axes.size(); ++a) {
    if (out.at[a] == at[a]) continue;
    out.cells[a] = sweep_cell(axes[a].values[at[a]]);
    out.at[a] = at[a];
  }
}

// The most command lines the option axes of a sweep may make (each is parsed once, and run once to check it).
constexpr std::uint64_t kMaxOptionCombinations = 4096;

// Command lines below which a thread costs more than it saves (each line takes some 50 microseconds to parse,
// to run and to make its structs).
constexpr std::uint64_t kLineGrain = 64;

// Long options every command has (their rows in the option table), which a sweep does not vary.
bool common_option(std::string_view name) {
  CommonOptions targets;
  const Options common = common_options(targets);
  return std::any_of(common.bindings().begin(), common.bindings().end(),
                     [name](const Binding& b) { return b.row->name.substr(2) == name; });
}

// `args` without the options named in `names` (as --NAME VALUE or --NAME=VALUE).
std::vector<std::string> without_options(const std::vector<std::string>& args, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool named = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return arg == "--" + n || arg.starts_with("--" + n + "=");
    });
    if (!named) {
      out.push_back(arg);
    } else if (arg.find('=') == std::string::npos) {
      ++i;  // its value
    }
  }
  return out;
}

// The runner of `command` with its own arguments `args` (a command line without the program and command names).
// With `swept`, each of those names must be an option of the command that a sweep may vary.
Runner parse_command(const Command& command, const std::vector<std::string>& args, const std::vector<std::string>* swept) {
  CLI::App app{command.description, command.name};
  CommonOptions ignored;  // the caller's common options stand; these are only parsed past
  Runner runner = add_command(app, command, ignored);
  for (const std::string& key : swept ? *swept : std::vector<std::string>()) {
    const CLI::Option* o = app.get_option_no_throw("--" + key);
    if (o && !common_option(key) && o->get_expected_max() == 1) continue;
    std::vector<std::string> names;
    for (const CLI::Option* each : app.get_options()) {
      for (const std::string& name : each->get_lnames()) {
        if (!common_option(name) && each->get_expected_max() == 1) names.push_back(name);
      }
    }
    throw UsageError(fmt::format("--sweep {}: {} has no option --{} to sweep, and a profile key is PROFILE.KEY "
                                 "(device.bandwidth_gbps){}", io::clipped(key), command.name, io::clipped(key),
                                 util::did_you_mean(key, names)));
  }
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw UsageError(fmt::format("{}: {}", command.name, e.what()));
  }
  return runner;
}

// The swept keys and their values, for the title: "device = phone8g, apple-m2-24g x context = 1024 ... 32768 (32
// values)" (four values at most are listed).
std::string axes_text(const std::vector<io::SweepAxis>& axes) {
  std::vector<std::string> parts;
  for (const io::SweepAxis& a : axes) {
    const std::vector<std::string>& v = a.values;
    parts.push_back(v.size() <= 4 ? fmt::format("{} = {}", a.key, fmt::join(v, ", "))
                                  : fmt::format("{} = {} ... {} ({} values)", a.key, v.front(), v.back(), v.size()));
  }
  return fmt::format("{}", fmt::join(parts, " x "));
}

// The columns of a sweep's command lines together (a device without [prefill] gives decode fewer columns than
// one with it): the first line's columns in order, a column new to a later line placed after the one before it.
// maps[j][k] is where line j's column k goes; a column titled differently by two lines ("fits 2048", "fits 8192")
// is titled by its key.
struct SweepColumns {
  std::vector<io::Column> columns;
  std::vector<std::vector<std::size_t>> maps;
  std::vector<bool> identity;  // maps[j] is 0, 1, 2, ... over all the columns
};

SweepColumns sweep_columns(const std::vector<std::vector<io::Column>>& lines) {
  SweepColumns out;
  for (const std::vector<io::Column>& line : lines) {
    std::size_t after = 0;  // where the next new column goes
    for (const io::Column& c : line) {
      const auto it = std::find_if(out.columns.begin(), out.columns.end(),
                                   [&](const io::Column& seen) { return seen.key == c.key; });
      if (it == out.columns.end()) {
        out.columns.insert(out.columns.begin() + static_cast<std::ptrdiff_t>(after), c);
        ++after;
      } else {
        if (it->title != c.title) it->title = c.key;
        after = static_cast<std::size_t>(it - out.columns.begin()) + 1;
      }
    }
  }
  for (const std::vector<io::Column>& line : lines) {
    std::vector<std::size_t>& map = out.maps.emplace_back();
    for (const io::Column& c : line) {
      map.push_back(static_cast<std::size_t>(std::find_if(out.columns.begin(), out.columns.end(), [&](const io::Column& u) {
                                                return u.key == c.key;
                                              }) - out.columns.begin()));
    }
    bool identity = map.size() == out.columns.size();
    for (std::size_t k = 0; k < map.size(); ++k) identity = identity && map[k] == k;
    out.identity.push_back(identity);
  }
  return out;
}

// Moves the cells after the first `prefix` of rows[from ...] to where `map` says, in rows `width` cells wide
// past the prefix ("--" where a line has no such column).
void remap(Rows& rows, std::size_t from, std::size_t prefix, const std::vector<std::size_t>& map, std::size_t width) {
  for (std::size_t r = from; r < rows.size(); ++r) {
    std::vector<io::Cell> row(prefix + width);
    std::move(rows[r].begin(), rows[r].begin() + static_cast<std::ptrdiff_t>(prefix), row.begin());
    for (std::size_t k = 0; k < map.size(); ++k) row[prefix + map[k]] = std::move(rows[r][prefix + k]);
    rows[r] = std::move(row);
  }
}

// How a sweep's combinations run. An axis whose key is an option of the command (context, quant, device, ...)
// changes the command line: it is parsed once per combination of the option axes. An axis over a profile key
// (device.bandwidth_gbps) is a --set override of the combination.
class SweepRuns {
 public:
  SweepRuns(const Command& command, const std::vector<std::string>& args, const CommonOptions& common,
            const std::vector<io::SweepAxis>& axes)
      : common_(common), axes_(axes) {
    std::vector<std::string> swept;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      option_.push_back(axes[a].key.find('.') == std::string::npos);
      if (option_.back()) swept.push_back(axes[a].key);
    }
    const std::vector<std::string> rest = without_options(args, swept);
    std::uint64_t lines = 1;
    for (std::size_t a = 0; a < axes.size(); ++a) lines *= option_[a] ? axes[a].values.size() : 1;
    if (lines > kMaxOptionCombinations) {
      throw UsageError(fmt::format("--sweep: the swept options make {} command lines; at most {} (sweep profile keys, "
                                   "such as device.bandwidth_gbps, for more)", lines, kMaxOptionCombinations));
    }
    // Command line j: the option axes' values of its index, the last option axis varying fastest. The lines are
    // parsed on all cores; an error is the first line's that has one.
    runners_.resize(lines);
    util::parallel_for(lines, [&](unsigned, std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t j = begin; j < end; ++j) {
        std::vector<std::string> line = rest;
        std::uint64_t index = j;
        for (std::size_t a = axes.size(); a-- > 0;) {
          if (!option_[a]) continue;
          const std::size_t v = index % axes[a].values.size();
          index /= axes[a].values.size();
          line.insert(line.end(), {"--" + axes[a].key, axes[a].values[v]});
        }
        runners_[j] = parse_command(command, line, j == 0 ? &swept : nullptr);
      }
    }, kLineGrain);
  }

  std::uint64_t lines() const { return runners_.size(); }
  const Runner& line(std::uint64_t j) const { return runners_[j]; }
  // The command line of the combination whose axis values are `at`.
  std::uint64_t line_of(const std::vector<std::size_t>& at) const {
    std::uint64_t j = 0;
    for (std::size_t a = 0; a < axes_.size(); ++a) {
      if (option_[a]) j = j * axes_[a].values.size() + at[a];
    }
    return j;
  }
  // The first combination run on command line j (every other axis at its first value).
  std::uint64_t first_of_line(std::uint64_t j) const {
    std::uint64_t index = 0, stride = 1;
    for (std::size_t a = axes_.size(); a-- > 0;) {
      if (option_[a]) {
        index += (j % axes_[a].values.size()) * stride;
        j /= axes_[a].values.size();
      }
      stride *= axes_[a].values.size();
    }
    return index;
  }
  bool is_option(std::size_t axis) const { return option_[axis]; }

  // The common options of combination `index`: the profile axes' values as --set overrides.
  CommonOptions options(std::uint64_t index) const {
    CommonOptions options = common_;
    const std::vector<std::string> values = io::sweep_combination(axes_, index);
    for (std::size_t a = 0; a < axes_.size(); ++a) {
      if (!option_[a]) options.sets.push_back(axes_[a].key + "=" + values[a]);
    }
    return options;
  }
  // Runs combination `index`.
  io::Report run(std::uint64_t index) const {
    std::vector<std::size_t> at;
    combination_indices(axes_, index, at);
    return runners_[line_of(at)](Context(options(index)));
  }

 private:
  const CommonOptions& common_;
  const std::vector<io::SweepAxis>& axes_;
  std::vector<bool> option_;
  std::vector<Runner> runners_;
};

// One swept profile key set straight on a struct: its schema row and each value as the loader reads it.
template <class Spec>
struct KeyAxis {
  std::size_t axis;  // in `axes`
  io::schema::Key<Spec> key;
  std::vector<std::optional<io::schema::Value>> values;  // nullopt when the loader would reject the value
};

// The axis over `key` below `schema`'s profile ("device.bandwidth_gbps") when a struct can take its values: a
// settable number or count; nullopt otherwise. Its values are read on all cores.
template <class Spec>
std::optional<KeyAxis<Spec>> key_axis(const io::schema::Schema<Spec>& schema, std::size_t axis,
                                      const io::SweepAxis& a) {
  const std::string prefix = std::string(schema.profile) + ".";
  if (!a.key.starts_with(prefix)) return std::nullopt;
  std::optional<io::schema::Key<Spec>> key = io::schema::find_key(schema, std::string_view(a.key).substr(prefix.size()));
  if (!key) return std::nullopt;
  const io::schema::Row<Spec>* row = key->row;
  if (!row->settable || (row->type != io::schema::Type::number && row->type != io::schema::Type::count)) {
    return std::nullopt;
  }
  KeyAxis<Spec> out{axis, std::move(*key), std::vector<std::optional<io::schema::Value>>(a.values.size())};
  util::parallel_for(a.values.size(), [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t v = begin; v < end; ++v) out.values[v] = io::schema::parse_fast(*row, a.values[v]);
  }, util::kParallelGrain);
  return out;
}

// Sets the values of combination `at` of `axes` on `spec`; false when the loader would reject one of them or,
// with `check`, the struct they make (a combination checked before needs no second check of its struct).
template <class Spec>
bool set_values(const io::schema::Schema<Spec>& schema, const std::vector<KeyAxis<Spec>>& axes,
                const std::vector<std::size_t>& at, Spec& spec, bool check) {
  bool valid = true;
  for (const KeyAxis<Spec>& axis : axes) {
    const std::optional<io::schema::Value>& v = axis.values[at[axis.axis]];
    if (v) axis.key.set(spec, *v);
    valid = valid && v.has_value();
  }
  return valid && (!check || axes.empty() || io::schema::consistent(schema, spec));
}

// Whether every key of `axes` has its section in the loaded `spec` (else the loader's road says what it does).
template <class Spec>
bool all_held(const io::schema::Schema<Spec>& schema, const std::vector<KeyAxis<Spec>>& axes,
              const std::vector<io::SweepAxis>& swept, const Spec& spec) {
  return std::all_of(axes.begin(), axes.end(), [&](const KeyAxis<Spec>& axis) {
    const std::string& key = swept[axis.axis].key;
    return io::schema::held(schema, std::string_view(key).substr(key.find('.') + 1), spec).has_value();
  });
}

// A sweep over device and model numbers and options only, on a command that computes its rows from a
// DeviceSpec and a ModelSpec: each value is read once (as the profile loader reads it) and set on a copy of the
// structs per combination, on all cores; each command line of the option axes loads its profiles once. Returns
// nullopt when the sweep is not of that kind. An invalid value or combination (one the loader or the command
// rejects) is reported by running the command on the first combination that has one, so the error is word for
// word the loader's or the command's.
std::optional<io::RowSource> struct_rows(const SweepRuns& runs, std::shared_ptr<const SweepColumns> columns,
                                         const CommonOptions& common, const std::vector<io::SweepAxis>& axes,
                                         std::uint64_t n) {
  const auto& device_schema = io::schema::device_schema();
  const auto& model_schema = io::schema::model_schema();
  struct Keys {
    std::vector<KeyAxis<DeviceSpec>> device;
    std::vector<KeyAxis<ModelSpec>> model;
  };
  auto keys = std::make_shared<Keys>();
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (runs.is_option(i)) continue;
    if (auto d = key_axis(device_schema, i, axes[i])) {
      keys->device.push_back(std::move(*d));
    } else if (auto m = key_axis(model_schema, i, axes[i])) {
      keys->model.push_back(std::move(*m));
    } else {
      return std::nullopt;
    }
  }
  for (std::uint64_t j = 0; j < runs.lines(); ++j) {
    if (!runs.line(j).struct_rows) return std::nullopt;
  }
  auto bases = std::make_shared<std::vector<StructRows>>(runs.lines());
  util::parallel_for(runs.lines(), [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t j = begin; j < end; ++j) (*bases)[j] = runs.line(j).struct_rows(Context(common));
  }, kLineGrain);
  for (const StructRows& b : *bases) {
    if (!all_held(device_schema, keys->device, axes, b.device) || !all_held(model_schema, keys->model, axes, b.model)) {
      return std::nullopt;
    }
  }
  // Combination i's structs: its values set on its command line's copies (`made`), whose index is returned; the
  // number of lines when the loader would reject one of the values or (with `check`) the structs they make.
  // `model_id` is 0 without model axes, else 1 + the index of the model axes' values (as if they were the only
  // axes).
  struct Made {
    std::vector<DeviceSpec> devices;
    std::vector<ModelSpec> models;
    std::vector<std::size_t> at;
    std::uint64_t model_id = 0;
    std::vector<std::optional<StructRows::Worker>> workers;  // per command line, made when first used
    StructRows::Worker& worker(const std::vector<StructRows>& bases, std::uint64_t j) {
      if (!workers[j]) workers[j] = bases[j].worker();
      return *workers[j];
    }
  };
  auto set = [&axes, &runs, bases, keys = std::shared_ptr<const Keys>(keys)](Made& made, std::uint64_t i, bool check) {
    combination_indices(axes, i, made.at);
    const std::uint64_t j = runs.line_of(made.at);
    const bool valid = set_values(io::schema::device_schema(), keys->device, made.at, made.devices[j], check) &&
                       set_values(io::schema::model_schema(), keys->model, made.at, made.models[j], check);
    if (!keys->model.empty()) {
      made.model_id = 0;
      for (const KeyAxis<ModelSpec>& m : keys->model) made.model_id = made.model_id * axes[m.axis].values.size() + made.at[m.axis];
      ++made.model_id;
    }
    return valid ? j : runs.lines();
  };
  Made start;
  for (const StructRows& b : *bases) {
    start.devices.push_back(b.device);
    start.models.push_back(b.model);
  }
  start.workers.resize(bases->size());
  std::vector<std::uint64_t> first(util::worker_count(), n);  // the first invalid combination each worker saw
  util::parallel_for(n, [&](unsigned w, std::uint64_t begin, std::uint64_t end) {
    Made mine = start;
    for (std::uint64_t i = begin; i < end; ++i) {
      const std::uint64_t j = set(mine, i, true);
      if (j == runs.lines()) {
        first[w] = i;
        return;
      }
      const StructRows::Worker& worker = mine.worker(*bases, j);
      if (worker.evaluable && !worker.evaluable(mine.devices[j], mine.models[j], mine.model_id)) {
        first[w] = i;
        return;
      }
    }
  }, util::kParallelGrain);
  if (const std::uint64_t bad = *std::min_element(first.begin(), first.end()); bad < n) {
    runs.run(bad);  // throws the loader's or the command's error
    throw UsageError(fmt::format("--sweep: combination {} was rejected here but not by the command (a bug)", bad + 1));
  }
  return io::RowSource{n, [bases, columns, set, &axes, start] {
                         return [bases, columns, set, &axes, made = start,
                                 prefix = SweptCells()](std::uint64_t i, Rows& rows) mutable {
                           const std::uint64_t j = set(made, i, false);  // every combination was checked above
                           sweep_cells(axes, made.at, prefix);
                           const std::size_t from = rows.size();
                           made.worker(*bases, j).rows(made.devices[j], made.models[j], made.model_id, prefix.cells,
                                                       rows);
                           if (!columns->identity[j]) {
                             remap(rows, from, prefix.cells.size(), columns->maps[j], columns->columns.size());
                           }
                         };
                       }};
}

}  // namespace

Verdict run_sweep(const Command& command, const std::vector<std::string>& args, const CommonOptions& common,
                  const std::vector<io::SweepAxis>& axes, const std::vector<io::Requirement>& reqs,
                  const io::Format& format, std::ostream& out) {
  const std::uint64_t n = unwrap(io::sweep_size(axes));
  const SweepRuns runs(command, args, common, axes);
  const auto run_one = [&](std::uint64_t i) {
    io::Report one = runs.run(i);
    if (one.tables.empty()) throw UsageError(fmt::format("--sweep: {} has no table to sweep", one.command));
    return one;
  };
  // Each command line run at its first combination, for its columns (that report stands for the combination
  // below: it runs once).
  std::vector<io::Report> firsts(runs.lines());
  util::parallel_for(runs.lines(), [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t j = begin; j < end; ++j) firsts[j] = run_one(runs.first_of_line(j));
  }, command.measures ? runs.lines() : kLineGrain);
  std::vector<std::vector<io::Column>> line_columns;
  for (const io::Report& f : firsts) line_columns.push_back(f.tables.front().columns);
  const io::Report& first = firsts.front();  // combination 0
  auto columns = std::make_shared<const SweepColumns>(sweep_columns(line_columns));
  io::Report head;
  head.command = first.command;
  head.title = fmt::format("sweep of {} over {} ({} combinations); the first: {}", first.command, axes_text(axes), n,
                           first.title);
  head.inputs = first.inputs;
  if (format.name == "json") {  // only JSON prints the inputs
    io::Node sweeps = io::Node::array();
    for (const io::SweepAxis& a : axes) sweeps.push_back({{"key", a.key}, {"values", a.values}});
    head.inputs["sweep"] = sweeps;
  }
  io::Table t{"sweep", {}, {}};
  for (const io::SweepAxis& a : axes) {
    t.columns.push_back({a.key, a.key, decimals_of(a.values), false, 1, sweep_counts(a.key)});
  }
  t.columns.insert(t.columns.end(), columns->columns.begin(), columns->columns.end());
  head.tables.push_back(std::move(t));
  // Its chart: the first swept key along x, the figure the command charts from its first table up y, a line per
  // value of that table's first column (the row's identity: a format, a cache type, a model).
  const io::Table& table = first.tables.front();
  for (const io::Chart& c : first.charts) {
    if (c.table != table.name || c.y.empty()) continue;
    const auto y = std::find_if(table.columns.begin(), table.columns.end(), [&](const io::Column& col) { return col.key == c.y; });
    if (y == table.columns.end()) continue;
    io::Chart swept{fmt::format("{} against {}", y->title, axes.front().key), "sweep", "line", axes.front().key, c.y};
    swept.color = table.columns.front().key;
    head.charts.push_back(std::move(swept));
    break;
  }
  need_charts(head, format);

  if (reqs.empty()) {
    if (std::optional<io::RowSource> direct = struct_rows(runs, columns, common, axes, n)) {
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
  std::vector<Rows> rows(keep ? n : 0);
  std::vector<std::vector<std::pair<std::uint64_t, Verdict>>> verdicts(util::worker_count());  // the non-empty ones
  std::atomic<std::uint64_t> first_error{n};
  std::vector<std::pair<std::uint64_t, std::exception_ptr>> errors(util::worker_count(), {n, nullptr});
  util::parallel_for(n, [&](unsigned w, std::uint64_t begin, std::uint64_t end) {
    std::vector<std::size_t> at;
    for (std::uint64_t i = begin; i < end && i < first_error.load(); ++i) {
      try {
        combination_indices(axes, i, at);
        const std::uint64_t j = runs.line_of(at);
        io::Report one = runs.first_of_line(j) == i ? std::move(firsts[j]) : run_one(i);
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
                             return [&, at = std::vector<std::size_t>(), prefix = SweptCells()](
                                        std::uint64_t i, Rows& made) mutable {
                               combination_indices(axes, i, at);
                               sweep_cells(axes, at, prefix);
                               const Rows rerun = keep ? Rows() : run_one(i).tables.front().rows;
                               const std::size_t from = made.size();
                               for (const auto& row : keep ? rows[i] : rerun) {
                                 std::vector<io::Cell>& r = made.emplace_back(prefix.cells);
                                 r.insert(r.end(), row.begin(), row.end());
                               }
                               const std::uint64_t j = runs.line_of(at);
                               if (!columns->identity[j]) {
                                 remap(made, from, prefix.cells.size(), columns->maps[j], columns->columns.size());
                               }
                             };
                           }};
  io::render_rows(head, kept, format, out);
  std::vector<std::pair<std::uint64_t, Verdict>> found;
  for (auto& each : verdicts) std::move(each.begin(), each.end(), std::back_inserter(found));
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Verdict all;
  for (const auto& [i, verdict] : found) {
    const std::string label = combination_label(axes, i);
    for (const std::string& f : verdict.failures) all.failures.push_back(fmt::format("[{}] {}", label, f));
    for (const std::string& e : verdict.errors) all.errors.push_back(fmt::format("[{}] {}", label, e));
  }
  return all;
}


}  // namespace edgeplan::cli
