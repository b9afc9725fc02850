// The command table (name, description, setup), the option table (one row per option of any command) and its
// translation into CLI11 with the checks every numeric option gets: the only file that adds options to the parser.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "cli/app.hpp"
#include "edgeplan/core/limits.hpp"
#include "edgeplan/io/fields.hpp"
#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/io/text.hpp"
#include "edgeplan/util/text.hpp"

namespace edgeplan::cli {
namespace {

constexpr std::array kCommands{
    Command{"decode", "Decode speed: weight bytes per format, tokens/s, optional speculation", setup_decode,
            false, true},
    Command{"kv", "KV-cache budget and the longest context per cache type", setup_kv, false, true},
    Command{"place", "Operator placement of a prefill layer across NPU, GPU and CPU, fallbacks and transfers",
            setup_place, false, true},
    Command{"stream", "Weight loading from storage: preload, demand paging, prefetch, hot subsets, LLM in a flash",
            setup_stream},
    Command{"lora", "LoRA adapters: hot-swap time and memory versus merged copies", setup_lora},
    Command{"spec", "Speculative decoding / MTP: expected tokens, speedup, best draft length", setup_spec},
    Command{"route", "Device versus private and public cloud, per request or over a trace of traffic", setup_route,
            false, true},
    Command{"report", "One page for a device and model: fit, speed, context, load, adapters, fallbacks, routing",
            setup_report, false, true},
    Command{"check", "CI gate: requirements on device/model pairs from a plan file; exit 1 when any fails", setup_check},
    Command{"fit", "Which known models and formats run on a device within constraints, ranked, Pareto front", setup_fit,
            false, true},
    Command{"profiles", "List the device and model profiles and where each comes from", setup_profiles, false, false, false},
    Command{"models", "List the models in this machine's stores (Ollama, LM Studio, Hugging Face cache)", setup_models, false, false, false},
    Command{"inspect", "What a model file holds: architecture, parameters, bytes by tensor type, context, KV",
            setup_inspect, false, false, false},
    Command{"import", "Write the TOML model profile equivalent to a model file (GGUF or config.json)", setup_import,
            false, false, false},
    Command{"quant", "Weight quantization error (MAE, max, RMSE, cosine of W.x) and bytes per method", setup_quant},
    Command{"bench", "Measure this machine: memory read bandwidth, matmul GFLOPS, storage read rate", setup_bench, true},
    Command{"calibrate", "Fit a device's utilization, per-token overhead and prefill efficiency to llama-bench results",
            setup_calibrate, false, false, false},
};

}  // namespace

std::span<const Command> commands() { return kCommands; }

namespace {

// Every option of every command: one row per concept, one name for it in every command that takes it.
constexpr std::array kOptionRows{
    OptionRow{Opt::profiles, "--profiles", Kind::texts,
              "Directory of profiles searched before the built-in ones (repeatable)", 0, Complete::file},
    OptionRow{Opt::set, "--set", Kind::texts, "Override a profile value, e.g. device.bandwidth_gbps=120 (repeatable)"},
    OptionRow{Opt::format, "--format", Kind::text, "Output format", 0, Complete::format},
    OptionRow{Opt::sweep, "--sweep", Kind::texts,
              "Run once per value: KEY=V1,V2,... or KEY=START:STOP:STEP (repeatable: all combinations)"},
    OptionRow{Opt::require, "--require", Kind::texts,
              "Fail (exit 1) unless 'FIELD OP VALUE' holds, e.g. 'fits == true' (repeatable)"},
    OptionRow{Opt::device, "--device", Kind::text, "Device profile name or .toml path", 0, Complete::device},
    OptionRow{Opt::model, "--model", Kind::text,
              "Model: a profile name or .toml path; a GGUF file (by its content), its URL, or a config.json; or a "
              "model in a store: ollama:NAME[:TAG] (or NAME:TAG), lmstudio:PUBLISHER/REPO[/FILE|:QUANT], "
              "hf:ORG/REPO[/FILE|:QUANT][@REV] (`edgeplan models` lists them)", 0, Complete::model},
    OptionRow{Opt::models, "--models", Kind::text,
              "Models to consider, comma-separated: as --model takes them (profiles, model files and URLs, store names)", 0,
              Complete::model},
    OptionRow{Opt::quant, "--quant", Kind::text,
              "Weight format, e.g. Q4_K_M (default: a GGUF model's own format, else Q4_K_M)", 0, Complete::weight_format},
    OptionRow{Opt::kv_type, "--kv-type", Kind::text, "KV-cache type", 0, Complete::kv_type},
    OptionRow{Opt::cloud, "--cloud", Kind::text, "Cloud profiles, comma-separated", 0, Complete::cloud},
    OptionRow{Opt::requests, "--requests", Kind::text, "Requests: a requests profile, or a .csv / .jsonl file", 0,
              Complete::file},
    OptionRow{Opt::graph, "--graph", Kind::text, "Explicit layer graph: profile name (graphs/) or .toml path", 0,
              Complete::file},
    OptionRow{Opt::draft, "--draft", Kind::text, "Draft model, as --model takes it", 0, Complete::model},
    OptionRow{Opt::runtime, "--runtime", Kind::text,
              "Runtime and backend as measurements name them, e.g. 'llama.cpp Metal', 'MLC'"},
    OptionRow{Opt::runtime_class, "--class", Kind::text,
              "Runtime class to fit across the devices that name it (profiles/runtimes/NAME.toml)"},
    OptionRow{Opt::context, "--context", Kind::tokens, "Tokens in the KV cache (takes k and M: 8k, 1M)",
              kMaxContextTokens},
    OptionRow{Opt::prompt, "--prompt", Kind::tokens, "Prompt tokens of one prefill (takes k and M: 2k)",
              limits::kPromptTokens},
    OptionRow{Opt::rank, "--rank", Kind::whole, "LoRA adapter rank", limits::kLoraRank},
    OptionRow{Opt::targets, "--targets", Kind::text, "Adapted matrices per layer: q,k,v,o,gate,up,down"},
    OptionRow{Opt::adapter, "--adapter", Kind::text, "A LoRA adapter in GGUF", 0, Complete::file},
    OptionRow{Opt::dtype, "--dtype", Kind::text, "Type of the adapter and of the merged deltas (F16, F32, BF16, Q8_0, ...)"},
    OptionRow{Opt::spec, "--spec", Kind::text, "Speculative decoding / MTP: alpha=A,gamma=G,cost=C"},
    OptionRow{Opt::limit, "--limit", Kind::whole, "Rows to show, best first"},
    OptionRow{Opt::all, "--all", Kind::flag, "Show every row (overrides --limit)"},
    OptionRow{Opt::allow_beyond_trained, "--allow-beyond-trained", Kind::flag,
              "Keep models trained for less than --context, and count max context past the trained one"},
    OptionRow{Opt::ubatch, "--ubatch", Kind::tokens,
              "Micro-batch of llama.cpp's compute graph, tokens (-ub; default: the device's [kv_cache] ubatch_tokens, "
              "512)", limits::kPromptTokens},
    OptionRow{Opt::flash_attn, "--flash-attn", Kind::text,
              "Flash attention: auto (on, as llama.cpp resolves it on the CPU), on, off", 0, Complete::choices,
              "auto on off"},
    OptionRow{Opt::parallel, "--parallel", Kind::whole, "Sequences served at once (-np), each with its own cache of --context",
              256},
    OptionRow{Opt::no_mmap, "--no-mmap", Kind::flag,
              "Load the weights instead of mapping them: the repacked ones are not kept twice"},
    OptionRow{Opt::min_tok_per_s, "--min-tok-per-s", Kind::number, "Slowest acceptable decode rate, tok/s"},
    OptionRow{Opt::prefill_tok_per_s, "--prefill-tok-per-s", Kind::number, "Measured device prefill rate, tok/s"},
    OptionRow{Opt::decode_tok_per_s, "--decode-tok-per-s", Kind::number, "Measured device decode rate, tok/s"},
    OptionRow{Opt::cloud_ratio, "--cloud-ratio", Kind::number,
              "The cloud is much faster at this device / cloud time ratio"},
    OptionRow{Opt::escalate_after, "--escalate-after", Kind::number,
              "Also compare starting on the device and continuing in the cloud after S seconds"},
    OptionRow{Opt::alpha, "--alpha", Kind::text, "Acceptance rate per drafted token, or a scan START:STOP:STEP"},
    OptionRow{Opt::gamma, "--gamma", Kind::number, "Draft tokens per target step"},
    OptionRow{Opt::best_gamma, "--best-gamma", Kind::flag, "Find the draft length with the highest speedup"},
    OptionRow{Opt::cost, "--cost", Kind::number, "Draft step cost / target step cost"},
    OptionRow{Opt::mtp_layers, "--mtp-layers", Kind::whole,
              "MTP heads of one decoder layer each: cost = layers / the target's layers", limits::kLayers},
    OptionRow{Opt::policy, "--policy", Kind::text, "npu-first, gpu-first, cpu-only or optimal", 0, Complete::choices,
              "npu-first gpu-first cpu-only optimal"},
    OptionRow{Opt::emit_graph, "--emit-graph", Kind::flag, "Print the derived layer graph as a --graph file and stop"},
    OptionRow{Opt::prefetch, "--prefetch", Kind::text, "Comma-separated prefetch windows in pages, e.g. 1,8,32"},
    OptionRow{Opt::hot, "--hot", Kind::text,
              "Also evaluate sparse hot subsets: comma-separated fractions of the weights each token touches, e.g. "
              "0.3,0.5 (assumes an activation-sparsity predictor; default: the dense model only)"},
    OptionRow{Opt::file, "file", Kind::text, "The file the command reads", 0, Complete::file},
    OptionRow{Opt::trace, "--trace", Kind::text, "Simulate a trace over time: a .csv or .jsonl file with arrival_s", 0,
              Complete::file},
    OptionRow{Opt::trace_out, "--trace-out", Kind::output, "With --trace: write one CSV line per request to FILE", 0,
              Complete::file},
    OptionRow{Opt::skip_bad_lines, "--skip-bad-lines", Kind::flag,
              "With --trace: count and skip malformed lines instead of failing"},
    OptionRow{Opt::write_profile, "--write-profile", Kind::output, "Write a device profile to FILE", 0, Complete::file},
    OptionRow{Opt::force, "--force", Kind::flag, "Replace the FILE a command writes when it exists"},
    OptionRow{Opt::storage, "--storage", Kind::text, "Also time one sequential read of this file (at most 10 s of it)", 0, Complete::file},
    OptionRow{Opt::description, "--description", Kind::text, "Description line of the written profile"},
    OptionRow{Opt::buffer, "--buffer", Kind::bytes, "Memory read test: buffer size (takes units: 512MiB, 1GiB, 2GB)",
              std::uint64_t{1} << 40},
    OptionRow{Opt::threads, "--threads", Kind::whole, "Worker threads (default: all cores)", 4096},
    OptionRow{Opt::repeats, "--repeats", Kind::whole, "Passes per measurement, at most: each stops repeating after 2 s; the best is reported (a decoded token's: their mean)"},
    OptionRow{Opt::sizes, "--sizes", Kind::wholes, "Square matmul sizes N (N x N x N), comma-separated"},
    OptionRow{Opt::methods, "--methods", Kind::text, "Comma-separated quantization methods"},
    OptionRow{Opt::tensor, "--tensor", Kind::text, "Tensor name in a .gguf or .safetensors file holding more than one"},
    OptionRow{Opt::rows, "--rows", Kind::whole, "Synthetic matrix: rows (output channels)"},
    OptionRow{Opt::cols, "--cols", Kind::whole, "Synthetic matrix: columns (weights per row)"},
    OptionRow{Opt::seed, "--seed", Kind::whole, "Synthetic matrix and inputs: SplitMix64 seed",
              std::numeric_limits<std::uint64_t>::max()},
    OptionRow{Opt::std_dev, "--std", Kind::number, "Synthetic matrix: standard deviation of the weights"},
    OptionRow{Opt::inputs, "--inputs", Kind::whole, "Random input vectors x for the cosine similarity of W.x"},
    OptionRow{Opt::timing, "--timing", Kind::flag,
              "Also time each method and print GB/s of FP32 input (not deterministic)"},
};

// Old spellings (one name per concept since issue 18): each is an error naming its replacement.
constexpr std::array kRenamed{
    Renamed{"--min-context", "--context"},
    Renamed{"--seq", "--prompt"},
    Renamed{"--tokens", "--prompt"},
    Renamed{"--write", "--write-profile"},
    Renamed{"--prefill-tok-s", "--prefill-tok-per-s"},
    Renamed{"--decode-tok-s", "--decode-tok-per-s"},
    Renamed{"--buffer-mib", "--buffer (with a unit: 1GiB)"},
    Renamed{"--file", "the file argument (edgeplan quant FILE)"},
    Renamed{"--llama-bench", "the file argument (edgeplan calibrate --device D FILE)"},
};

constexpr bool rows_in_order() {
  for (std::size_t i = 0; i < kOptionRows.size(); ++i) {
    if (static_cast<std::size_t>(kOptionRows[i].id) != i) return false;
  }
  return true;
}
static_assert(rows_in_order(), "kOptionRows lists the rows in the order of enum Opt");

}  // namespace

std::span<const OptionRow> option_rows() { return kOptionRows; }
const OptionRow& option_row(Opt id) { return kOptionRows[static_cast<std::size_t>(id)]; }
std::span<const Renamed> renamed_options() { return kRenamed; }

namespace {
// The option row of `--key`, or none.
const OptionRow* option_named(std::string_view key) {
  const auto row = std::find_if(kOptionRows.begin(), kOptionRows.end(),
                                [key](const OptionRow& r) { return r.name.starts_with("--") && r.name.substr(2) == key; });
  return row == kOptionRows.end() ? nullptr : &*row;
}

// A token count or a byte size as people write it (8k, 2GiB), or none.
std::optional<std::uint64_t> parse_amount(Kind kind, std::string_view text) {
  return kind == Kind::tokens ? util::parse_tokens(text) : util::parse_bytes(text);
}
}  // namespace

bool sweep_counts(std::string_view key) {
  const auto dot = key.find('.');
  if (dot == std::string_view::npos) {
    const OptionRow* row = option_named(key);
    return row && (row->kind == Kind::whole || row->kind == Kind::tokens || row->kind == Kind::bytes);
  }
  const std::string_view below = key.substr(dot + 1);
  const auto counts = [below](const auto& schema) {
    const auto found = io::schema::find_key(schema, below);
    return found && (found->row->type == io::schema::Type::count || found->row->integral);
  };
  const std::string_view profile = key.substr(0, dot);
  if (profile == "device") return counts(io::schema::device_schema());
  if (profile == "model") return counts(io::schema::model_schema());
  if (profile == "cloud") return counts(io::schema::cloud_schema());
  return false;
}

std::string sweep_in_units(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) return std::string(text);
  const std::string_view key = text.substr(0, eq);
  const OptionRow* row = option_named(key);
  if (!row || (row->kind != Kind::tokens && row->kind != Kind::bytes)) return std::string(text);
  std::string out(text.substr(0, eq + 1));
  std::string_view rest = text.substr(eq + 1);
  while (true) {
    const auto cut = rest.find_first_of(",:");
    const std::string_view value = rest.substr(0, cut);
    const std::optional<std::uint64_t> v = parse_amount(row->kind, value);
    out += v ? std::to_string(*v) : std::string(value);
    if (cut == std::string_view::npos) return out;
    out += rest[cut];
    rest.remove_prefix(cut + 1);
  }
}

