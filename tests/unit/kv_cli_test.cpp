// The KV cache types and the trained context end to end: --kv-type's forms and errors, the marks kv, report
// and check put on a context beyond the trained one, and fit leaving such pairs out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "scratch_dir.hpp"

namespace edgeplan {
namespace {

using testing_cli::CliRun;
using testing_cli::run_cli;

nlohmann::json results(const CliRun& run) { return nlohmann::json::parse(run.out)["results"]; }

// llama-3.2-1b: 16 layers x 8 kv heads x 64 = 512 values for K and 512 for V per layer per token.
TEST(KvCli, SeparateKAndVTypes) {
  const CliRun run = run_cli({"kv", "--device", "iphone-15-pro", "--model", "llama-3.2-1b", "--context", "4000",
                              "--kv-type", "k=q8_0,v=q4_0", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json r = results(run);
  EXPECT_EQ(nlohmann::json::parse(run.out)["inputs"]["kv_type"], "k=q8_0,v=q4_0");
  EXPECT_EQ(r["bytes_per_token"], 16 * 512 * (34 + 18) / 32);  // 13,312 B
  EXPECT_EQ(r["cache_bytes"], 4096 * 13312);                    // 4000 tokens pad to 4096 cells
  ASSERT_EQ(r["types"].size(), 12u);  // nine llama.cpp types, int8, int4, then the pair
  EXPECT_EQ(r["types"][0]["kv_type"], "f32");
  EXPECT_EQ(r["types"][10]["kv_type"], "int4");
  EXPECT_EQ(r["types"][10]["counted_as"], "reference");
  EXPECT_EQ(r["types"][11]["kv_type"], "k=q8_0,v=q4_0");
  const CliRun same = run_cli({"kv", "--device", "iphone-15-pro", "--model", "llama-3.2-1b", "--kv-type", "iq4_nl",
                               "--format", "json"});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(results(same)["bytes_per_token"], 16 * 1024 * 18 / 32);
  EXPECT_EQ(results(same)["types"].size(), 11u);
}

// lfm2-350m: 10 short-convolution layers of 1024 x (3 - 1) F32 values = 81,920 B of state per sequence, and 6
// attention layers x 8 kv heads x 64 x (K + V) x 2 B = 12,288 B of f16 KV per token; each of 2 sequences keeps
// both (llama.cpp's recurrent buffer has one row per sequence).
TEST(KvCli, StateBytesAreTheHybridsConstantStatePerSequence) {
  const CliRun run = run_cli({"kv", "--device", "iphone-15-pro", "--model", "lfm2-350m", "--context", "4096",
                              "--parallel", "2", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(results(run)["state_bytes"], 2 * 81920);
  EXPECT_EQ(results(run)["cache_bytes"], 2 * (4096 * 12288 + 81920));
  const CliRun dense = run_cli({"kv", "--device", "iphone-15-pro", "--model", "llama-3.2-1b", "--context", "4096",
                                "--format", "json"});
  ASSERT_EQ(dense.exit_code, 0) << dense.err;
  EXPECT_EQ(results(dense)["state_bytes"], 0);
}

TEST(KvCli, KvTypeErrors) {
  auto error = [](const std::string& kv_type, const std::string& model = "llama-3.2-1b") {
    const CliRun run = run_cli({"kv", "--device", "phone8g", "--model", model, "--kv-type", kv_type});
    EXPECT_EQ(run.exit_code, 2) << kv_type;
    return run.err;
  };
  EXPECT_EQ(error("k=q8_0"), "edgeplan: error: --kv-type k=q8_0: give both k=TYPE and v=TYPE\n");
  EXPECT_EQ(error("k=q8_0,k=f16"),
            "edgeplan: error: --kv-type: 'k=q8_0,k=f16' is not a type or k=TYPE,v=TYPE, e.g. k=q8_0,v=q4_0\n");
  EXPECT_EQ(error("x=q8_0,v=f16"),
            "edgeplan: error: --kv-type: 'x=q8_0,v=f16' is not a type or k=TYPE,v=TYPE, e.g. k=q8_0,v=q4_0\n");
  EXPECT_NE(error("k=q8_0,v=q5_2").find("--kv-type: unknown cache type 'q5_2'"), std::string::npos);
  EXPECT_EQ(error("k=q8_0,v=q4_0", "deepseek-v2-lite"),
            "edgeplan: error: --kv-type k=q8_0,v=q4_0: llama.cpp refuses it for deepseek-v2-lite: latent attention "
            "caches one vector per token: K and V take one type, not k=q8_0,v=q4_0\n");
}

// Llama-2-7B was trained for 4,096 tokens: 8,192 fits on a 64 GB machine but is marked.
TEST(KvCli, ContextBeyondTrainedIsMarked) {
  const CliRun kv = run_cli({"kv", "--device", "apple-m1-max-64g", "--model", "llama-2-7b", "--context", "8192",
                             "--format", "json"});
  ASSERT_EQ(kv.exit_code, 0) << kv.err;
  EXPECT_EQ(results(kv)["trained_context"], 4096);
  EXPECT_EQ(results(kv)["beyond_trained"], true);
  const CliRun table = run_cli({"kv", "--device", "apple-m1-max-64g", "--model", "llama-2-7b", "--context", "8192"});
  EXPECT_NE(table.out.find("context 8,192 is beyond the 4,096 tokens llama-2-7b was trained for"), std::string::npos)
      << table.out;
  const CliRun within = run_cli({"kv", "--device", "apple-m1-max-64g", "--model", "llama-2-7b", "--context", "4096",
                                 "--format", "json"});
  EXPECT_EQ(results(within)["beyond_trained"], false);

  const CliRun report = run_cli({"report", "--device", "apple-m1-max-64g", "--model", "llama-2-7b", "--context",
                                 "8192", "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(results(report)["beyond_trained"], true);
  EXPECT_NE(report.out.find("context 8192 is beyond it"), std::string::npos);

  const testing_dir::ScratchDir dir("kv_cli_check");
  std::ofstream(dir / "plan.toml") << "[[check]]\ndevice = \"apple-m1-max-64g\"\nmodel = \"llama-2-7b\"\n"
                                      "context = 8192\nrequire = [\"fits == true\"]\n";
  const CliRun check = run_cli({"check", (dir / "plan.toml").string()});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_NE(check.out.find("check 1 (llama-2-7b on apple-m1-max-64g): context 8192 is beyond the 4096 tokens the model "
                           "was trained for"), std::string::npos) << check.out;
}

// fit --context 65536 listed 4k models (Phi-3-mini-4k, Llama-2-7B) as fitting 65k tokens.
TEST(KvCli, FitLeavesOutModelsTrainedForLess) {
  const CliRun fit = run_cli({"fit", "--device", "apple-m1-max-64g", "--context", "65536", "--all", "--format", "json"});
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_EQ(fit.out.find("phi-3-mini-4k"), std::string::npos);
  EXPECT_EQ(fit.out.find("llama-2-7b"), std::string::npos);
  EXPECT_GT(results(fit)["beyond_trained"].get<int>(), 0);
  const CliRun short_context = run_cli({"fit", "--device", "apple-m1-max-64g", "--all", "--format", "json"});
  ASSERT_EQ(short_context.exit_code, 0) << short_context.err;
  int capped = 0;
  const nlohmann::json rows = results(short_context)["fits"];
  for (const auto& row : rows) {
    if (row["model"] != "qwen2.5-0.5b") continue;
    EXPECT_EQ(row["max_context"], 32768) << "capped at its trained context";
    ++capped;
  }
  EXPECT_GT(capped, 0);
  const CliRun all = run_cli({"fit", "--device", "apple-m1-max-64g", "--context", "65536",
                              "--allow-beyond-trained", "--all", "--format", "json"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("phi-3-mini-4k"), std::string::npos);
  EXPECT_EQ(results(all)["beyond_trained"], 0);
}

// Token counts take k (x 1,024) and M (x 1,048,576), as context sizes are named; on every token option and in
// sweeps over them.
TEST(KvCli, TokenCountsTakeKAndMSuffixes) {
  const CliRun plain = run_cli({"kv", "--device", "galaxy-s24-ultra", "--model", "llama-3.2-1b", "--context", "8192"});
  const CliRun k = run_cli({"kv", "--device", "galaxy-s24-ultra", "--model", "llama-3.2-1b", "--context", "8k"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(k.out, plain.out);
  EXPECT_EQ(k.exit_code, 0) << k.err;
  const CliRun m = run_cli({"kv", "--device", "galaxy-s24-ultra", "--model", "llama-3.2-1b", "--context", "1M",
                            "--format", "json"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(nlohmann::json::parse(m.out)["inputs"]["context_tokens"], 1048576);
  const CliRun fit = run_cli({"fit", "--device", "galaxy-s24-ultra", "--context", "32K", "--format", "json"});
  EXPECT_EQ(nlohmann::json::parse(fit.out)["inputs"]["min_context_tokens"], 32768);
  const CliRun sweep = run_cli({"kv", "--device", "galaxy-s24-ultra", "--model", "llama-3.2-1b", "--sweep",
                                "context=4k,8k", "--format", "csv"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("\n8192,"), std::string::npos) << sweep.out;
  for (const char* bad : {"8x", "k", "1.5k", "-8k", "99999999999999999999k"}) {
    const CliRun r = run_cli({"kv", "--device", "galaxy-s24-ultra", "--model", "llama-3.2-1b", "--context", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--context"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace edgeplan
