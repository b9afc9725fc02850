// Where a file comes from and what a gate says, end to end: check's unevaluable figures, paths inside a plan,
// profiles that shadow built-in ones, and route's JSON results.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.hpp"
#include "scratch_dir.hpp"
#include "edgeplan/io/report.hpp"
#include "edgeplan/io/json.hpp"

namespace edgeplan {
namespace {

namespace fs = std::filesystem;
using testing_cli::CliRun;
using testing_cli::run_cli;
using testing_dir::ScratchDir;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(CheckCli, UnevaluableFigureReportsEveryCheckAndExits2) {
  const ScratchDir dir("check_unevaluable");
  write(dir / "plan.toml",
        "[[check]]\ndevice = \"iphone-16-pro\"\nmodel = \"llama-3.2-1b\"\nrequire = [\"spec_tok_per_s < 5\", \"fits == true\"]\n"
        "[[check]]\ndevice = \"phone8g\"\nmodel = \"ref-8b\"\nrequire = [\"fits == true\"]\n");
  const CliRun run = run_cli({"check", (dir / "plan.toml").string()});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(count(run.out, "iphone-16-pro"), 2u) << run.out;  // both of its requirements have a row
  EXPECT_NE(run.out.find("spec_tok_per_s < 5  --     --"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("phone8g"), std::string::npos) << run.out;  // the checks after it still run
  EXPECT_NE(run.out.find("1 requirement(s) could not be evaluated"), std::string::npos) << run.out;
  EXPECT_EQ(run.err, "edgeplan: error: " + (dir / "plan.toml").string() +
                         ": check 1 (llama-3.2-1b on iphone-16-pro) not evaluable: --require 'spec_tok_per_s < 5': "
                         "spec_tok_per_s has no value for these inputs (`edgeplan report --device iphone-16-pro --model llama-3.2-1b` "
                         "shows why)\n");
}

// A plan's requirements read llama.cpp's buffers from report's results, at check's runtime options: the
// compute buffer of Llama 3.2 1B at --ubatch 512 is 271,058,944 B (Plan.FitsCountTheRuntimeBuffers), half of that
// at --ubatch 256; on the chapter's phone ([runtime] buffers = "none") nothing.
TEST(CheckCli, RequirementsReadTheRuntimeBuffersAtCheckOptions) {
  const ScratchDir dir("check_runtime");
  write(dir / "plan.toml",
        "[[check]]\ndevice = \"galaxy-s24-ultra\"\nmodel = \"llama-3.2-1b\"\nquant = \"Q8_0\"\n"
        "require = [\"compute_bytes > 200000000\", \"parallel == 1\"]\n"
        "[[check]]\ndevice = \"phone8g\"\nmodel = \"ref-8b\"\nrequire = [\"runtime_bytes == 0\"]\n");
  EXPECT_EQ(run_cli({"check", (dir / "plan.toml").string()}).exit_code, 0);
  const CliRun small = run_cli({"check", (dir / "plan.toml").string(), "--ubatch", "256", "--parallel", "2"});
  EXPECT_EQ(small.exit_code, 1) << small.err;
  // 1,024 + 4 x 256 x (128,256 + 2 x 2048) = 135,529,472 B at --ubatch 256.
  EXPECT_NE(small.err.find("failed: compute_bytes > 200000000 (got 135529472)"), std::string::npos) << small.err;
  EXPECT_NE(small.err.find("failed: parallel == 1 (got 2)"), std::string::npos) << small.err;
  EXPECT_NE(small.out.find("2 requirement(s) failed"), std::string::npos) << small.out;  // phone8g's still holds
}

TEST(CheckCli, PlanPathsResolveBesideThePlan) {
  const ScratchDir dir("check_paths");
  write(dir / "ci" / "devices" / "mydev.toml",
        "memory_gib = 8.0\nreserved_gib = 0.8\nbandwidth_gbps = 68.0\nutilization = 0.85\nper_token_overhead_ms = 0\n");
  write(dir / "ci" / "plan.toml",
        "[[check]]\ndevice = \"devices/mydev.toml\"\nmodel = \"ref-8b\"\nrequire = [\"fits == true\"]\n");
  const CliRun run = run_cli({"check", (dir / "ci" / "plan.toml").string(), "--format", "json"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("\"device\": \"" + (dir / "ci" / "devices" / "mydev.toml").string() + "\""), std::string::npos)
      << run.out;
}

TEST(ProfilesCli, ShadowingABuiltinIsSaidOnce) {
  const ScratchDir dir("shadow");
  write(dir / "devices" / "phone8g.toml",
        "memory_gib = 12.0\nreserved_gib = 0.8\nbandwidth_gbps = 68.0\nutilization = 0.85\nper_token_overhead_ms = 0\n");
  const CliRun run = run_cli({"report", "--device", "phone8g", "--model", "ref-8b", "--profiles", dir.string()});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "edgeplan: warning: phone8g is read from " + (dir / "devices" / "phone8g.toml").string() +
                         ", which shadows builtin:devices/phone8g.toml\n");
  const CliRun builtin = run_cli({"report", "--device", "phone8g", "--model", "ref-8b"});
  EXPECT_EQ(builtin.err, "");
}

// A sweep reads its profiles on all cores: the warnings come out in text order, the same every run.
TEST(ProfilesCli, WarningsOfASweepAreInTextOrder) {
  const ScratchDir dir("shadow_sweep");
  const std::string device =
      "memory_gib = 12.0\nreserved_gib = 0.8\nbandwidth_gbps = 68.0\nutilization = 0.85\nper_token_overhead_ms = 0\n";
  write(dir / "devices" / "phone8g.toml", device);
  write(dir / "devices" / "galaxy-s24-ultra.toml", device);
  const std::string expected =
      "edgeplan: warning: galaxy-s24-ultra is read from " + (dir / "devices" / "galaxy-s24-ultra.toml").string() +
      ", which shadows builtin:devices/galaxy-s24-ultra.toml\n"
      "edgeplan: warning: phone8g is read from " + (dir / "devices" / "phone8g.toml").string() +
      ", which shadows builtin:devices/phone8g.toml\n";
  for (int run = 0; run < 3; ++run) {
    const CliRun sweep = run_cli({"decode", "--device", "phone8g,galaxy-s24-ultra", "--model", "ref-8b", "--sweep",
                                  "context=1:300:1", "--profiles", dir.string(), "--format", "csv"});
    EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
    EXPECT_EQ(sweep.err, expected);
  }
}

TEST(ProfilesCli, MissingProfilesDirectoryIsAnError) {
  const CliRun run = run_cli({"kv", "--device", "phone8g", "--model", "ref-8b", "--profiles", "/nonexistent/profiles"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "edgeplan: error: --profiles /nonexistent/profiles: no such directory\n");
  ::setenv("EDGEPLAN_PROFILE_PATH", "/nonexistent/env", 1);
  const CliRun env = run_cli({"kv", "--device", "phone8g", "--model", "ref-8b"});
  ::unsetenv("EDGEPLAN_PROFILE_PATH");
  EXPECT_EQ(env.exit_code, 0);
  EXPECT_EQ(env.err, "edgeplan: warning: EDGEPLAN_PROFILE_PATH: /nonexistent/env is not a directory; it is skipped\n");
}

TEST(RouteCli, JsonKeepsTheRequestCountBesideTheRequestsTable) {
  const CliRun run = run_cli({"route", "--device", "phone8g", "--prefill-tok-per-s", "180", "--decode-tok-per-s", "13",
                              "--cloud", "ref-private,ref-public", "--requests", "ref-requests", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const io::Json doc = io::Json::parse(run.out);
  EXPECT_EQ(doc["results"]["request_count"], 4);
  EXPECT_EQ(doc["results"]["requests"].size(), 4u);
}

// Per-cloud figures are rows keyed by `cloud`, not keys built from cloud names (ref-private_s, ref-public_s).
TEST(RouteCli, JsonPerCloudTimesAreRowsKeyedByCloud) {
  const CliRun run = run_cli({"route", "--device", "phone8g", "--prefill-tok-per-s", "180", "--decode-tok-per-s", "13",
                              "--cloud", "ref-private,ref-public", "--requests", "ref-requests", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const io::Json doc = io::Json::parse(run.out);
  for (const io::Json& row : doc["results"]["requests"]) {
    for (const auto& [key, value] : row.items()) EXPECT_EQ(key.find("ref-"), std::string::npos) << key;
  }
  const io::Json& times = doc["results"]["cloud_times"];
  ASSERT_EQ(times.size(), 8u);  // 4 requests x 2 clouds
  EXPECT_EQ(times[0]["request"], doc["results"]["requests"][0]["request"]);
  EXPECT_EQ(times[0]["cloud"], "ref-private");
  EXPECT_EQ(times[1]["cloud"], "ref-public");
}

// check's value column keeps the figure's JSON type (it was text: "true", "19431").
TEST(CheckCli, ValuesKeepTheirJsonTypes) {
  const CliRun run = run_cli({"check", EDGEPLAN_SOURCE_DIR "/tests/data/plans/pass.toml", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const io::Json checks = io::Json::parse(run.out)["results"]["checks"];
  EXPECT_EQ(checks[0]["requirement"], "fits == true");
  EXPECT_EQ(checks[0]["value"], true);
  EXPECT_TRUE(checks[1]["value"].is_number_float());
  EXPECT_EQ(checks[2]["requirement"], "max_context >= 8192");
  EXPECT_EQ(checks[2]["value"], 19431);
  EXPECT_TRUE(checks[2]["value"].is_number_integer());
}

// The most natural gate: decode of one format, a field of its one row.
TEST(DecodeCli, RequireReachesTheOneRow) {
  const std::vector<std::string> args{"decode", "--device", "phone8g", "--model", "ref-8b", "--quant", "Q4_K_M", "--require"};
  auto with = [&](const std::string& req) {
    std::vector<std::string> a = args;
    a.push_back(req);
    return run_cli(a);
  };
  EXPECT_EQ(with("tok_per_s >= 10").exit_code, 0);
  const CliRun fail = with("tok_per_s >= 12");
  EXPECT_EQ(fail.exit_code, 1);
  EXPECT_EQ(fail.err, "edgeplan: requirement failed: tok_per_s >= 12 (got tok_per_s = 11.149691358024691)\n");
  EXPECT_EQ(with("formats[Q4_K_M].tok_per_s >= 10").exit_code, 0);
}

// Counts of bytes, parameters and tokens are JSON integers, in the tables and the scalars (5184000000, not
// 5184000000.0), in every command; the JSON carries the tool's version beside the schema tag.
TEST(JsonOutput, CountsAreIntegersAndVersionIsThere) {
  const CliRun kv = run_cli({"kv", "--device", "phone8g", "--model", "ref-8b", "--context", "8192", "--format", "json"});
  ASSERT_EQ(kv.exit_code, 0) << kv.err;
  const io::Json doc = io::Json::parse(kv.out);
  EXPECT_EQ(doc["version"], std::string(io::version()));
  EXPECT_TRUE(doc["inputs"]["model"]["params"].is_number_integer());
  for (const char* key : {"weights_bytes", "budget_bytes", "bytes_per_token", "headroom_bytes", "max_context"}) {
    EXPECT_TRUE(doc["results"][key].is_number_integer()) << key;
  }
  EXPECT_EQ(doc["results"]["weights_bytes"], 5184000000);
  EXPECT_EQ(doc["results"]["budget_bytes"], 2546941133);  // 2546941132.8 bytes, rounded
  EXPECT_TRUE(doc["results"]["types"][0]["bytes_per_token"].is_number_integer());
  EXPECT_TRUE(doc["results"]["types"][0]["headroom_bytes"].is_number_integer());
  EXPECT_TRUE(doc["results"]["budget_gib"].is_number_float());
}

// A swept key whose values count whole things (an option of tokens, bytes or a whole number; a profile key whose
// schema row is a count or an integral number) is an integer column in JSON and CSV, on both roads of a sweep
// (profile numbers set on structs, and one run per combination under --require); any other swept number stays
// a number, and the table view shows the values as typed.
TEST(JsonOutput, SweptCountsAreIntegers) {
  for (const bool per_run : {false, true}) {
    std::vector<std::string> args{"kv", "--device", "phone8g", "--model", "ref-8b", "--sweep", "context=4096,8192",
                                  "--sweep", "model.layers=16,32", "--sweep", "device.bandwidth_gbps=68,120.5",
                                  "--format", "json"};
    if (per_run) args.insert(args.end(), {"--require", "max_context >= 0"});
    const CliRun kv = run_cli(args);
    ASSERT_EQ(kv.exit_code, 0) << kv.err;
    const io::Json rows = io::Json::parse(kv.out)["results"]["sweep"];
    ASSERT_EQ(rows.size(), 8u * 11u);
    for (const io::Json& row : rows) {
      EXPECT_TRUE(row["context"].is_number_integer()) << row;
      EXPECT_TRUE(row["model.layers"].is_number_integer()) << row;
      EXPECT_TRUE(row["device.bandwidth_gbps"].is_number_float()) << row;
    }
    EXPECT_EQ(rows.back()["context"], 8192);
    EXPECT_EQ(rows.back()["model.layers"], 32);
  }
  const CliRun decode = run_cli({"decode", "--device", "phone8g", "--model", "ref-8b", "--quant", "Q4_K_M", "--sweep",
                                 "prompt=256,512", "--sweep", "model.params=8e9", "--format", "json"});
  ASSERT_EQ(decode.exit_code, 0) << decode.err;
  const io::Json row = io::Json::parse(decode.out)["results"]["sweep"][1];
  EXPECT_EQ(row["prompt"], 512);
  EXPECT_TRUE(row["prompt"].is_number_integer());
  EXPECT_EQ(row["model.params"], 8000000000);
  EXPECT_TRUE(row["model.params"].is_number_integer());
  const CliRun csv = run_cli({"kv", "--device", "phone8g", "--model", "ref-8b", "--sweep", "model.params=8e9",
                              "--sweep", "device.memory_gib=8", "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find("\n8000000000,8,f32,"), std::string::npos) << csv.out;
}

TEST(Report, AFigureAndATableOfOneNameIsABug) {
  io::Report r;
  r.results["requests"] = 4;
  r.tables.push_back({"requests", {{"request", "request"}}, {{std::string("chat")}}});
  EXPECT_THROW(io::full_results(r), std::logic_error);
}

// A path is read as the name it holds or refused: a NUL inside a plan's path (mydev.toml\0x/y read mydev.toml before)
// and a loop of symbolic links are errors that say so, the path shown escaped.
TEST(CheckCli, APathWithANulOrALoopIsRefusedAsSuch) {
  const ScratchDir dir("plan_nul");
  fs::copy_file(fs::path(EDGEPLAN_SOURCE_DIR) / "profiles/devices/phone8g.toml", dir / "mydev.toml");
  std::ofstream(dir / "p.toml") << "[[check]]\ndevice = \"mydev.toml\\u0000x/y\"\nmodel = \"ref-8b\"\n"
                                   "require = [\"fits == true\"]\n";
  const CliRun run = run_cli({"check", (dir / "p.toml").string()});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "edgeplan: error: cannot read device profile '" + (dir / "mydev.toml").string() +
                         "\\x00x/y': a path cannot hold a NUL byte\n");
  fs::create_symlink("loop.toml", dir / "loop.toml");
  const CliRun loop = run_cli({"kv", "--device", (dir / "loop.toml").string(), "--model", "ref-8b"});
  EXPECT_EQ(loop.err, "edgeplan: error: cannot read device profile '" + (dir / "loop.toml").string() +
                          "': a loop of symbolic links\n");
}

}  // namespace
}  // namespace edgeplan
