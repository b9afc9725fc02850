// Property tests over randomly generated valid devices and models (seeded, so every run checks the same
// cases): the planners' figures move the right way when one input grows, optimal placement is never
// slower than a fixed-priority chain, and no NaN or infinity reaches a rendered report.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli_run.hpp"
#include "edgeplan/core/decode.hpp"
#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/place.hpp"
#include "edgeplan/io/report.hpp"
#include "edgeplan/io/json.hpp"

namespace edgeplan {
namespace {

constexpr int kCases = 300;

class Gen {
 public:
  explicit Gen(std::uint64_t seed) : rng_(seed) {}
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  // Log-uniform: spreads cases evenly over orders of magnitude.
  double log_real(double lo, double hi) { return std::exp(real(std::log(lo), std::log(hi))); }
  std::uint32_t whole(std::uint32_t lo, std::uint32_t hi) {
    return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng_);
  }
  bool coin(double p) { return real(0, 1) < p; }

  // A valid device: memory above reserved, bandwidth and utilization in range, and compute units where
  // at least one runs each op kind when `all_ops` is set.
  DeviceSpec device() {
    DeviceSpec d;
    d.name = "random";
    d.memory_bytes = log_real(0.5, 64) * 1073741824.0;
    d.reserved_bytes = real(0, 0.5) * d.memory_bytes;
    d.bandwidth_bytes_per_s = log_real(5e9, 800e9);
    d.utilization = real(0.05, 1.0);
    d.per_token_overhead_s = coin(0.5) ? 0.0 : log_real(1e-5, 1e-2);
    for (UnitKind k : unit_kinds()) {
      if (k != UnitKind::cpu && coin(0.4)) continue;  // the CPU is always there and runs everything
      ComputeUnit u;
      u.bandwidth_bytes_per_s = d.bandwidth_bytes_per_s * real(0.1, 1.0);
      for (OpKind op : op_kinds()) {
        if (k == UnitKind::cpu || coin(0.6)) u.ops.push_back(op);
      }
      if (supports(u, OpKind::matmul)) {
        u.int8_ops_per_s = log_real(1e11, 1e14);
        u.fp16_flops_per_s = log_real(1e11, 1e14);
      }
      d.units[k] = u;
    }
    if (d.units.size() > 1) d.link = UnitLink{log_real(1e9, 100e9), coin(0.5) ? 0.0 : log_real(1e-6, 1e-4)};
    return d;
  }

  // A valid llama-style model: widths in multiples of 256 (as real models have), GQA heads, a vocabulary.
  ModelSpec model() {
    ModelSpec m;
    m.name = "random";
    m.head_dim = coin(0.5) ? 64 : 128;
    m.hidden = 256 * whole(2, 32);
    m.heads = m.hidden / m.head_dim;
    const std::array<std::uint32_t, 4> groups{1, 2, 4, 8};
    do m.kv_heads = m.heads / groups[whole(0, 3)];
    while (m.kv_heads == 0 || m.heads % m.kv_heads != 0);
    m.layers = whole(1, 64);
    m.ffn = 256 * whole(4, 96);
    m.vocab = 256 * whole(100, 600);
    m.tied_embeddings = coin(0.3);
    return m;
  }

