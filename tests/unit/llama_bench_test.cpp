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

// A published measurement (profiles/measurements/*.csv): llama-bench's columns and its own; the test column says
// which figure it is, whose token counts and sizes may be unpublished (empty).
TEST(LlamaBench, PublishedMeasurements) {
  const std::string head =
      "device,runtime,backends,model,model_type,format,model_size,model_n_params,test,n_prompt,n_gen,avg_ts,source\n";
  auto rows = parse_llama_bench(head +
                                    "jetson-orin-nano-8g,MLC,CUDA,llama-3.1-8b,Llama 3.1 8B,Q4_0,,,tg,,,14,https://a\n"
                                    "apple-m2-24g,,Metal,llama-2-7b,llama 7B Q4_0,,3825065984,6738415616,pp,512,,179.57,"
                                    "https://b\n",
                                "m.csv");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  const BenchRow& mlc = (*rows)[0];
  EXPECT_EQ(mlc.device, "jetson-orin-nano-8g");
  EXPECT_EQ(mlc.model, "llama-3.1-8b");
  EXPECT_EQ(mlc.runtime_label(), "MLC CUDA");
  EXPECT_EQ(mlc.format->name, "Q4_0");  // its format column: the model_type names none
  EXPECT_EQ(mlc.stated, BenchTest::decode);
  EXPECT_EQ(mlc.n_gen, 0u);  // not published
  EXPECT_EQ(mlc.model_size_bytes, 0);
  EXPECT_EQ(mlc.test(), "tg");
  EXPECT_EQ(mlc.source, "https://a");
  const BenchRow& metal = (*rows)[1];
  EXPECT_EQ(metal.runtime_label(), "llama.cpp Metal");  // no runtime: llama.cpp, as llama-bench's own rows
  EXPECT_EQ(metal.format->name, "Q4_0");               // from the model_type
  EXPECT_EQ(metal.test(), "pp512");

  auto error = [&](const std::string& row) { return parse_llama_bench(head + row, "m.csv").error().message; };
  EXPECT_EQ(error("d,MLC,CUDA,m,x,Q4_0,,,decode,,,14,https://a\n"),
            "m.csv:2: test must be tg (decode) or pp (prefill), not 'decode'");
  EXPECT_EQ(error("d,MLC,CUDA,m,x,Q4_0,,,tg,512,,14,https://a\n"), "m.csv:2: a tg test has no n_prompt");
  EXPECT_EQ(error("d,MLC,CUDA,m,x,Q4_0,,,pp,,128,14,https://a\n"), "m.csv:2: a pp test has no n_gen");
  EXPECT_EQ(error("d,MLC,CUDA,m,x,Q4_K_MM,,,tg,,,14,https://a\n"),
            "m.csv:2: format: unknown file type 'Q4_K_MM'; did you mean Q4_K_M?");
  EXPECT_EQ(parse_llama_bench("a,b,a\n1,2,3\n", "m.csv").error().message, "m.csv:1: the header names column 'a' twice");
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