namespace {

// CLI11 reads "-1" into an unsigned option as a huge number, a value past 2^64 as 2^64 - 1, and "nan", "inf" or
// 1e300 into a double: every numeric option gets a check that refuses them before conversion. Whole numbers are
// bounded by their row (io::kMaxMagnitude when it sets none), other numbers like profile numbers.
// A file to write: an empty path would be taken for no file at all (`--trace-out ''` wrote nothing, silently).
const CLI::Validator& path_check() {
  static const CLI::Validator path(
      [](std::string& text) -> std::string { return text.empty() ? "an empty path: name the file to write" : ""; },
      "FILE");
  return path;
}

const CLI::Validator& finite_check() {
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
  return finite;
}

CLI::Validator whole_check(std::uint64_t max) {
  return CLI::Validator(
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
      "", "whole");
}

// Token counts and byte sizes as people write them, rewritten as whole numbers before the checks read them.
CLI::Validator with_suffix(Kind kind) {
  return CLI::Validator(
      [kind](std::string& text) -> std::string {
        if (text.empty() || std::isdigit(static_cast<unsigned char>(text.back()))) return "";
        const std::optional<std::uint64_t> v = parse_amount(kind, text);
        if (!v) {
          return kind == Kind::tokens
                     ? "expected a whole number of tokens, optionally with k (x 1,024) or M (x 1,048,576) (got " + text + ")"
                     : "expected a number of bytes, optionally with a unit: kB, MB, GB, TB (x 1,000^n) or KiB, MiB, "
                       "GiB, TiB (x 1,024^n) (got " + text + ")";
        }
        text = std::to_string(*v);
        return "";
      },
      "", kind == Kind::tokens ? "tokens" : "bytes");
}

std::string type_name(Kind kind) {
  switch (kind) {
    case Kind::tokens: return "TOKENS";
    case Kind::bytes: return "BYTES";
    case Kind::output: return "FILE";
    default: return "";
  }
}

// Adds one binding to `app`: the parser's option with the checks of its kind and of the command.
CLI::Option* add_binding(CLI::App& app, const Binding& b) {
  const OptionRow& row = *b.row;
  const std::string name(row.name);
  CLI::Option* o = std::visit(
      [&](auto* target) -> CLI::Option* {
        using T = std::remove_pointer_t<decltype(target)>;
        if constexpr (std::is_same_v<T, bool>) {
          return app.add_flag(name, *target, b.help);
        } else if constexpr (std::is_same_v<T, io::OutputPath>) {
          target->option = name;
          CLI::Option* out = app.add_option(name, target->path, b.help);
          app.add_flag("--force", target->force, "Replace " + name + " FILE when it exists");
          return out;
        } else {
          return app.add_option(name, *target, b.help);
        }
      },
      b.target);
  if (const std::string t = type_name(row.kind); !t.empty()) o->type_name(t);
  if (row.kind == Kind::wholes) o->delimiter(',');
  if (row.kind == Kind::tokens || row.kind == Kind::bytes) o->transform(with_suffix(row.kind));
  // The range checks say nothing in --help (CLI11 would print "TOKENS:UINT in [1 - 16777216]"); their errors
  // name the range.
  if (b.low) {
    if (row.kind == Kind::number) {
      o->check(CLI::Range(*b.low, *b.high).description(""));
    } else {
      o->check(CLI::Range(static_cast<std::uint64_t>(*b.low), static_cast<std::uint64_t>(*b.high)).description(""));
    }
  }
  if (b.positive) o->check(CLI::PositiveNumber.description(""));
  switch (row.kind) {
    case Kind::whole: case Kind::tokens: case Kind::bytes: case Kind::wholes:
      o->check(whole_check(row.max != 0 ? row.max : static_cast<std::uint64_t>(io::kMaxMagnitude)));
      break;
    case Kind::number: o->check(finite_check()); break;
    case Kind::output: o->check(path_check()); break;
    default: break;
  }
  if (b.required) o->required();
  if (b.show_default) o->capture_default_str();
  return o;
}

}  // namespace

