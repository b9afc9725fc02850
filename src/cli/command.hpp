// The subcommand table and what every subcommand shares: the profile search path, --set overrides,
// --format and --require. Each subcommand lives in its own cmd_*.cpp and is registered in registry.cpp; it declares
// its options by binding rows of the option table (cli/options.hpp), never through the parser library.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "edgeplan/core/device.hpp"
#include "edgeplan/core/formats.hpp"
#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/model.hpp"
#include "edgeplan/util/result.hpp"
#include "edgeplan/io/output_file.hpp"
#include "edgeplan/io/profiles.hpp"
#include "edgeplan/io/report.hpp"

namespace edgeplan::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRequirementFailed = 1;
inline constexpr int kExitUsage = 2;

// A usage or input error: printed as `edgeplan: error: ...`, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class T>
T unwrap(Result<T> r) {
  if (!r) throw UsageError(r.error().message);
  return std::move(r).value();
}

// The value of an option's lookup, or a usage error "OPTION: MESSAGE" followed by `more`.
template <class T>
T need(std::string_view option, Result<T> r, std::string_view more = "") {
  if (!r) throw UsageError(std::string(option) + ": " + r.error().message + std::string(more));
  return std::move(r).value();
}

// The help of --runtime in the commands that print a speed: which of the device's runtime classes to use.
inline std::string runtime_help() {
  return "Runtime the device runs the model under: one of its runtime classes, by name or runtime, e.g. "
         "'llama.cpp Metal' (default: the device's first; `edgeplan profiles` lists them)";
}

// Options every subcommand takes.
struct CommonOptions {
  std::vector<std::string> profile_dirs;  // --profiles
  std::vector<std::string> sets;          // --set
  std::string format = "table";           // --format
  std::vector<std::string> requirements;  // --require
  std::vector<std::string> sweeps;        // --sweep
};

// The options every command takes, bound to `o` (registry.cpp).
Options common_options(CommonOptions& o);

// What a subcommand runs with once the command line is parsed.
class Context {
 public:
  explicit Context(const CommonOptions& options);

  // Loads a profile by name or path, records it under inputs[kind] and returns it.
  // A device runs under one of its runtime classes (its `runtimes`, profiles/runtimes/): `runtime` names one by its
  // profile name or its runtime ("llama.cpp Metal", any case); "" takes the first. Its speed is then the class's
  // (core/runtime_class.hpp), recorded under inputs["runtime"]. A device without runtime classes keeps its own
  // figures, and takes only its own runtime; `runtime` naming the runtime a device was itself fitted to
  // ([provenance] runtime) gives its own figures too. A [storage] that names a storage class (profiles/storage/) and gives no
  // read rate takes the class's, with its range (core/stream.hpp, with_storage_class).
  DeviceSpec device(const std::string& name, io::Node& inputs, const std::string& runtime = "") const;
  ModelSpec model(const std::string& name, io::Node& inputs) const;
  // A model's profile text, however it was named: a store's model (io/model_store.hpp), a model file or URL (read
  // as the equivalent profile, whose origin is the file), or a profile by name or path; and the model it loads as.
  io::ProfileText model_text(const std::string& name) const;
  ModelSpec model(const io::ProfileText& text, io::Node& inputs) const;
  io::ProfileText find(const std::string& kind, const std::string& name) const;

  const io::SearchPath& search_path() const { return path_; }
  const std::vector<io::Override>& overrides() const { return overrides_; }
  // Whether --format draws charts (vega-lite, html): a command builds the tables only its charts draw when it does.
  bool charts() const { return charts_; }

 private:
  io::SearchPath path_;
  std::vector<io::Override> overrides_;
  bool charts_ = false;
};

using Rows = std::vector<std::vector<io::Cell>>;

