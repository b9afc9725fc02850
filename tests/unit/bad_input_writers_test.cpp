// Bad-input cases of the writers (io/output_file.hpp): an output path that is one of the inputs, an existing
// file without --force, and a write that fails (/dev/full, a full disk). Each leaves every file as it was.
#include <fstream>
#include <sstream>

#include "bad_input.hpp"
#include "test_files.hpp"

namespace edgeplan::bad_input {
namespace {

using testing_files::source_file;

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

const std::string kInput = ": this file is an input of the command ({file}); write to another file";

std::vector<BadCase> writers_cases() {
  const std::string trace = source_file("tests/data/route-trace-small.csv");
  const std::string results = source_file("tests/data/llama-bench/m1-llama2-7b.csv");
  std::vector<std::string> trace_elsewhere = kTrace;
  trace_elsewhere.back() = std::string(EDGEPLAN_SOURCE_DIR) + "/tests/data/route-trace-small.csv";
  return {
      {"trace-out-is-the-trace", "t.csv", trace, with(kTrace, {"--trace-out", "{file}", "--force"}),
       "--trace-out {file}" + kInput},
      {"trace-out-exists", "out.csv", "old", with(trace_elsewhere, {"--trace-out", "{file}"}),
       "--trace-out {file}: the file exists; pass --force to replace it"},
      {"trace-out-full", "t.csv", trace, with(kTrace, {"--trace-out", "/dev/full"}),
       "--trace-out /dev/full: cannot write the file (No space left on device)"},
      {"calibrate-write-is-results", "r.csv", results, with(kCalibrate, {"--write-profile", "{file}", "--force"}),
       "--write-profile {file}" + kInput},
      {"calibrate-write-full", "r.csv", results, with(kCalibrate, {"--write-profile", "/dev/full"}),
       "--write-profile /dev/full: cannot write the file (No space left on device)"},
      {"bench-write-is-storage", "model.gguf", "weights",
       {"bench", "--storage", "{file}", "--write-profile", "{file}", "--force"}, "--write-profile {file}" + kInput},
      {"bench-write-exists", "host.toml", "old", {"bench", "--write-profile", "{file}"},
       "--write-profile {file}: the file exists; pass --force to replace it"},
  };
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Writers, BadInput, testing::ValuesIn(writers_cases()), case_name);

}  // namespace edgeplan::bad_input
