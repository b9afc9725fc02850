#include "edgeplan/io/llama_bench.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include "test_files.hpp"

namespace edgeplan::io {
namespace {

std::string fixture(const std::string& name) { return testing_files::source_file("tests/data/llama-bench/" + name); }

TEST(LlamaBench, TheThreeFormatsGiveTheSameRows) {
  for (const std::string ext : {"json", "jsonl", "csv"}) {
    auto rows = parse_llama_bench(fixture("m1-llama2-7b." + ext), "r." + ext);
    ASSERT_TRUE(rows.ok()) << rows.error().message;
    ASSERT_EQ(rows->size(), 4u) << ext;
    const BenchRow& tg = (*rows)[3];
    EXPECT_EQ(tg.model_type, "llama 7B Q4_0");
    EXPECT_DOUBLE_EQ(tg.model_size_bytes, 3825065984);
    EXPECT_DOUBLE_EQ(tg.model_n_params, 6738415616);
    EXPECT_EQ(tg.n_prompt, 0u);
    EXPECT_EQ(tg.n_gen, 128u);
    EXPECT_DOUBLE_EQ(tg.avg_tok_per_s, 14.15);
    EXPECT_DOUBLE_EQ(tg.stddev_tok_per_s, 0.05);
    EXPECT_EQ(tg.test(), "tg128");
    EXPECT_EQ((*rows)[0].test(), "pp512");
  }
  EXPECT_EQ((*parse_llama_bench(fixture("m1-llama2-7b.csv"), "r.csv"))[1].where, "r.csv:3");
  EXPECT_EQ((*parse_llama_bench(fixture("m1-llama2-7b.json"), "r.json"))[1].where, "r.json: record 2");
  EXPECT_EQ((*parse_llama_bench(fixture("m1-one-size.jsonl"), "r.jsonl"))[1].test(), "pp512+tg128");
}

TEST(LlamaBench, ModelTypeFormat) {
  EXPECT_EQ(model_type_format("llama 7B Q4_0")->name, "Q4_0");
  EXPECT_EQ(model_type_format("llama 7B mostly Q8_0")->name, "Q8_0");
  EXPECT_EQ(model_type_format("qwen2 1.5B Q4_K - Medium")->name, "Q4_K_M");
  EXPECT_EQ(model_type_format("llama 8B Q4_K - Small")->name, "Q4_K_S");
  EXPECT_EQ(model_type_format("llama 1B all F32")->name, "F32");
  EXPECT_EQ(model_type_format("llama 7B IQ2_XXS - 2.0625 bpw"), nullptr);
  EXPECT_EQ(model_type_format("llama"), nullptr);
}

TEST(LlamaBench, Errors) {
  auto error = [](const std::string& text) { return parse_llama_bench(text, "r").error().message; };
  EXPECT_EQ(error(" \n"), "r: no llama-bench results (the file is empty)");
  EXPECT_EQ(error("model_type,avg_ts\n"), "r: no llama-bench results (no test rows)");
  EXPECT_EQ(error("[{\"model_type\": \"llama 7B Q4_0\"}]"), "r: record 1: missing field model_size");
  EXPECT_EQ(error("[]"), "r: no llama-bench results (no test rows)");
  EXPECT_EQ(error("[1, 2"), "r: invalid JSON at byte 6");
  EXPECT_EQ(error("[1]"), "r: record 1: expected an object of llama-bench fields");
  EXPECT_EQ(error("{\"a\": 1}\n{\"a\": \n"), "r:2: invalid JSON at column 7");
  EXPECT_EQ(error("model_type,model_size\n\"a,b\",\"1\",\"2\"\n"), "r:2: 3 fields, but the header row has 2");
  EXPECT_EQ(error("model_type\n\"llama\n"), "r:2: unterminated quote");
  const std::string head = "model_type,model_size,model_n_params,avg_ts,n_prompt,n_gen\n";
  EXPECT_EQ(error(head + "\"llama 7B Q4_0\",\"1e9\",\"7e9\",\"fast\",\"0\",\"128\"\n"),
            "r:2: field avg_ts is not a number >= 0 ('fast')");
  EXPECT_EQ(error(head + "\"llama 7B Q4_0\",\"1e9\",\"7e9\",\"10\",\"0.5\",\"128\"\n"),
            "r:2: field n_prompt is not a whole number >= 0 ('0.5')");
  EXPECT_EQ(error(head + "\"llama 7B Q4_0\",\"1e9\",\"7e9\",\"0\",\"0\",\"128\"\n"), "r:2: avg_ts must be above 0");
  EXPECT_EQ(error(head + "\"llama 7B Q4_0\",\"1e9\",\"7e9\",\"10\",\"0\",\"0\"\n"), "r:2: n_prompt and n_gen are both 0");
}

// Rows are read one at a time and bounded: one more result than the bound is an error naming the row.
TEST(LlamaBench, RowCountIsBounded) {
  const std::string head = "model_type,model_size,model_n_params,avg_ts,n_prompt,n_gen\n";
  std::string text = head;
  for (int i = 0; i < 4; ++i) text += "llama 7B Q4_0,3825065984,6738415616,20.5,0,128\n";
  ASSERT_TRUE(parse_llama_bench(text, "r", 4).ok());
  EXPECT_EQ(parse_llama_bench(text + "llama 7B Q4_0,1,1,1,0,1\n", "r", 4).error().message,
            "r:6: more than 4 llama-bench results; edgeplan reads at most 4 (split the file)");
  EXPECT_EQ(kMaxBenchRows, 100'000u);
}

}  // namespace
}  // namespace edgeplan::io
