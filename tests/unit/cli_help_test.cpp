// The command line's own conventions: bare `edgeplan` and `edgeplan help [COMMAND]` print help, and an option a
// command does not have is named with the nearest one it has.
#include <gtest/gtest.h>

#include <string>

#include "cli/command.hpp"
#include "cli_run.hpp"
#include "edgeplan/io/report.hpp"

namespace edgeplan {
namespace {

using testing_cli::CliRun;
using testing_cli::run_cli;

TEST(CliHelp, BareAndHelpPrintTheHelp) {
  const CliRun bare = run_cli({});
  EXPECT_EQ(bare.exit_code, 0);
  EXPECT_TRUE(bare.out.starts_with("edgeplan: capacity planner")) << bare.out;
  EXPECT_NE(bare.out.find("calibrate"), std::string::npos);
  EXPECT_EQ(bare.err, "");
  EXPECT_EQ(run_cli({"help"}).out, bare.out);
  const CliRun kv = run_cli({"help", "kv"});
  EXPECT_EQ(kv.exit_code, 0);
  EXPECT_EQ(kv.out, run_cli({"kv", "--help"}).out);
  EXPECT_NE(kv.out.find("--context"), std::string::npos);
}

// The man page holds every command's --help (it was the top-level help alone, 2 KB), in roff: '-' as \-, so an
// option copied from the page is ASCII.
TEST(CliHelp, ManPageHasEveryCommandsOptions) {
  const CliRun man = run_cli({"man"});
  EXPECT_EQ(man.exit_code, 0);
  EXPECT_TRUE(man.out.starts_with(".TH EDGEPLAN 1 ")) << man.out.substr(0, 80);
  const auto roff = [](std::string text) {
    for (std::size_t at = text.find('-'); at != std::string::npos; at = text.find('-', at + 2)) text.insert(at, "\\");
    return text;
  };
  for (const cli::Command& c : cli::commands()) {
    EXPECT_NE(man.out.find(".SS " + std::string(c.name) + "\n"), std::string::npos) << c.name;
  }
  const std::string kv_help = run_cli({"kv", "--help"}).out;
  EXPECT_NE(man.out.find(roff(kv_help)), std::string::npos);
  EXPECT_NE(man.out.find(roff("--kv-type TEXT=f16")), std::string::npos);
  EXPECT_GT(man.out.size(), 20000u);
}

TEST(CliHelp, HelpOfAnUnknownCommandSuggests) {
  const CliRun run = run_cli({"help", "kx"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "edgeplan: error: unknown command 'kx'; did you mean kv?\n");
}

TEST(CliHelp, UnknownOptionsSuggestTheNearest) {
  const CliRun device = run_cli({"kv", "--devcie", "phone8g", "--model", "ref-8b"});
  EXPECT_EQ(device.exit_code, 2);
  EXPECT_EQ(device.err, "edgeplan: error: kv has no option --devcie; did you mean --device?\n"
                        "Run 'edgeplan kv --help' for its options.\n");
  const CliRun context = run_cli({"kv", "--device", "phone8g", "--model", "ref-8b", "--contxt=8192"});
  EXPECT_EQ(context.err, "edgeplan: error: kv has no option --contxt; did you mean --context?\n"
                         "Run 'edgeplan kv --help' for its options.\n");
  const CliRun common = run_cli({"kv", "--device", "phone8g", "--model", "ref-8b", "--fromat", "json"});
  EXPECT_EQ(common.err, "edgeplan: error: kv has no option --fromat; did you mean --format?\n"
                        "Run 'edgeplan kv --help' for its options.\n");
  EXPECT_EQ(run_cli({"kv", "--device", "phone8g", "--model", "ref-8b", "--context=8192"}).exit_code, 0);
}

// One name per concept (issue 18): each old spelling is no option of any command, and is an error naming the new
// one; every row of the option table is taken by some command.
TEST(CliOptions, OldSpellingsNameTheirReplacement) {
  for (const cli::Renamed& r : cli::renamed_options()) {
    for (const cli::Command& c : cli::commands()) {
      cli::Options opts;
      (void)c.setup(opts);
      for (const cli::Binding& b : opts.bindings()) EXPECT_NE(b.row->name, r.old_name) << c.name;
    }
  }
  const CliRun fit = run_cli({"fit", "--device", "iphone-15-pro", "--min-context", "8192"});
  EXPECT_EQ(fit.exit_code, 2);
  EXPECT_EQ(fit.err, "edgeplan: error: fit --min-context is now --context\n");
  const CliRun route = run_cli({"route", "--device", "phone8g", "--decode-tok-s=13", "--cloud", "ref-public"});
  EXPECT_EQ(route.err, "edgeplan: error: route --decode-tok-s is now --decode-tok-per-s\n");
}

TEST(CliOptions, EveryRowIsTaken) {
  std::vector<bool> taken(cli::option_rows().size(), false);
  cli::CommonOptions common;
  const cli::Options every = cli::common_options(common);
  for (const cli::Binding& b : every.bindings()) taken[static_cast<std::size_t>(b.row->id)] = true;
  taken[static_cast<std::size_t>(cli::Opt::force)] = true;  // comes with every output option
  for (const cli::Command& c : cli::commands()) {
    cli::Options opts;
    (void)c.setup(opts);
    for (const cli::Binding& b : opts.bindings()) taken[static_cast<std::size_t>(b.row->id)] = true;
  }
  for (std::size_t i = 0; i < taken.size(); ++i) EXPECT_TRUE(taken[i]) << cli::option_rows()[i].name;
}

// Byte sizes take units; token counts k and M; both refuse other text with what they take.
TEST(CliOptions, UnitsOfBytesAndTokens) {
  EXPECT_EQ(run_cli({"bench", "--buffer", "8MiB"}).err,
            "edgeplan: error: --buffer: Value 8388608 not in range 16777216 to 1099511627776\n"
            "Run 'edgeplan --help' or 'edgeplan COMMAND --help' for usage.\n");
  EXPECT_NE(run_cli({"bench", "--buffer", "6Gib"}).err.find("optionally with a unit: kB, MB, GB, TB"), std::string::npos);
  const CliRun k = run_cli({"kv", "--device", "phone8g", "--model", "ref-8b", "--context", "8k", "--format", "json"});
  EXPECT_EQ(k.exit_code, 0) << k.err;
  EXPECT_NE(k.out.find("\"context_tokens\": 8192"), std::string::npos);
}

// --version names the release and the commit it was built from (cmake/Commit.cmake; "unknown" outside git).
TEST(CliHelp, VersionNamesTheCommit) {
  const CliRun v = run_cli({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  const std::string head = "edgeplan " + std::string(io::version()) + " (commit ";
  ASSERT_TRUE(v.out.starts_with(head)) << v.out;
  EXPECT_TRUE(v.out.ends_with(")\n")) << v.out;
  EXPECT_GT(v.out.size(), head.size() + 2) << "a commit between the parentheses";
}

}  // namespace
}  // namespace edgeplan
