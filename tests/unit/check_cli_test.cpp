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
        "[[check]]\ndevice = \"iphone-16-pro\"\nmodel = \"llama-3.2-1b\"\nrequire = [\"load_s < 5\", \"fits == true\"]\n"
        "[[check]]\ndevice = \"phone8g\"\nmodel = \"ref-8b\"\nrequire = [\"fits == true\"]\n");
  const CliRun run = run_cli({"check", (dir / "plan.toml").string()});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(count(run.out, "iphone-16-pro"), 2u) << run.out;  // both of its requirements have a row
  EXPECT_NE(run.out.find("load_s < 5    --     --"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("phone8g"), std::string::npos) << run.out;  // the checks after it still run
  EXPECT_NE(run.out.find("1 requirement(s) could not be evaluated"), std::string::npos) << run.out;
  EXPECT_EQ(run.err, "edgeplan: error: " + (dir / "plan.toml").string() +
                         ": check 1 (llama-3.2-1b on iphone-16-pro) not evaluable: --require 'load_s < 5': load_s has "
                         "no value for these inputs (`edgeplan report --device iphone-16-pro --model llama-3.2-1b` "
                         "shows why)\n");
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
  const CliRun run = run_cli({"route", "--device", "phone8g", "--prefill-tok-s", "180", "--decode-tok-s", "13",
                              "--cloud", "ref-private,ref-public", "--requests", "ref-requests", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const io::Json doc = io::Json::parse(run.out);
  EXPECT_EQ(doc["results"]["request_count"], 4);
  EXPECT_EQ(doc["results"]["requests"].size(), 4u);
}

TEST(Report, AFigureAndATableOfOneNameIsABug) {
  io::Report r;
  r.results["requests"] = 4;
  r.tables.push_back({"requests", {{"request", "request"}}, {{std::string("chat")}}});
  EXPECT_THROW(io::full_results(r), std::logic_error);
}

}  // namespace
}  // namespace edgeplan
