// Reading llama.cpp `llama-bench` results in its three machine formats: `-o json` (an array of objects),
// `-o jsonl` (one object per line) and `-o csv` (a header row of field names, then quoted values). Each test
// is a row with the fields edgeplan fits to: model_type ("llama 7B Q4_0", "qwen2 1.5B Q4_K - Medium"),
// model_size (bytes of the tensors), model_n_params, n_prompt, n_gen, n_depth (newer builds; 0 when absent),
// avg_ts and stddev_ts (tokens/s), and backends, type_k and type_v (the KV cache's types) when given. pp tests
// have n_gen = 0, tg tests n_prompt = 0. A published measurement (profiles/measurements/*.csv: llama-bench's columns
// and several of its own, docs/accuracy.md) also names its device, runtime, the file type it is costed as, and its
// public source; there model_size and model_n_params may be empty (not published).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/core/calibrate.hpp"
#include "edgeplan/core/formats.hpp"
#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

struct BenchRow {
  std::string where;              // "results.json: record 3", "results.csv:4", for messages
  std::string model_type;
  double model_size_bytes = 0;
  double model_n_params = 0;
  std::uint64_t n_prompt = 0;
  std::uint64_t n_gen = 0;
  std::uint64_t n_depth = 0;
  double avg_tok_per_s = 0;
  double stddev_tok_per_s = 0;
  std::string backends;           // llama.cpp's backends as llama-bench names them ("Metal,BLAS", "CPU", "CUDA");
                                  // empty when the results do not say (older builds)
  std::string type_k, type_v;     // the KV cache's K and V types ("f16", "q8_0"); empty when not given
  // A published measurement's own columns; empty in llama-bench's output:
  std::string device;             // the device it ran on: a device profile's name where one is shipped
  std::string runtime;            // "llama.cpp", "Ollama", "MLC", "ExecuTorch", ...
  std::string model;              // the model: a model profile's name where one is shipped
  const FileType* format = nullptr;  // the file type it is costed as (its `format`), else model_type's; may be null
  std::string source;             // the public URL it was published at
  std::optional<BenchTest> stated;  // its test column: decode (tg) or prefill (pp), whose token counts (n_gen,
                                    // n_prompt) may be unpublished (0)

  // Which fit the row feeds (bench_test_kind, `shaped` when its model's layers are known); a published tg figure
  // without its length decodes from an empty cache, a published pp figure without its prompt length is not fitted.
  [[nodiscard]] BenchTest kind(bool shaped) const;
  [[nodiscard]] std::string runtime_label() const;  // "llama.cpp Metal": the runtime (llama.cpp when not given)
                                                     // and its backends

  [[nodiscard]] std::string test() const;  // "pp512", "tg128", "pp512+tg128", with "@d4096" for a depth; "tg" or
                                           // "pp" for a published figure without its token counts
};

// The most results edgeplan reads from one llama-bench output (real runs hold tens).
constexpr std::size_t kMaxBenchRows = 100'000;

// Parses the text of a llama-bench output, row by row; `display` names the file in messages. More than
// max_rows results is an error.
Result<std::vector<BenchRow>> parse_llama_bench(std::string_view text, const std::string& display,
                                                std::size_t max_rows = kMaxBenchRows);

// The llama.cpp file type named at the end of a model_type: "llama 7B mostly Q4_0" -> Q4_0,
// "Q4_K - Medium" -> Q4_K_M, "all F32" -> F32. nullptr when it names none.
const FileType* model_type_format(std::string_view model_type);

}  // namespace edgeplan::io