void add_options(CLI::App& app, const Options& options) {
  std::vector<std::pair<Opt, CLI::Option*>> added;
  for (const Binding& b : options.bindings()) added.emplace_back(b.row->id, add_binding(app, b));
  const auto find = [&](Opt id) {
    const auto it = std::find_if(added.begin(), added.end(), [id](const auto& a) { return a.first == id; });
    if (it == added.end()) throw std::logic_error("an option excludes or needs one its command does not have");
    return it->second;
  };
  for (std::size_t i = 0; i < added.size(); ++i) {
    for (Opt other : options.bindings()[i].excludes) added[i].second->excludes(find(other));
    for (Opt other : options.bindings()[i].needs) added[i].second->needs(find(other));
  }
}

Options common_options(CommonOptions& o) {
  Options opts;
  opts.add(Opt::profiles, o.profile_dirs);
  opts.add(Opt::set, o.sets);
  opts.add(Opt::format, o.format, "Output format: " + io::format_names()).show_default();
  opts.add(Opt::sweep, o.sweeps);
  opts.add(Opt::require, o.requirements);
  return opts;
}

Runner add_command(CLI::App& app, const Command& command, CommonOptions& common) {
  add_options(app, common_options(common));
  Options opts;
  Runner runner = command.setup(opts);
  add_options(app, opts);
  return runner;
}

}  // namespace edgeplan::cli
