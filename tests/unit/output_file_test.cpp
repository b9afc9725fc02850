// OutputFile (io/output_file.hpp): no writer loses data. The path is refused when it is an input (links and ./
// too) or an existing file without --force; the old file stays whole until the new one is complete; write errors
// (a full disk: /dev/full) are errors; and the CLI checks its standard output too.
#include "edgeplan/io/output_file.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <streambuf>

#include "cli/command.hpp"
#include "cli_run.hpp"
#include "scratch_dir.hpp"
#include "test_files.hpp"

namespace edgeplan::io {
namespace {

namespace fs = std::filesystem;

using testing_files::read_file;

class OutputFileTest : public testing::Test {
 protected:
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path(name)) << text; }
  std::size_t files() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {})); }

  testing_dir::ScratchDir dir_{"output"};
};

TEST_F(OutputFileTest, RefusesAnInputThroughDotAndLinks) {
  write("in.csv", "old");
  fs::create_symlink("in.csv", path("link.csv"));
  const std::string dotted = (dir_ / "." / "in.csv").string();
  for (const std::string& out : {path("in.csv"), dotted, path("link.csv")}) {
    auto f = OutputFile::open({out, "--trace-out", true}, {path("in.csv")});
    ASSERT_FALSE(f.ok()) << out;
    EXPECT_EQ(f.error().message,
              "--trace-out " + out + ": this file is an input of the command (" + path("in.csv") + "); write to another file");
  }
  EXPECT_EQ(read_file(path("in.csv")), "old");
}

TEST_F(OutputFileTest, RefusesAnExistingFileWithoutForce) {
  write("out.csv", "old");
  auto f = OutputFile::open({path("out.csv"), "--write", false}, {});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message, "--write " + path("out.csv") + ": the file exists; pass --force to replace it");
  EXPECT_EQ(read_file(path("out.csv")), "old");
}

TEST_F(OutputFileTest, OldFileStaysWholeUntilCommit) {
  write("out.csv", "old");
  {
    auto f = OutputFile::open({path("out.csv"), "--write", true}, {});
    ASSERT_TRUE(f.ok()) << f.error().message;
    f->stream() << "new";
    EXPECT_EQ(read_file(path("out.csv")), "old");  // half-written or killed here: the old file is whole
    EXPECT_FALSE(f->commit().has_value());
  }
  EXPECT_EQ(read_file(path("out.csv")), "new");
  EXPECT_EQ(files(), 1u);  // no temporary file left
}

TEST_F(OutputFileTest, FailedRunLeavesNoFile) {
  {
    auto f = OutputFile::open({path("new.csv"), "--write", false}, {});
    ASSERT_TRUE(f.ok()) << f.error().message;
    f->stream() << "partial";
  }  // not committed: an error happened
  EXPECT_EQ(files(), 0u);
}

// Without --force, a file that appeared while the run wrote (another run's) is kept, not replaced: the last step
// refuses an existing name instead of checking first. Four concurrent runs all exited 0 before.
TEST_F(OutputFileTest, AFileThatAppearedMeanwhileIsKept) {
  {
    auto file = OutputFile::open({path("out.csv"), "--trace-out", false}, {});
    ASSERT_TRUE(file.ok()) << file.error().message;
    file->stream() << "mine";
    write("out.csv", "theirs");
    const std::optional<Error> e = file->commit();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->message, "--trace-out " + path("out.csv") +
                              ": the file was created while this run wrote it (by another run?); pass --force to replace it");
  }
  EXPECT_EQ(read_file(path("out.csv")), "theirs");
  EXPECT_EQ(files(), 1u);  // the failed run's temporary file is gone
}

// A legal name of 250 bytes is written: the temporary name stays within the 255-byte limit too.
TEST_F(OutputFileTest, ALongNameIsWritten) {
  const std::string name(246, 'n');
  ASSERT_FALSE(write_output({path(name + ".csv"), "--trace-out", false}, {}, "text"));
  EXPECT_EQ(read_file(path(name + ".csv")), "text");
  EXPECT_EQ(files(), 1u);
}

