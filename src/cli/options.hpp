// The option table: every option an edgeplan command takes is one row (name, kind of value, bound, help), so one
// concept has one name in every command. A command file binds rows to fields of its options struct (Options::add);
// registry.cpp turns the bindings into the parser, and the completions, --help and the rename errors of old
// spellings derive from the same rows. Command files see this header only, never the parser library.
//
// Adding an option: one enumerator in `Opt`, one row in kOptionRows (registry.cpp), and one `add` in each command
// that takes it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "edgeplan/io/output_file.hpp"

namespace edgeplan::cli {

// Every option of every command. Positional: `file`.
enum class Opt {
  // what every command takes
  profiles, set, format, sweep, require,
  // profiles and formats
  device, model, models, quant, kv_type, cloud, requests, graph, draft, runtime, runtime_class,
  // sizes of the work
  context, prompt, rank, targets, adapter, dtype, spec, limit, all, allow_beyond_trained,
  // llama.cpp's runtime settings
  ubatch, flash_attn, parallel, no_mmap,
  // rates and gates
  min_tok_per_s, prefill_tok_per_s, decode_tok_per_s, cloud_ratio, escalate_after,
  // speculation (spec)
  alpha, gamma, best_gamma, cost, mtp_layers,
  // placement and streaming
  policy, emit_graph, prefetch, hot,
  // files
  file, trace, trace_out, skip_bad_lines, write_profile, force, storage, description,
  // measurement (bench, quant)
  buffer, threads, repeats, sizes, methods, tensor, rows, cols, seed, std_dev, inputs, timing,
};

// What an option's value is, which decides how it is read and checked.
enum class Kind {
  text,    // any text (names, paths, comma lists read by the command)
  texts,   // repeatable text
  whole,   // a whole number of 0 or more, at most the row's max
  tokens,  // a whole number of tokens; takes k (x 1,024) and M (x 1,048,576): --context 8k
  bytes,   // a whole number of bytes; takes units: 512MiB, 6GiB, 2GB
  number,  // a finite number of at most io::kMaxMagnitude in magnitude
  wholes,  // a comma list of whole numbers
  flag,    // no value
  output,  // a file the command writes (io::OutputPath); comes with --force
};

// What a shell completes after an option: profile names of a kind, a model (a profile, a stored model or a file),
// files, output formats, weight formats (file_types), KV-cache types (kv_types), or the row's fixed choices.
enum class Complete { none, device, model, cloud, file, format, weight_format, kv_type, choices };

struct OptionRow {
  Opt id;
  std::string_view name;  // "--context"; a positional's name has no dashes: "file"
  Kind kind;
  std::string_view help;  // what the option means in every command (a command may say more)
  std::uint64_t max = 0;  // whole, tokens, bytes: the largest value (0: io::kMaxMagnitude)
  Complete complete = Complete::none;
  std::string_view choices = "";  // Complete::choices: the values, blank-separated
};

// The table, and the row of one option.
std::span<const OptionRow> option_rows();
const OptionRow& option_row(Opt id);

// An old spelling of an option and the name that replaced it; the old one is an error that names the new one.
struct Renamed {
  std::string_view old_name, new_name;
};
std::span<const Renamed> renamed_options();

// One option of one command: a row, the field it fills, and how this command uses it.
struct Binding {
  using Target = std::variant<std::string*, std::vector<std::string>*, std::uint64_t*, std::uint32_t*,
                              std::optional<std::uint32_t>*, double*, std::optional<double>*, bool*,
                              std::vector<std::uint64_t>*, io::OutputPath*>;
  const OptionRow* row = nullptr;
  Target target;
  std::string help;  // the row's help unless the command gives its own
  bool required = false, show_default = false, positive = false;
  std::optional<double> low, high;  // a range of this command's own, besides the row's bound
  std::vector<Opt> excludes, needs;
};

// The options a command declares: what its setup function fills.
class Options {
 public:
  // Binds row `id` to `target`. The help is the row's unless `help` is given.
  template <class T>
  Options& add(Opt id, T& target, std::string_view help = "") {
    Binding b;
    b.row = &option_row(id);
    b.target = &target;
    b.help = help.empty() ? std::string(b.row->help) : std::string(help);
    bindings_.push_back(std::move(b));
    return *this;
  }
  // What the last `add` may be given.
  Options& required() {
    last().required = true;
    return *this;
  }
  Options& show_default() {
    last().show_default = true;
    return *this;
  }
  Options& range(double low, double high) {
    last().low = low;
    last().high = high;
    return *this;
  }
  Options& positive() {  // greater than 0
    last().positive = true;
    return *this;
  }
  Options& excludes(Opt other) {
    last().excludes.push_back(other);
    return *this;
  }
  Options& needs(Opt other) {
    last().needs.push_back(other);
    return *this;
  }

  const std::vector<Binding>& bindings() const { return bindings_; }

 private:
  Binding& last() { return bindings_.back(); }
  std::vector<Binding> bindings_;
};

}  // namespace edgeplan::cli
