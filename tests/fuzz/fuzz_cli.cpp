// Fuzz harness: the whole CLI in-process (cli::run, as `edgeplan ARGS...` runs it), from fuzzed file bytes through
// the readers and the models to the table, JSON, CSV, Markdown, Vega-Lite and HTML output, so text that reaches the
// output is fuzzed too (html exits 2 in a build without EDGEPLAN_VEGA_DIR, and a command without charts exits 2
// under either drawing format). Input: byte 0 picks a scenario (what the file is and the commands that read it,
// kScenarios), byte 1 the output format (its low three bits, modulo the six formats) and one of the scenario's
// commands (the rest); the other bytes are the
// file, written under a directory made at start-up and removed at exit (a crash leaves it, with the one file). The scenario "options" passes them
// instead as command-line arguments, one per line. Output goes to string streams; nothing is written outside
// that directory (no scenario runs `bench`, and options that write files are dropped).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.hpp"
#include "edgeplan/io/embedded.hpp"

namespace {

namespace fs = std::filesystem;

// In a command, "@" stands for the path of the file and "%" for the directory (a --profiles folder).
using Args = std::vector<std::string>;

struct Scenario {
  const char* name;  // the prefix of its seeds in corpus/cli/
  const char* file;  // relative to the directory; empty for "options"
  std::vector<Args> commands;
};

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> kScenarios{
      {"device", "devices/fuzz.toml",
       {{"report", "--device", "@", "--model", "ref-8b"},
        {"decode", "--device", "@", "--model", "ref-8b", "--quant", "Q4_K_M,F16", "--spec", "alpha=0.7,gamma=4,cost=0.1"},
        {"kv", "--device", "@", "--model", "llama-3.2-1b", "--context", "8192"},
        {"place", "--device", "@", "--model", "ref-8b"},
        {"stream", "--device", "@", "--model", "ref-8b"},
        {"lora", "--device", "@", "--model", "ref-8b", "--rank", "16"},
        {"route", "--device", "@", "--model", "ref-8b", "--cloud", "ref-public", "--requests", "ref-requests"},
        {"profiles", "--profiles", "%"}}},
      {"model", "models/fuzz.toml",
       {{"report", "--device", "phone8g", "--model", "@"},
        {"decode", "--device", "phone8g", "--model", "@", "--quant", "Q4_K_M,Q8_0,F16"},
        {"kv", "--device", "phone8g", "--model", "@"},
        {"place", "--device", "phone8g", "--model", "@"},
        {"stream", "--device", "phone8g", "--model", "@"},
        {"lora", "--device", "phone8g", "--model", "@", "--rank", "8"},
        {"spec", "--device", "phone8g", "--model", "@", "--alpha", "0.7", "--best-gamma", "--mtp-layers", "1"},
        {"route", "--device", "phone8g", "--model", "@", "--cloud", "ref-public", "--requests", "ref-requests"},
        {"fit", "--device", "phone8g", "--profiles", "%"}}},
      {"gguf", "model.gguf",
       {{"inspect", "@"},
        {"import", "@"},
        {"report", "--device", "phone8g", "--model", "@"},
        {"decode", "--device", "phone8g", "--model", "@", "--quant", "Q4_K_M,F16"},
        {"spec", "--alpha", "0.6", "--gamma", "3", "--model", "ref-8b", "--draft", "@"}}},
      {"hf_config", "hf/config.json",
       {{"inspect", "@"},
        {"import", "@"},
        {"report", "--device", "phone8g", "--model", "@"},
        {"stream", "--device", "phone8g", "--model", "@"}}},
      {"plan", "plans/fuzz.toml", {{"check", "@"}}},
      {"requests_csv", "requests.csv",
       {{"route", "--device", "phone8g", "--model", "ref-8b", "--cloud", "ref-public,ref-private", "--requests", "@"},
        {"report", "--device", "phone8g", "--model", "ref-8b", "--requests", "@"}}},
      {"requests", "requests/fuzz.toml",
       {{"route", "--device", "phone8g", "--model", "ref-8b", "--cloud", "ref-public", "--requests", "@"},
        {"report", "--device", "phone8g", "--model", "ref-8b", "--requests", "@"}}},
      {"trace_csv", "trace.csv",
       {{"route", "--device", "phone8g", "--model", "ref-8b", "--cloud", "ref-public", "--trace", "@"},
        {"route", "--device", "phone8g", "--decode-tok-per-s", "20", "--prefill-tok-per-s", "200", "--cloud",
         "ref-public,ref-private", "--trace", "@", "--skip-bad-lines"}}},
      {"trace_jsonl", "trace.jsonl",
       {{"route", "--device", "phone8g", "--model", "ref-8b", "--cloud", "ref-public", "--trace", "@"},
        {"route", "--device", "phone8g", "--model", "ref-8b", "--cloud", "ref-private", "--trace", "@",
         "--skip-bad-lines"}}},
      {"llama_bench", "results.json",
       {{"calibrate", "--device", "phone8g", "@"},
        {"calibrate", "--device", "apple-m1-8g", "--model", "llama-2-7b", "@"}}},
      {"lora", "adapter.gguf",
       {{"lora", "--device", "phone8g", "--model", "ref-8b", "--adapter", "@"},
        {"lora", "--device", "phone8g", "--model", "llama-3.2-1b", "--adapter", "@", "--dtype", "Q8_0"}}},
      {"graph", "graphs/fuzz.toml",
       {{"place", "--device", "phone8g", "--graph", "@"},
        {"place", "--device", "phone8g", "--graph", "@", "--policy", "npu-first"},
        {"place", "--device", "phone8g", "--graph", "@", "--policy", "cpu-only"}}},
      {"cloud", "clouds/fuzz.toml",
       {{"route", "--device", "phone8g", "--model", "ref-8b", "--cloud", "@", "--requests", "ref-requests"},
        {"report", "--device", "phone8g", "--model", "ref-8b", "--cloud", "@"}}},
      {"npy", "w.npy", {{"quant", "@", "--inputs", "2"}}},
      {"safetensors", "w.safetensors",
       {{"quant", "@", "--inputs", "2"}, {"quant", "@", "--tensor", "attn.weight", "--inputs", "2"}}},
      {"tensor_gguf", "w.gguf",
       {{"quant", "@", "--inputs", "2"},
        {"quant", "@", "--tensor", "blk.0.attn_q.weight", "--inputs", "2", "--methods", "q8_0,q4_0"}}},
      {"options", "",
       {{"decode"}, {"kv"}, {"place"}, {"stream"}, {"lora"}, {"spec"}, {"route"}, {"report"}, {"fit"}, {"inspect"},
        {"import"}, {"quant"}, {"calibrate"}, {"check"}, {"profiles"}}},
  };
  return kScenarios;
}

