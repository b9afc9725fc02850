// The command table (name, description, setup) and the options every command shares, with the checks every
// numeric option gets.
#include <algorithm>
#include <array>
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

}  // namespace

std::span<const Command> commands() { return kCommands; }

void add_common(CLI::App& app, CommonOptions& o) {
  app.add_option("--profiles", o.profile_dirs, "Directory of profiles searched before the built-in ones (repeatable)")
      ->type_name("DIR");
  app.add_option("--set", o.sets, "Override a profile value, e.g. device.bandwidth_gbps=120 (repeatable)")
      ->type_name("KEY=VALUE");
  app.add_option("--format", o.format, "Output format: " + io::format_names())->type_name("FMT")->capture_default_str();
  app.add_option("--sweep", o.sweeps, "Run once per value: KEY=V1,V2,... or KEY=START:STOP:STEP (repeatable: all combinations)")
      ->type_name("KEY=VALUES");
  app.add_option("--require", o.requirements, "Fail (exit 1) unless 'FIELD OP VALUE' holds, e.g. 'fits == true' (repeatable)")
      ->type_name("EXPR");
}

namespace {

// The largest value of each whole-number option that has no CLI::Range of its own, by name, and whether it is a
// count of tokens (which takes k and M: tokens_with_suffix). A name means the same thing in every subcommand.
struct WholeOption {
  std::string_view name;
  std::uint64_t max;
  bool tokens = false;
};
constexpr std::array<WholeOption, 8> kWholeOptions{{
    {"--context", kMaxContextTokens, true},      // tokens in the KV cache (core/kv.hpp)
    {"--min-context", kMaxContextTokens, true},
    {"--prompt", limits::kPromptTokens, true},   // tokens of one prefill
    {"--seq", limits::kPromptTokens, true},
    {"--rank", limits::kLoraRank},
    {"--mtp-layers", limits::kLayers},
    {"--threads", 4096},                         // as bench --threads
    {"--seed", std::numeric_limits<std::uint64_t>::max()},  // any seed
}};

// Token counts as people name context sizes: "8k" is 8,192 tokens, "1M" 1,048,576 (k = 1,024, as "a 128k
// context" is 131,072 tokens). Rewrites the text before the checks below read it.
std::string tokens_with_suffix(std::string& text) {
  if (text.empty()) return "";
  const char suffix = text.back();
  const std::uint64_t scale = suffix == 'k' || suffix == 'K' ? 1024 : suffix == 'M' ? 1024 * 1024 : 0;
  if (scale == 0) return "";
  std::uint64_t v = 0;
  const char* last = text.data() + text.size() - 1;
  const auto [end, ec] = std::from_chars(text.data(), last, v);
  if (end != last || ec != std::errc() || v > std::numeric_limits<std::uint64_t>::max() / scale) {
    return "expected a whole number of tokens, optionally with k (x 1,024) or M (x 1,048,576) (got " + text + ")";
  }
  text = std::to_string(v * scale);
  return "";
}

}  // namespace

// CLI11 reads "-1" into an unsigned option as a huge number, a value past 2^64 as 2^64 - 1, and "nan", "inf"
// or 1e300 into a double: every numeric option of every subcommand gets a check that refuses them before
// conversion. Whole numbers are bounded by kWholeOptions (an unlisted one, as profile numbers, by
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
    const auto known = std::find_if(kWholeOptions.begin(), kWholeOptions.end(),
                                    [o](const WholeOption& w) { return o->check_name(std::string(w.name)); });
    if (known != kWholeOptions.end() && known->tokens) {
      o->transform(CLI::Validator(tokens_with_suffix, "", "tokens"));
    }
    if (o->get_type_name() == "UINT") {
      const std::uint64_t max = known != kWholeOptions.end() ? known->max : static_cast<std::uint64_t>(io::kMaxMagnitude);
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

}  // namespace edgeplan::cli
