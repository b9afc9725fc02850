// The command line's own conventions: bare `edgeplan` and `edgeplan help [COMMAND]` print help, and an option a
// command does not have is named with the nearest one it has.
#include <gtest/gtest.h>

#include <string>

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
