// Sweeps end to end: a sweep's rows are the rows one run per combination gives with the same values as --set
// (profile keys) or as the command's options (context, quant, device, ...),
// whether the command evaluates the combinations from structs (decode and kv over device numbers) or reruns
// per combination (everything else), and a bad value fails with the message that run would give.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/app.hpp"
#include "cli/command.hpp"
#include "cli_run.hpp"
#include "test_files.hpp"
#include "edgeplan/io/sweep.hpp"

namespace edgeplan {
namespace {

using testing_cli::CliRun;
using testing_cli::run_cli;

using testing_files::lines_of;

// Drops the first `n` comma-separated fields of a CSV line (the swept values; none of them holds a comma).
std::string without_fields(const std::string& line, std::size_t n) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < n; ++i) at = line.find(',', at) + 1;
  return line.substr(at);
}

void expect_sweep_equals_runs(const std::vector<std::string>& command, const std::vector<std::string>& sweeps) {
  std::vector<std::string> args = command;
  std::vector<io::SweepAxis> axes;
  for (const std::string& s : sweeps) {
    args.insert(args.end(), {"--sweep", s});
    axes.push_back(*io::parse_sweep(s));
  }
  args.insert(args.end(), {"--format", "csv"});
  const CliRun sweep = run_cli(args);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const std::vector<std::string> rows = lines_of(sweep.out);
  std::size_t next = 1;  // past the header
  for (std::uint64_t i = 0; i < *io::sweep_size(axes); ++i) {
    std::vector<std::string> one = command;
    const std::vector<std::string> values = io::sweep_combination(axes, i);
    for (std::size_t a = 0; a < axes.size(); ++a) {
      if (axes[a].key.find('.') == std::string::npos) {  // an option of the command
        one.insert(one.end(), {"--" + axes[a].key, values[a]});
      } else {
        one.insert(one.end(), {"--set", axes[a].key + "=" + values[a]});
      }
    }
    one.insert(one.end(), {"--format", "csv"});
    const CliRun run = run_cli(one);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::vector<std::string> expected = lines_of(run.out);
    for (std::size_t r = 1; r < expected.size(); ++r, ++next) {
      ASSERT_LT(next, rows.size());
      EXPECT_EQ(without_fields(rows[next], axes.size()), expected[r]) << "combination " << i;
    }
  }
  EXPECT_EQ(next, rows.size());
}

// A listing or a file's report has nothing to sweep: `profiles --sweep` ran the same listing once per value.
TEST(SweepCli, ACommandWithNothingToSweepRefusesASweep) {
  for (const char* command : {"profiles", "models"}) {
    const CliRun run = run_cli({command, "--sweep", "device.bandwidth_gbps=1,2"});
    EXPECT_EQ(run.exit_code, 2) << command;
    EXPECT_EQ(run.out, "") << command;
    EXPECT_TRUE(run.err.starts_with(std::string("edgeplan: error: --sweep: ") + command +
                                    " has no figure a sweep could vary; these commands take one: decode, kv,"))
        << run.err;
  }
}

