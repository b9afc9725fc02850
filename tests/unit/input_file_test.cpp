// Reading safety (io/input_file.hpp) and what the CLI does with hostile inputs: FIFOs, device files, links to
// them, files past their size limit, and text that is not UTF-8 or holds control characters on its way out.
#include "edgeplan/io/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "scratch_dir.hpp"
#include "edgeplan/io/gguf.hpp"
#include "edgeplan/io/tensors.hpp"

namespace edgeplan::io {
namespace {

namespace fs = std::filesystem;
using testing_cli::run_cli;

class InputFile : public testing::Test {
 protected:
  fs::path fifo(const std::string& name) {
    const fs::path p = dir_ / name;
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0);
    return p;
  }
  fs::path link_to(const std::string& name, const fs::path& target) {
    const fs::path p = dir_ / name;
    fs::create_symlink(target, p);
    return p;
  }
  fs::path file(const std::string& name, const std::string& content) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  testing_dir::ScratchDir dir_{"input"};
};

TEST_F(InputFile, RefusesWhatIsNotARegularFileWithoutOpeningIt) {
  EXPECT_EQ(regular_file_size(dir_ / "none").error().message, "no such file");
  EXPECT_EQ(regular_file_size(dir_).error().message, "not a regular file (a directory)");
  // open() on a FIFO with no writer blocks: the check must not open it.
  EXPECT_EQ(regular_file_size(fifo("f.gguf")).error().message, "not a regular file (a FIFO)");
  EXPECT_EQ(open_input(dir_ / "f.gguf").error().message, "not a regular file (a FIFO)");
  EXPECT_EQ(regular_file_size(link_to("zero.toml", "/dev/zero")).error().message,
            "not a regular file (a character device)");
  EXPECT_EQ(*regular_file_size(file("ok.toml", "abc")), 3u);
}

TEST_F(InputFile, ReadsWholeTextUpToItsLimit) {
  const fs::path p = file("p.toml", "0123456789");
  EXPECT_EQ(*read_input(p, 10, "a test file"), "0123456789");
  EXPECT_EQ(read_input(p, 9, "a test file").error().message, "10 bytes, more than the 9 bytes allowed for a test file");
  EXPECT_EQ(read_input(dir_ / "none", 9, "a test file").error().message, "no such file");
}

TEST_F(InputFile, EveryReaderRefusesDeviceFilesAndFifos) {
  const fs::path zero = link_to("zero.gguf", "/dev/zero");
  EXPECT_EQ(read_gguf_file(zero.string()).error().message,
            "cannot read GGUF file '" + zero.string() + "': not a regular file (a character device)");
  const fs::path f = fifo("t.npy");
  EXPECT_EQ(read_tensor_file(f.string(), "").error().message,
            "cannot read tensor file '" + f.string() + "': not a regular file (a FIFO)");
}

// Links to /dev/null (reading them ends at once, so the tests cannot hang without the fix) stand for /dev/zero.
TEST_F(InputFile, CliRefusesDeviceFilesForEveryKindOfInput) {
  const std::string null_toml = link_to("null.toml", "/dev/null").string();
  const std::string null_json = link_to("config.json", "/dev/null").string();
  const std::string null_csv = link_to("null.csv", "/dev/null").string();
  const std::string tail = "': not a regular file (a character device)\n";
  auto err = [&](const std::vector<std::string>& args) {
    const testing_cli::CliRun r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2);
    return r.err;
  };
  EXPECT_EQ(err({"kv", "--device", null_toml, "--model", "ref-8b"}),
            "edgeplan: error: cannot read device profile '" + null_toml + tail);
  EXPECT_EQ(err({"kv", "--device", "phone8g", "--model", null_json}),
            "edgeplan: error: cannot read model file '" + null_json + tail);
  EXPECT_EQ(err({"check", null_toml}), "edgeplan: error: cannot read plan profile '" + null_toml + tail);
  EXPECT_EQ(err({"calibrate", "--device", "phone8g", null_csv}),
            "edgeplan: error: cannot read llama-bench results '" + null_csv + tail);
  EXPECT_EQ(err({"route", "--device", "phone8g", "--prefill-tok-per-s", "180", "--decode-tok-per-s", "13", "--cloud",
                 "ref-private,ref-public", "--trace", null_csv}),
            "edgeplan: error: --trace " + null_csv + ": cannot read the file: not a regular file (a character device)\n");
}