 private:
  std::mt19937_64 rng_;
};

TEST(Property, MoreBandwidthNeverLowersDecodeRate) {
  Gen g(1);
  for (int i = 0; i < kCases; ++i) {
    DeviceSpec d = g.device();
    const DecodeInputs in{g.log_real(1e8, 2e10), g.coin(0.5) ? 0.0 : g.log_real(1e6, 4e9)};
    const double before = decode(d, in).tok_per_s;
    d.bandwidth_bytes_per_s *= g.real(1.0, 4.0);
    const double after = decode(d, in).tok_per_s;
    EXPECT_GE(after, before) << "case " << i;
    EXPECT_TRUE(std::isfinite(after) && after > 0) << "case " << i;
  }
}

TEST(Property, MoreMemoryNeverLowersMaxContext) {
  Gen g(2);
  for (int i = 0; i < kCases; ++i) {
    const ModelSpec m = g.model();
    const KvType& t = kv_types()[g.whole(0, static_cast<std::uint32_t>(kv_types().size() - 1))];
    const KvCacheSettings s{g.coin(0.5) ? 1u : 256u, 512};
    const double memory = g.log_real(0.5, 64) * 1073741824.0, reserved = g.real(0, 0.5) * memory;
    const double weights = g.log_real(1e8, 3e10);
    const std::uint64_t before = max_context(m, t, kv_budget_bytes(memory, reserved, weights), s);
    const std::uint64_t after = max_context(m, t, kv_budget_bytes(memory * g.real(1.0, 4.0), reserved, weights), s);
    EXPECT_GE(after, before) << "case " << i;
  }
}

// max_context is defined as the longest context whose cache fits: the cache at it fits, one token more does not.
// Checked on models with and without sliding-window layers, padded and not, over budgets from one token of
// cache to far beyond kMaxContextTokens.
TEST(Property, MaxContextIsTheLongestContextThatFits) {
  Gen g(7);
  for (int i = 0; i < kCases; ++i) {
    ModelSpec m = g.model();
    if (g.coin(0.3)) m.sliding_window = SlidingWindow{g.whole(128, 8192), g.whole(0, 6)};
    const KvType& t = kv_types()[g.whole(0, static_cast<std::uint32_t>(kv_types().size() - 1))];
    const KvCacheSettings s{g.coin(0.5) ? 1u : g.whole(1, 1024), 512};
    const double budget = kv_bytes_per_token(m, t) * g.log_real(0.5, 1e13);
    const std::uint64_t c = max_context(m, t, budget, s);
    EXPECT_LE(kv_cache_bytes(m, t, c, s), budget) << "case " << i;
    if (c < kMaxContextTokens) {
      EXPECT_GT(kv_cache_bytes(m, t, c + 1, s), budget) << "case " << i;
    }
  }
}

// Each list runs from the smallest format to the largest.
const std::vector<std::vector<const char*>> kFormatChains{
    {"Q2_K", "Q3_K_M", "Q4_K_S", "Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0", "F16", "F32"},
    {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "F16", "F32"},
};

TEST(Property, SmallerFormatNeverNeedsMoreMemory) {
  Gen g(3);
  for (int i = 0; i < kCases; ++i) {
    ModelSpec m = g.model();
    if (g.coin(0.3)) {  // a model known only by its parameter count
      m.params = *param_count(m);
      m.vocab.reset();
    }
    for (const auto& chain : kFormatChains) {
      double previous = 0;
      for (const char* name : chain) {
        const auto size = weight_size(m, *find_file_type(name));
        ASSERT_TRUE(size) << name;
        EXPECT_GE(size->bytes, previous) << "case " << i << ": " << name;
        previous = size->bytes;
      }
    }
    double previous = 0;
    for (const char* name : {"int4", "q4_0", "int8", "q8_0", "f16"}) {
      const double per_token = kv_bytes_per_token(m, *find_kv_type(name));
      EXPECT_GE(per_token, previous) << "case " << i << ": " << name;
      previous = per_token;
    }
  }
}

TEST(Property, OptimalPlacementNeverSlowerThanAnyChain) {
  Gen g(4);
  int compared = 0;
  for (int i = 0; i < kCases; ++i) {
    const DeviceSpec d = g.device();
    const ModelSpec m = g.model();
    const OpGraph layer = derive_layer(m, g.whole(1, 4096));
    const Op head = *derive_lm_head(m);
    const auto optimal = place(layer.ops, d, Policy::optimal);
    ASSERT_TRUE(optimal) << "case " << i << ": the CPU runs every op";
    const std::array<Op, 1> head_ops{head};
    for (Policy p : policies()) {
      if (p == Policy::optimal) continue;
      const auto chain = place(layer.ops, d, p);
      if (!chain) continue;  // the chain's units miss an op
      ++compared;
      EXPECT_LE(optimal->total_s, chain->total_s * (1 + 1e-12)) << "case " << i << ": " << to_string(p);
      const Entry entry{chain->ops.back().unit, lm_head_entry_bytes(m)};
      const auto chain_head = place(head_ops, d, p, entry);
      const auto optimal_head = place(head_ops, d, Policy::optimal, entry);
      ASSERT_TRUE(chain_head && optimal_head);
      EXPECT_LE(optimal_head->total_s, chain_head->total_s * (1 + 1e-12)) << "case " << i;
    }
    EXPECT_TRUE(std::isfinite(optimal->total_s) && optimal->total_s > 0) << "case " << i;
  }
  EXPECT_GT(compared, kCases);  // most cases have more than one chain that runs
}

// Every number in a JSON report is finite. (nlohmann writes NaN and infinity as null, which JSON also uses
// for "not applicable"; the table and CSV views below catch those, as fmt prints them as nan and inf.)
void expect_finite(const io::Json& j, const std::string& path, const std::string& args) {
  if (j.is_number_float()) {
    EXPECT_TRUE(std::isfinite(j.get<double>())) << path << " in: " << args;
  }
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) expect_finite(value, path + "." + key, args);
  }
  if (j.is_array()) {
    for (std::size_t k = 0; k < j.size(); ++k) expect_finite(j[k], path + "[" + std::to_string(k) + "]", args);
  }
}