constexpr const char* kFormats[] = {"table", "json", "csv", "md", "vega-lite", "html"};
constexpr std::size_t kFormatCount = sizeof(kFormats) / sizeof(kFormats[0]);
constexpr std::size_t kMaxArgs = 32;

// Options that write files: never run with them.
bool writes(std::string_view arg) {
  return arg.find("write") != std::string_view::npos || arg.find("trace-out") != std::string_view::npos;
}

fs::path& directory() {
  static fs::path dir;
  return dir;
}

void remove_directory() {
  std::error_code ignored;
  fs::remove_all(directory(), ignored);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  unsetenv("EDGEPLAN_PROFILE_PATH");  // the same profiles whoever runs it
  std::string dir = (fs::temp_directory_path() / "edgeplan-fuzz-XXXXXX").string();
  if (!mkdtemp(dir.data())) std::abort();
  directory() = dir;
  std::atexit(remove_directory);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const Scenario& scenario = scenarios()[data[0] % scenarios().size()];
  const Args& command = scenario.commands[(data[1] >> 3) % scenario.commands.size()];
  const std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);

  Args args;
  const fs::path file = directory() / (*scenario.file ? scenario.file : "unused");
  for (const std::string& a : command) args.push_back(a == "@" ? file.string() : a == "%" ? directory().string() : a);
  if (*scenario.file) {
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary).write(rest.data(), static_cast<std::streamsize>(rest.size()));
  } else {
    for (std::string_view r = rest; !r.empty() && args.size() < kMaxArgs;) {
      const auto newline = r.find('\n');
      const std::string_view arg = r.substr(0, newline);
      if (writes(arg)) return 0;
      args.emplace_back(arg);
      r.remove_prefix(newline == std::string_view::npos ? r.size() : newline + 1);
    }
  }
  const std::string_view format = kFormats[(data[1] & 7) % kFormatCount];
  args.insert(args.end(), {"--format", std::string(format)});

  std::vector<const char*> argv{"edgeplan"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = edgeplan::cli::run(static_cast<int>(argv.size()), argv.data(), out, err);
  // A build without the Vega scripts refuses html cleanly: exit 2, nothing printed (the fixed commands of the file
  // scenarios: fuzzed options may ask for --help instead).
  if (*scenario.file && format == "html" && edgeplan::io::embedded_scripts().empty() &&
      (code != 2 || !out.str().empty())) {
    std::abort();
  }
  if (*scenario.file) fs::remove(file);
  return 0;
}