TEST_F(InputFile, ProfileDirectoriesSkipFifosWithoutOpeningThem) {
  fs::create_directories(dir_ / "devices");
  const fs::path f = fifo("devices/fifo.toml");
  // Without the fix the CLI blocks in open() until this writer comes, then reads nothing; with it the writer
  // waits until the test opens the FIFO itself. Either way nothing hangs.
  std::thread writer([&] {
    const int fd = ::open(f.c_str(), O_WRONLY);
    if (fd >= 0) ::close(fd);
  });
  const testing_cli::CliRun listed = run_cli({"profiles", "--profiles", dir_.string()});
  const testing_cli::CliRun named = run_cli({"kv", "--profiles", dir_.string(), "--device", "fifo", "--model", "ref-8b"});
  const int fd = ::open(f.c_str(), O_RDONLY | O_NONBLOCK);
  writer.join();
  if (fd >= 0) ::close(fd);
  EXPECT_EQ(listed.exit_code, 0);
  EXPECT_EQ(listed.out.find("fifo"), std::string::npos) << listed.out;
  EXPECT_EQ(named.exit_code, 2);
  EXPECT_EQ(named.err, "edgeplan: error: cannot read device profile '" + f.string() + "': not a regular file (a FIFO)\n");
}

TEST_F(InputFile, JsonOutputReplacesBytesThatAreNotUtf8AndSaysSo) {
  const fs::path device = dir_ / "bad\xFF.toml";
  std::ofstream(device) << "memory_gib = 8.0\nreserved_gib = 0.8\nbandwidth_gbps = 68.0\nutilization = 0.85\n"
                           "per_token_overhead_ms = 0\n";
  const testing_cli::CliRun r = run_cli({"kv", "--device", device.string(), "--model", "ref-8b", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["inputs"]["device"]["name"], "bad\xEF\xBF\xBD");
  EXPECT_EQ(r.err, "edgeplan: warning: 2 strings in the JSON output are not valid UTF-8: its invalid bytes are written "
                   "as U+FFFD (first: 'bad\\xFF')\n");
}

TEST_F(InputFile, RequestNamesThatAreNotUtf8InJsonAndCsv) {
  const fs::path csv = file("r.csv", "name,privacy,input_tok,output_tok,slo_s\nchat\xFE\x1B[2J,public,100,50,5\n");
  const std::vector<std::string> route{"route", "--device", "phone8g", "--prefill-tok-per-s", "180", "--decode-tok-per-s", "13",
                                       "--cloud", "ref-private,ref-public", "--requests", csv.string()};
  std::vector<std::string> json = route;
  json.insert(json.end(), {"--format", "json"});
  const testing_cli::CliRun j = run_cli(json);
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_TRUE(nlohmann::json::accept(j.out));
  EXPECT_NE(j.err.find("edgeplan: warning: "), std::string::npos);
  for (const char* format : {"table", "csv", "md"}) {
    std::vector<std::string> args = route;
    args.insert(args.end(), {"--format", format});
    const testing_cli::CliRun t = run_cli(args);
    ASSERT_EQ(t.exit_code, 0) << t.err;
    EXPECT_EQ(t.out.find('\x1B'), std::string::npos) << format;
    EXPECT_NE(t.out.find("chat\\xFE\\x1B[2J"), std::string::npos) << format << t.out;
  }
}

TEST_F(InputFile, TableTitlesEscapeControlCharacters) {
  const fs::path device = file("evil\x1B[31m.toml", "memory_gib = 8.0\nreserved_gib = 0.8\nbandwidth_gbps = 68.0\n"
                                                     "utilization = 0.85\nper_token_overhead_ms = 0\n");
  const testing_cli::CliRun r = run_cli({"kv", "--device", device.string(), "--model", "ref-8b"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1B'), std::string::npos);
  EXPECT_NE(r.out.find("evil\\x1B[31m"), std::string::npos);
}

}  // namespace
}  // namespace edgeplan::io