// The rows of a command's first table computed straight from the profiles' structs, for sweeps over their
// numbers (device and model keys).
struct StructRows {
  DeviceSpec device;  // as the profiles and --set give them
  ModelSpec model;
  // What one thread of a sweep calls, one combination after another: it may keep what the command derives from
  // the model alone for the model it saw last. `model_id` names the model: 0 is `model` as loaded (what the
  // command derived from it once stands), and two calls with the same id have equal models.
  struct Worker {
    // Appends the rows for `device` and `model` (these profiles with other numbers), each starting with the
    // cells of `prefix` (the swept values).
    std::function<void(const DeviceSpec& device, const ModelSpec& model, std::uint64_t model_id,
                       const std::vector<io::Cell>& prefix, Rows& rows)>
        rows;
    // Whether `rows` can evaluate this combination; false when the command would fail on it (the sweep then runs
    // the command on the first such combination for its error). Not set: every combination the loader accepts.
    std::function<bool(const DeviceSpec& device, const ModelSpec& model, std::uint64_t model_id)> evaluable;
  };
  std::function<Worker()> worker;
};

// What a command derives from a model alone (weight sizes, ...), kept by a sweep's worker for the model it saw
// last (StructRows::Worker): `derive(model)` runs again only when the model's id changes.
template <class T>
class ModelCache {
 public:
  // `loaded`: what was derived from the loaded model (id 0).
  explicit ModelCache(std::shared_ptr<const T> loaded) : loaded_(std::move(loaded)) {}
  // What `derive` gives for `model`, whose id is `model_id`; nullptr when it failed.
  template <class Derive>
  const T* get(const ModelSpec& model, std::uint64_t model_id, Derive derive) {
    if (model_id == 0) return loaded_.get();
    if (model_id != id_) {
      id_ = model_id;
      last_ = derive(model);
    }
    return last_ ? &*last_ : nullptr;
  }

 private:
  std::shared_ptr<const T> loaded_;
  std::uint64_t id_ = 0;
  std::optional<T> last_;
};

// Appends a row holding `prefix`, with room for `cells` more: how row builders start a row (in the storage of a
// row a sweep's block has already written, where there is one: io::recycled_row).
inline std::vector<io::Cell>& start_row(Rows& rows, const std::vector<io::Cell>& prefix, std::size_t cells) {
  std::vector<io::Cell>& row = rows.emplace_back(io::recycled_row());
  row.reserve(prefix.size() + cells);
  row.insert(row.end(), prefix.begin(), prefix.end());
  return row;
}

// What runs a subcommand once its command line is parsed.
struct Runner {
  std::function<io::Report(const Context&)> run;
  // Set by commands whose first table depends on the profiles' numbers only through a DeviceSpec and a
  // ModelSpec (decode, kv, report): a sweep over those numbers then evaluates structs on all cores instead of
  // rerunning the command per combination (sweep.cpp, run_sweep). Its rows must equal those of `run`.
  std::function<StructRows(const Context&)> struct_rows;

  Runner() = default;
  template <class Run>
    requires std::is_invocable_r_v<io::Report, Run, const Context&>
  Runner(Run r) : run(std::move(r)) {}  // NOLINT: a lambda is a Runner
  Runner(std::function<io::Report(const Context&)> r, std::function<StructRows(const Context&)> rows)
      : run(std::move(r)), struct_rows(std::move(rows)) {}

  io::Report operator()(const Context& ctx) const { return run(ctx); }
};

struct Command {
  const char* name;
  const char* description;
  // Declares the subcommand's own options (rows of the option table bound to its fields) and returns what runs it.
  Runner (*setup)(Options& options);
  // The command measures this machine: a sweep runs its combinations one at a time, never side by side.
  bool measures = false;
  // The command's report carries charts (io::Chart), so --format vega-lite and html draw it; a sweep of it has one.
  bool charts = false;
  // Its figures follow the profiles' numbers and its options, so --sweep means something (not so a listing, or a
  // report of a file's contents): a sweep of a command without it is a usage error.
  bool sweeps = true;
};

std::span<const Command> commands();

// Per-subcommand setup functions (one cmd_*.cpp each).
Runner setup_decode(Options& options);
Runner setup_kv(Options& options);
Runner setup_place(Options& options);
Runner setup_profiles(Options& options);
Runner setup_models(Options& options);
Runner setup_inspect(Options& options);
Runner setup_import(Options& options);
Runner setup_stream(Options& options);
Runner setup_lora(Options& options);
Runner setup_spec(Options& options);
Runner setup_route(Options& options);
Runner setup_quant(Options& options);
Runner setup_bench(Options& options);
Runner setup_calibrate(Options& options);