// The title names every swept key and its values, not the first combination's pair alone.
TEST(SweepCli, TheTitleNamesTheSweptValues) {
  const CliRun run = run_cli({"decode", "--device", "phone8g,iphone-15-pro", "--model", "ref-8b", "--quant", "Q4_K_M",
                              "--sweep", "context=1k:8k:1k"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.out.starts_with("sweep of decode over device = phone8g, iphone-15-pro x context = 1024 ... 8192 (8 "
                                  "values) (16 combinations); the first: decode: ref-8b on phone8g\n"))
      << run.out.substr(0, 200);
}

TEST(SweepCli, DeviceNumbersOnDecodeEqualOneRunPerCombination) {
  expect_sweep_equals_runs({"decode", "--device", "phone8g", "--model", "ref-8b", "--quant", "Q4_K_M,Q8_0,F16",
                            "--context", "4096", "--spec", "alpha=0.75,gamma=4,cost=0.15"},
                           {"device.bandwidth_gbps=50:200:37.5", "device.memory_gib=5.5,8,16",
                            "device.per_token_overhead_ms=0,1.5"});
  expect_sweep_equals_runs({"decode", "--device", "apple-m2-max-64g", "--model", "llama-2-7b"},
                           {"device.utilization=0.3:1:0.35", "device.reserved_gib=0,1_0"});
}

TEST(SweepCli, DeviceNumbersOnKvEqualOneRunPerCombination) {
  expect_sweep_equals_runs({"kv", "--device", "phone8g", "--model", "ref-8b", "--context", "20000"},
                           {"device.memory_gib=6:12:1.5", "device.reserved_gib=0.5,0.8"});
  expect_sweep_equals_runs({"kv", "--device", "phone8g", "--model", "gemma-3-4b"}, {"device.memory_gib=4,8,12.25"});
}

// Model numbers are set on a ModelSpec per combination as device numbers are on a DeviceSpec, alone, mixed
// with device numbers and with options.
TEST(SweepCli, ModelNumbersEqualOneRunPerCombination) {
  expect_sweep_equals_runs({"kv", "--device", "phone8g", "--model", "ref-8b", "--context", "8192"},
                           {"model.layers=16:40:8", "model.kv_heads=4,8"});
  expect_sweep_equals_runs({"decode", "--device", "phone8g", "--model", "ref-8b", "--spec", "alpha=0.7,gamma=4,cost=0.1"},
                           {"model.hidden=2048,4096", "model.ffn=8192,14336", "device.bandwidth_gbps=40,80"});
  expect_sweep_equals_runs({"decode", "--device", "iphone-15-pro", "--model", "gemma-3-4b"},
                           {"quant=Q4_K_M,Q8_0", "model.layers=10,34", "device.memory_gib=4,8"});
  expect_sweep_equals_runs({"kv", "--device", "phone8g", "--model", "ref-8b"},
                           {"model.params=4e9,8e9", "context=2048,4096", "device.reserved_gib=0.5,1"});
}

// report's page per combination comes from PlanInputs -> PlanResult on the struct road.
TEST(SweepCli, ReportOverProfileNumbersEqualsOneRunPerCombination) {
  expect_sweep_equals_runs({"report", "--device", "phone8g", "--model", "ref-8b"},
                           {"device.bandwidth_gbps=30,60", "model.layers=24,32", "prompt=128,512"});
  expect_sweep_equals_runs({"report", "--device", "iphone-15-pro", "--model", "llama-3.1-8b", "--context", "8192"},
                           {"device.memory_gib=6,8", "model.kv_heads=4,8"});
  // Model keys before and after a device key: a worker's kept model figures serve only the same model.
  expect_sweep_equals_runs({"report", "--device", "phone8g", "--model", "ref-8b"},
                           {"model.layers=24,32", "device.bandwidth_gbps=30,60", "model.ffn=8192,14336"});
  expect_sweep_equals_runs({"kv", "--device", "phone8g", "--model", "ref-8b", "--context", "8192"},
                           {"model.layers=24,32", "device.memory_gib=6,8", "model.hidden=2048,4096"});
}

// What a worker derives from a model is derived again only when the model's id changes; id 0 is the loaded one.
TEST(SweepCli, ModelCacheDerivesOncePerModel) {
  cli::ModelCache<int> cache(std::make_shared<const int>(7));
  int derived = 0;
  const auto derive = [&](const ModelSpec& m) -> std::optional<int> {
    ++derived;
    return m.layers ? std::optional(static_cast<int>(m.layers)) : std::nullopt;
  };
  ModelSpec m;
  EXPECT_EQ(*cache.get(m, 0, derive), 7);
  m.layers = 24;
  EXPECT_EQ(*cache.get(m, 1, derive), 24);
  EXPECT_EQ(*cache.get(m, 1, derive), 24);
  EXPECT_EQ(derived, 1);
  m.layers = 0;
  EXPECT_EQ(cache.get(m, 2, derive), nullptr);  // a model the command cannot evaluate
  EXPECT_EQ(cache.get(m, 2, derive), nullptr);
  EXPECT_EQ(derived, 2);
  EXPECT_EQ(*cache.get(m, 0, derive), 7);
  EXPECT_EQ(derived, 2);
}

TEST(SweepCli, BadModelValueFailsAsTheRunWithThatValue) {
  for (const char* command : {"decode", "kv", "report"}) {
    for (const auto& [sweep, set] : std::vector<std::pair<std::string, std::string>>{
             {"model.kv_heads=8,3", "model.kv_heads=3"},
             {"model.layers=32,0", "model.layers=0"},
             {"model.hidden=4096,4096.5", "model.hidden=4096.5"}}) {
      const std::vector<std::string> base{command, "--device", "phone8g", "--model", "ref-8b"};
      std::vector<std::string> swept = base, one = base;
      swept.insert(swept.end(), {"--sweep", sweep});
      one.insert(one.end(), {"--set", set});
      const CliRun a = run_cli(swept), b = run_cli(one);
      EXPECT_EQ(a.exit_code, 2) << command << " " << sweep;
      EXPECT_EQ(a.out, "") << command << " " << sweep;
      EXPECT_EQ(a.err, b.err) << command << " " << sweep;
      EXPECT_NE(b.err, "") << command << " " << sweep;
    }
  }
}

// A sweep runs each combination once: the first combination of each command line, run for its columns, is
// not run again for its rows.
std::atomic<int> counted_runs{0};

cli::Runner counting_setup(cli::Options& opts) {
  auto n = std::make_shared<std::uint64_t>(1);
  opts.add(cli::Opt::limit, *n, "a number");
  return [n](const cli::Context&) {
    ++counted_runs;
    io::Report r;
    r.command = "count";
    r.tables.push_back(io::Table{"t", {{"n", "n"}}, {{static_cast<std::int64_t>(*n)}}});
    return r;
  };
}

TEST(SweepCli, EachCombinationRunsOnce) {
  const cli::Command count{"count", "counts its runs", counting_setup};
  const std::vector<io::SweepAxis> axes{*io::parse_sweep("limit=1,2"), *io::parse_sweep("device.bandwidth_gbps=1,2,3")};
  std::ostringstream out;
  counted_runs = 0;
  const cli::CommonOptions common;
  const cli::Verdict v = cli::run_sweep(count, {}, common, axes, {}, *io::find_format("csv"), out);
  EXPECT_TRUE(v.failures.empty());
  EXPECT_EQ(counted_runs.load(), 6);
  EXPECT_EQ(out.str(), "limit,device.bandwidth_gbps,n\n1,1,1\n1,2,1\n1,3,1\n2,1,2\n2,2,2\n2,3,2\n");
}

TEST(SweepCli, OtherKeysEqualOneRunPerCombination) {
  expect_sweep_equals_runs({"kv", "--device", "phone8g", "--model", "ref-8b"},
                           {"device.memory_gib=6,8", "model.kv_heads=4,8"});
  expect_sweep_equals_runs({"spec", "--alpha", "0.7", "--gamma", "4", "--cost", "0.1"}, {"device.bandwidth_gbps=60,90"});
}

TEST(SweepCli, BadValueFailsAsTheRunWithThatValue) {
  for (const auto& [sweep, set] : std::vector<std::pair<std::string, std::string>>{
           {"device.utilization=0.5,1.5", "device.utilization=1.5"},
           {"device.memory_gib=8,0.5", "device.memory_gib=0.5"},
           {"device.bandwidth_gbps=60,fast", "device.bandwidth_gbps=fast"},
           {"device.reserved_gib=1,inf", "device.reserved_gib=inf"},
           {"device.reserved_gib=1,1e400", "device.reserved_gib=1e400"}}) {
    const std::vector<std::string> command{"decode", "--device", "phone8g", "--model", "ref-8b"};
    std::vector<std::string> swept = command, one = command;
    swept.insert(swept.end(), {"--sweep", sweep});
    one.insert(one.end(), {"--set", set});
    const CliRun a = run_cli(swept), b = run_cli(one);
    EXPECT_EQ(a.exit_code, 2) << sweep;
    EXPECT_EQ(a.out, "") << sweep;
    EXPECT_EQ(a.err, b.err) << sweep;
  }
}

// A gate fails (exit 1) under a sweep exactly as without one: check's own requirements and --require alike.
TEST(SweepCli, GatesFailUnderASweep) {
  const std::string plan = EDGEPLAN_SOURCE_DIR "/tests/data/plans/fail.toml";
  const CliRun plain = run_cli({"check", plan});
  const CliRun swept = run_cli({"check", plan, "--sweep", "device.bandwidth_gbps=60,70"});
  EXPECT_EQ(plain.exit_code, 1);
  EXPECT_EQ(swept.exit_code, 1);
  EXPECT_NE(swept.err.find("edgeplan: [device.bandwidth_gbps=60] check 1 (ref-8b on phone8g) failed: fits == true"),
            std::string::npos)
      << swept.err;
  EXPECT_NE(swept.err.find("edgeplan: [device.bandwidth_gbps=70] check 1"), std::string::npos) << swept.err;
  const CliRun required = run_cli({"kv", "--device", "phone8g", "--model", "ref-8b", "--context", "30000", "--sweep",
                                   "device.memory_gib=8,12", "--require", "fits == true"});
  EXPECT_EQ(required.exit_code, 1) << required.err;
  EXPECT_NE(required.err.find("[device.memory_gib=8]"), std::string::npos) << required.err;
  EXPECT_EQ(required.err.find("[device.memory_gib=12]"), std::string::npos) << required.err;
}

// A sweep of more combinations than are kept in memory (8192) runs each again when its rows are written: the
// rows are those of a kept sweep, and an error still leaves no output.
TEST(SweepCli, LargeSweepsWriteTheRowsOfKeptOnes) {
  const std::vector<std::string> spec{"spec", "--alpha", "0.7", "--gamma", "4", "--cost", "0.1", "--format", "csv"};
  std::vector<std::string> kept = spec, rerun = spec;
  kept.insert(kept.end(), {"--sweep", "device.bandwidth_gbps=1:8000:1"});
  rerun.insert(rerun.end(), {"--sweep", "device.bandwidth_gbps=1:8200:1"});
  const std::vector<std::string> few = lines_of(run_cli(kept).out), many = lines_of(run_cli(rerun).out);
  ASSERT_EQ(few.size(), 8001u);
  ASSERT_EQ(many.size(), 8201u);
  EXPECT_TRUE(std::equal(few.begin(), few.end(), many.begin()));
  const CliRun bad = run_cli({"kv", "--device", "phone8g", "--model", "ref-8b", "--sweep", "model.kv_heads=1:8200:1"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out, "");
  EXPECT_NE(bad.err.find("kv_heads (3) must divide"), std::string::npos) << bad.err;
}

TEST(SweepCli, OptionsEqualOneRunPerCombination) {
  // Options alone, options with device numbers (structs per command line), options with model keys (reruns).
  expect_sweep_equals_runs({"kv", "--device", "phone8g", "--model", "ref-8b"}, {"context=2048,8192,32768"});
  expect_sweep_equals_runs({"kv", "--device", "phone8g", "--model", "ref-8b"},
                           {"quant=Q4_K_M,Q8_0", "device.bandwidth_gbps=50,70"});
  expect_sweep_equals_runs({"decode", "--device", "phone8g", "--model", "ref-8b"},
                           {"model.layers=16,32", "context=1024,4096", "quant=Q4_K_M,F16"});
  // A swept option given on the command line too: the sweep's values replace it.
  const std::vector<std::string> kv{"kv", "--device", "phone8g", "--model", "ref-8b", "--sweep", "context=2048,4096"};
  std::vector<std::string> also = kv;
  also.insert(also.end(), {"--context", "1"});
  EXPECT_EQ(run_cli(also).out, run_cli(kv).out);
  expect_sweep_equals_runs({"report", "--device", "phone8g", "--model", "ref-8b"}, {"prompt=128,512"});
}

TEST(SweepCli, TokenAndByteOptionsTakeTheirUnitsAndSweepAsNumbers) {
  // 8k is 8,192 tokens in a list and in a range: the rows, and the values JSON echoes, are the numbers.
  const std::vector<std::string> kv{"kv", "--device", "phone8g", "--model", "ref-8b", "--format", "json", "--sweep"};
  std::vector<std::string> units = kv, numbers = kv, range = kv;
  units.push_back("context=8k,32k");
  numbers.push_back("context=8192,32768");
  range.push_back("context=8k:32k:24k");
  const CliRun run = run_cli(units);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, run_cli(numbers).out);
  EXPECT_EQ(run.out, run_cli(range).out);
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["inputs"]["sweep"][0]["values"], nlohmann::json::array({"8192", "32768"}));
  const nlohmann::json& first = doc["results"]["sweep"][0];
  ASSERT_TRUE(first["context"].is_number_integer()) << first;
  EXPECT_EQ(first["context"], 8192);
  // A value that is not a token count still gets --context's own message.
  const std::vector<std::string> bad{"kv", "--device", "phone8g", "--model", "ref-8b", "--sweep", "context=8k,8q"};
  const CliRun wrong = run_cli(bad);
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("expected a whole number of tokens, optionally with k"), std::string::npos) << wrong.err;
}