using testing_cli::CliRun;
using testing_cli::run_cli;

const std::regex kNonFinite(R"(\b(nan|inf)\b)", std::regex::icase);

TEST(Property, NoNanOrInfinityReachesTheOutput) {
  Gen g(5);
  const std::vector<std::vector<std::string>> commands{
      {"kv", "--context", "4096"},
      {"decode", "--quant", "Q4_K_M,Q8_0,F16", "--context", "8192", "--spec", "alpha=0.8,gamma=4,cost=0.1"},
      {"stream", "--prefetch", "1,8"},
      {"lora", "--rank", "16"},
      {"spec", "--alpha", "0.7", "--gamma", "3", "--cost", "0.2"},
      {"place", "--graph", "ref-layer"},
  };
  int rendered = 0;
  for (int i = 0; i < 40; ++i) {
    const std::vector<std::string> sets{
        fmt::format("device.memory_gib={}", g.log_real(0.5, 64)),
        fmt::format("device.reserved_gib={}", g.real(0, 0.4)),
        fmt::format("device.bandwidth_gbps={}", g.log_real(1, 1000)),
        fmt::format("device.utilization={}", g.real(0.01, 1)),
        fmt::format("device.per_token_overhead_ms={}", g.coin(0.5) ? 0.0 : g.log_real(0.001, 50)),
        fmt::format("device.storage.read_gbps={}", g.log_real(0.05, 100)),
        fmt::format("device.storage.page_fault_us={}", g.log_real(1, 1000)),
        fmt::format("device.link.bandwidth_gbps={}", g.log_real(0.1, 100)),
        fmt::format("model.params={}", g.log_real(1e8, 7e10)),
        fmt::format("model.layers={}", g.whole(1, 128)),
        fmt::format("model.kv_heads={}", 1u << g.whole(0, 5)),
    };
    for (const auto& command : commands) {
      std::vector<std::string> args = command;
      for (const char* extra : {"--device", "phone8g", "--model", "ref-8b", "--format", "json"})
        args.emplace_back(extra);
      for (const std::string& s : sets) {
        args.emplace_back("--set");
        args.push_back(s);
      }
      std::string line;
      for (const std::string& a : args) line += a + " ";
      const CliRun json = run_cli(args);
      ASSERT_TRUE(json.exit_code == 0 || json.exit_code == 2) << line << "\n" << json.err;
      if (json.exit_code != 0) continue;
      ++rendered;
      expect_finite(io::Json::parse(json.out), "", line);
      for (const char* format : {"table", "csv"}) {
        args[args.size() - 2 * sets.size() - 1] = format;
        const CliRun text = run_cli(args);
        EXPECT_FALSE(std::regex_search(text.out, kNonFinite)) << line << "\n" << text.out;
      }
    }
  }
  EXPECT_GT(rendered, 150);
}

}  // namespace
}  // namespace edgeplan