// Looks up a weight format by name (--quant); a usage error suggests the nearest.
const FileType& need_format(const std::string& name);
// --quant as given, else the format of the GGUF file model m was read from (model.file_format), else `fallback`.
std::string quant_or_file_format(const std::string& quant, const ModelSpec& m, std::string_view fallback = "Q4_K_M");
// The note a report carries when format ft is not the format of the GGUF file m was read from: the figures
// re-quantize the file's shape, a what-if. Empty when m is not a GGUF file or ft is its format.
std::vector<std::string> requantize_note(const ModelSpec& m, const FileType& ft);
Runner setup_report(Options& options);
Runner setup_check(Options& options);
Runner setup_fit(Options& options);

// The cache of --kv-type: one type for K and V ("q8_0") or one each ("k=q8_0,v=q4_0"); a usage error
// suggests the nearest name, and says why llama.cpp refuses the cache for `model` when it does.
KvCacheType need_kv_type(const std::string& text, const ModelSpec& model);
// --kv-type's help: `what` the option decides, then every type (kv_types()) and the K/V form.
std::string kv_type_help(std::string_view what);

// llama.cpp's runtime settings (core/runtime.hpp) with its defaults: --ubatch (the device's [kv_cache]
// ubatch_tokens, 512 unless the profile says otherwise), --flash-attn auto|on|off, --parallel, --no-mmap.
struct RuntimeFlags {
  std::optional<std::uint32_t> ubatch;
  std::string flash_attn = "auto";
  std::uint32_t parallel = 1;
  bool no_mmap = false;
};
void add_runtime_options(Options& opts, RuntimeFlags& f);
// The options as core takes them.
RuntimeOptions runtime_options(const RuntimeFlags& f);
// The same, with --ubatch set on the device's cache settings.
RuntimeOptions runtime_options(const RuntimeFlags& f, DeviceSpec& device);
// A device with --ubatch set, for sweeps: `d` itself without one (no copy per combination), else `copy`, made d
// with it.
const DeviceSpec& with_ubatch(const RuntimeFlags& f, const DeviceSpec& d, DeviceSpec& copy);
// llama.cpp's buffers and settings as results (kv, report): compute_bytes, output_bytes, repack_bytes,
// runtime_bytes (what they add), flash_attn, parallel, ubatch (the device's micro-batch).
void runtime_results(const RuntimeBuffers& b, const RuntimeOptions& o, const DeviceSpec& device, io::Node& results);

// 19431 as "19,431", as the table view groups whole numbers.
std::string with_thousands(std::uint64_t v);
// The contexts a chart of memory or speed against context draws (kv, report): 1024 tokens doubling to the first
// at or past `reach`, at most 2^24.
std::vector<std::uint64_t> chart_contexts(std::uint64_t reach);
// A computed whole number, rounded, grouped the same way at any magnitude (past 2^64 too).
std::string rounded_with_thousands(double v);

// Parses a finite number; a usage error names `what` (an option) when the text is not one.
double parse_number(const std::string& text, const std::string& what);

// Speculation parameters checked for range (cmd_spec.cpp); a usage error names `what` ("--spec alpha").
double need_alpha(double v, const std::string& what);         // [0, 1]
std::uint32_t need_gamma(double v, const std::string& what);  // whole, 0 to kSpecMaxGamma
double need_cost(double v, const std::string& what);          // >= 0

// Parses "a,b,c" into its items, trimming blanks; a usage error names the option when an item is empty.
std::vector<std::string> split_list(const std::string& text, const std::string& option);

// The threads a command starts for --threads `asked` (0: one per hardware thread): never more than the machine
// has (`--threads 4096` on 2 cores drove the load average to 870). A larger request is capped, and `note` says so.
unsigned thread_count(unsigned asked, std::string& note);

// The files a command reads: the source of every profile recorded in `inputs`, and `paths` (options naming
// files); what an output file must not be.
std::vector<std::string> input_files(const io::Node& inputs, std::vector<std::string> paths);

// Runs the whole CLI: parses argv, runs the subcommand, prints, checks --require. Returns the exit code.
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace edgeplan::cli