TEST(SweepCli, ListsOfDevicesAndModelsAreSweeps) {
  const CliRun lists = run_cli({"decode", "--device", "phone8g,jetson-orin-nano-8g", "--model", "ref-8b,llama-3.1-8b",
                                "--quant", "Q4_K_M", "--format", "csv"});
  ASSERT_EQ(lists.exit_code, 0) << lists.err;
  const CliRun sweeps = run_cli({"decode", "--device", "x", "--model", "y", "--quant", "Q4_K_M", "--sweep",
                                 "device=phone8g,jetson-orin-nano-8g", "--sweep", "model=ref-8b,llama-3.1-8b", "--format",
                                 "csv"});
  ASSERT_EQ(sweeps.exit_code, 0) << sweeps.err;
  EXPECT_EQ(lists.out, sweeps.out);
  const std::vector<std::string> rows = lines_of(lists.out);
  ASSERT_EQ(rows.size(), 5u);
  // phone8g has no runtime class: its range cells are empty, under the columns the Jetson's rows (its MLC class)
  // fill.
  EXPECT_TRUE(rows[0].starts_with("device,model,format,")) << rows[0];
  EXPECT_NE(rows[0].find(",tok_per_s,tok_per_s_low,tok_per_s_high,"), std::string::npos) << rows[0];
  EXPECT_TRUE(rows[1].starts_with("phone8g,ref-8b,Q4_K_M,")) << rows[1];
  EXPECT_NE(rows[1].find(",,,1,"), std::string::npos) << rows[1];
  EXPECT_TRUE(rows[3].starts_with("jetson-orin-nano-8g,ref-8b,Q4_K_M,")) << rows[3];
  EXPECT_EQ(rows[3].find(",,"), std::string::npos) << rows[3];
}

TEST(SweepCli, AKeyThatIsNeitherAnOptionNorAProfileKeyIsNamed) {
  const CliRun run = run_cli({"kv", "--device", "phone8g", "--model", "ref-8b", "--sweep", "contxt=1,2"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "edgeplan: error: --sweep contxt: kv has no option --contxt to sweep, and a profile key is "
                     "PROFILE.KEY (device.bandwidth_gbps); did you mean context?\n");
  const CliRun bad = run_cli({"kv", "--device", "phone8g", "--model", "ref-8b", "--sweep", "quant=Q4_K_M,Q9"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out, "");
  EXPECT_EQ(bad.err, "edgeplan: error: --quant: unknown format 'Q9'; did you mean Q8_0?\n");
}

}  // namespace
}  // namespace edgeplan