// A signal that ends the process while it writes leaves no temporary file: each catchable one, in a child.
TEST_F(OutputFileTest, ASignalLeavesNoTemporaryFile) {
  for (const int sig : {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGALRM, SIGUSR1, SIGUSR2, SIGVTALRM, SIGPROF, SIGXCPU}) {
    struct sigaction now {};
    ::sigaction(sig, nullptr, &now);
    if (now.sa_handler == SIG_IGN) continue;  // ignored by whoever started the tests: edgeplan leaves it so too
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      const rlimit no_core{0, 0};
      ::setrlimit(RLIMIT_CORE, &no_core);
      auto file = OutputFile::open({path("out.csv"), "--trace-out", true}, {});
      if (!file) ::_exit(3);
      file->stream() << "partial" << std::flush;
      ::raise(sig);
      ::_exit(4);  // not reached: the signal ends the child
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "signal " << sig << ", status " << status;
    EXPECT_EQ(files(), 0u) << "signal " << sig;
  }
}

TEST_F(OutputFileTest, WriteErrorsAreErrors) {
  auto f = OutputFile::open({"/dev/full", "--trace-out", false}, {});
  ASSERT_TRUE(f.ok()) << f.error().message;
  f->stream() << "data";
  const auto error = f->commit();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message, "--trace-out /dev/full: cannot write the file (No space left on device)");
}

TEST_F(OutputFileTest, RefusesAFolderAndAMissingFolder) {
  EXPECT_EQ(OutputFile::open({dir_.string(), "--write", true}, {}).error().message,
            "--write " + dir_.string() + ": is a folder, not a file");
  EXPECT_EQ(OutputFile::open({path("no/x.toml"), "--write", true}, {}).error().message,
            "--write " + path("no/x.toml") + ": cannot write the file (No such file or directory)");
}

TEST_F(OutputFileTest, RouteTraceOutIsNotTheTrace) {
  const std::string trace = std::string(EDGEPLAN_SOURCE_DIR) + "/tests/data/route-trace-small.csv";
  write("t.csv", read_file(trace));
  const std::vector<std::string> args{"route", "--device", "phone8g", "--prefill-tok-per-s", "180", "--decode-tok-per-s", "13",
                                      "--cloud", "ref-private,ref-public", "--trace", path("t.csv"),
                                      "--trace-out", path("t.csv"), "--force"};
  const auto run = testing_cli::run_cli(args);
  EXPECT_EQ(run.exit_code, cli::kExitUsage);
  EXPECT_EQ(run.err, "edgeplan: error: --trace-out " + path("t.csv") + ": this file is an input of the command (" +
                         path("t.csv") + "); write to another file\n");
  EXPECT_EQ(read_file(path("t.csv")), read_file(trace));
}

TEST_F(OutputFileTest, BenchRefusesItsStorageFileBeforeMeasuring) {
  write("model.gguf", "weights");
  const auto run = testing_cli::run_cli({"bench", "--storage", path("model.gguf"), "--write-profile", path("model.gguf"),
                                         "--force"});
  EXPECT_EQ(run.exit_code, cli::kExitUsage);
  EXPECT_EQ(run.err, "edgeplan: error: --write-profile " + path("model.gguf") + ": this file is an input of the command (" +
                         path("model.gguf") + "); write to another file\n");
  EXPECT_EQ(read_file(path("model.gguf")), "weights");
}

// A stream whose writes fail as on a full disk.
class FullBuf : public std::streambuf {
 protected:
  int_type overflow(int_type) override {
    errno = ENOSPC;
    return traits_type::eof();
  }
};

TEST(CliOutput, WriteErrorOnStandardOutputExits2) {
  FullBuf full;
  std::ostream out(&full);
  std::ostringstream err;
  const std::string gguf = std::string(EDGEPLAN_SOURCE_DIR) + "/tests/data/tiny-llama.gguf";
  const char* argv[] = {"edgeplan", "import", gguf.c_str()};
  EXPECT_EQ(cli::run(3, argv, out, err), cli::kExitUsage);
  EXPECT_EQ(err.str(), "edgeplan: error: cannot write the output (No space left on device)\n");
}

}  // namespace
}  // namespace edgeplan::io
