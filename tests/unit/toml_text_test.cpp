// TomlText and edit_toml (io/toml_text.hpp): TOML written through toml++ reads back as written, whatever the
// names hold; edits replace only the changed values, so a profile's comments and layout survive
// (`calibrate --write-profile`).
#include "edgeplan/io/toml_text.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/command.hpp"
#include "cli_run.hpp"
#include "edgeplan/core/place.hpp"
#include "edgeplan/io/graph.hpp"
#include "edgeplan/io/host.hpp"
#include "edgeplan/io/model_file.hpp"
#include "edgeplan/io/profiles.hpp"
#include "fixtures.hpp"
#include "test_files.hpp"
#include "edgeplan/io/json.hpp"

namespace edgeplan::io {
namespace {

namespace fs = std::filesystem;

const std::string kHostile = "a \"quoted\" \\ back\\slash\nnew line";

TEST(TomlText, KeysValuesAndCommentsStayOnTheirLines) {
  TomlText t;
  t.comment("from " + kHostile).set("name", kHostile).set("n", std::int64_t{3}, "a count").table({"formats", "Q 8"});
  t.set("x", 0.5);
  EXPECT_EQ(t.text(),
            "# from a \"quoted\" \\ back\\slash\\nnew line\n"
            "name = \"a \\\"quoted\\\" \\\\ back\\\\slash\\nnew line\"\n"
            "n = 3                       # a count\n"
            "\n[formats.\"Q 8\"]\n"
            "x = 0.5\n");
  const toml::table back = toml::parse(t.text());
  EXPECT_EQ(back["name"].value<std::string>(), kHostile);
  EXPECT_EQ(back["formats"]["Q 8"]["x"].value<double>(), 0.5);
}

TEST(TomlText, ImportedProfileWithHostileNamesLoadsBack) {
  ModelSpec m = fixtures::ref_8b();  // no vocabulary: params is written
  m.name = kHostile;
  m.params = 8030261248;
  m.formats["Q8_0"].bytes = 8.5e9;
  const std::string source = "dir \"x\\y\nz\"/config.json";
  const std::string text = model_profile_toml(m, source);
  auto loaded = load_model(ProfileText{"m", "m.toml", "test", text}, {});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message << "\n" << text;
  const toml::table back = toml::parse(text);
  EXPECT_EQ(back["source"].value<std::string>(), source);
  EXPECT_EQ(back["params"].value<std::int64_t>(), 8030261248);  // a count keeps every digit
  EXPECT_EQ(loaded->layers, 32u);
}

TEST(TomlText, EmittedGraphWithHostileOriginLoadsBack) {
  // place --emit-graph names the model in the graph's comment and description: a name holding a quote, a
  // backslash or a newline broke the file it wrote.
  const OpGraph g = derive_layer(fixtures::ref_8b(), 64);
  const std::string text = graph_toml(g, kHostile);
  auto back = load_graph(ProfileText{"g", "g.toml", "test", text}, {});
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << text;
  EXPECT_EQ(toml::parse(text)["description"].value<std::string>(), kHostile);
  ASSERT_EQ(back->ops.size(), g.ops.size());
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    EXPECT_EQ(back->ops[i].name, g.ops[i].name);
    EXPECT_EQ(back->ops[i].flops, g.ops[i].flops);  // every digit survives
    EXPECT_EQ(back->ops[i].bytes, g.ops[i].bytes);
  }
}

TEST(TomlText, BenchProfileWithHostileDescriptionLoadsBack) {
  HostProfile p;
  p.description = kHostile;
  p.memory = {16.0 * 1073741824, 12.0 * 1073741824};
  p.read_bytes_per_s = 21.5e9;
  p.comments = {"line one\nline two"};
  const std::string text = device_profile_toml(p);
  auto d = load_device(ProfileText{"host", "host.toml", "test", text}, {});
  ASSERT_TRUE(d.ok()) << d.error().message << "\n" << text;
  EXPECT_EQ(toml::parse(text)["description"].value<std::string>(), kHostile);
}

const std::string kProfile =
    "# A device, with its sources.\n"
    "memory_gib = 8.0       # spec sheet\n"
    "utilization = 0.85     # measured on a sunny day\n"
    "\n"
    "[prefill]\n"
    "tflops = 2.0           # datasheet\n"
    "efficiency = 0.5\n"
    "\n"
    "# the end\n";

TEST(EditToml, ReplacesOnlyTheValues) {
  const toml::value<double> u(0.712), e(0.25);
  auto out = edit_toml(kProfile, "d.toml", {{{"utilization"}, &u}, {{"prefill", "efficiency"}, &e}});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out,
            "# A device, with its sources.\n"
            "memory_gib = 8.0       # spec sheet\n"
            "utilization = 0.712     # measured on a sunny day\n"
            "\n"
            "[prefill]\n"
            "tflops = 2.0           # datasheet\n"
            "efficiency = 0.25\n"
            "\n"
            "# the end\n");
}

TEST(EditToml, AddsAMissingKeyAfterItsTable) {
  const toml::value<double> q(0.3), r(1.5);
  auto out = edit_toml(kProfile, "d.toml", {{{"prefill", "quantized_efficiency"}, &q}, {{"storage", "read_gbps"}, &r}});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out,
            "# A device, with its sources.\n"
            "memory_gib = 8.0       # spec sheet\n"
            "utilization = 0.85     # measured on a sunny day\n"
            "storage.read_gbps = 1.5\n"
            "\n"
            "[prefill]\n"
            "tflops = 2.0           # datasheet\n"
            "efficiency = 0.5\n"
            "quantized_efficiency = 0.3\n"
            "\n"
            "# the end\n");
}

TEST(EditToml, KeepsTheDottedPrefixAndRefusesInlineTables) {
  const toml::value<double> q(0.3);
  auto dotted = edit_toml("a = 1\nprefill.tflops = 2 # x\n", "d.toml", {{{"prefill", "quantized_efficiency"}, &q}});
  ASSERT_TRUE(dotted.ok()) << dotted.error().message;
  EXPECT_EQ(*dotted, "a = 1\nprefill.tflops = 2 # x\nprefill.quantized_efficiency = 0.3\n");
  auto inline_table = edit_toml("prefill = { tflops = 2 }\n", "d.toml", {{{"prefill", "quantized_efficiency"}, &q}});
  ASSERT_FALSE(inline_table.ok());
  EXPECT_EQ(inline_table.error().message,
            "d.toml:1: cannot add prefill.quantized_efficiency to an inline table; write it as a [table]");
}

// An edit with a comment replaces the old comment after the value (it described the old value), or adds one;
// a key added with a comment gets it too, at the comment column.
TEST(EditToml, ReplacesTheCommentOfAnEditedValue) {
  const toml::value<std::string> m("fitted");
  const toml::value<std::int64_t> n(4);
  auto out = edit_toml("a = 1\n\n[provenance]  # how\nmethod = \"carried\"  # fits of the M2\r\nruntime = \"x\"\n",
                       "d.toml", {{{"provenance", "method"}, &m, "fitted by calibrate"},
                                  {{"provenance", "measurements"}, &n, "runs"}});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out,
            "a = 1\n\n[provenance]  # how\n"
            "method = \"fitted\"           # fitted by calibrate\r\n"
            "runtime = \"x\"\n"
            "measurements = 4            # runs\n");
  // A value with no comment gets one; a long line keeps one space before it.
  auto bare = edit_toml("a_rather_long_key_name_here = 1\n", "d.toml", {{{"a_rather_long_key_name_here"}, &n, "c"}});
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  EXPECT_EQ(*bare, "a_rather_long_key_name_here = 4 # c\n");
}

// calibrate --write-profile records the fit in [provenance]: method "fitted", the runtime and backend of the
// rows (llama.cpp Metal in the M1 results), the 4 rows fitted (2 tg, 2 pp: the profile has [prefill]), their
// largest |error| (0.3%, the pp rows, as the table reports it)
// and the results file. A profile without the section gets it at the end; a carried profile's keys are
// replaced, `from` and the method's comment too.
TEST(CalibrateWrite, RecordsTheFitAsProvenance) {
  const fs::path dir = fs::temp_directory_path() / ("edgeplan_calibrate_prov_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string results = std::string(EDGEPLAN_SOURCE_DIR) + "/tests/data/llama-bench/m1-llama2-7b.json";
  const std::string base = "description = \"M1\"\nmemory_gib = 16\nreserved_gib = 4\nbandwidth_gbps = 68.25\n"
                           "utilization = 0.9\nper_token_overhead_ms = 0\n\n[prefill]\ntflops = 2.6\nefficiency = 0.5\n";
  const std::string carried = base + "\n[provenance]\nmethod = \"carried\"  # the M2's fit\n"
                                     "runtime = \"MLC CUDA\"\nfrom = \"apple-m2-24g\"\n";
  for (const std::string& profile : {base, carried}) {
    const std::string device = (dir / "m1.toml").string(), out = (dir / "m1-fitted.toml").string();
    std::ofstream(device) << profile;
    const auto run = testing_cli::run_cli({"calibrate", "--device", device, results, "--write-profile", out,
                                           "--force", "--format", "json"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    double largest = 0;
    const io::Json report = io::Json::parse(run.out);
    for (const auto& t : report["results"]["tests"]) {
      largest = std::max(largest, std::abs(t["error_percent"].get<double>()));
    }
    const std::string written = testing_files::read_file(out);
    auto d = load_device(ProfileText{"m1", out, out, written}, {});
    ASSERT_TRUE(d.ok()) << d.error().message;
    ASSERT_TRUE(d->provenance.has_value()) << written;
    EXPECT_EQ(d->provenance->method, Calibration::fitted);
    EXPECT_EQ(d->provenance->runtime, "llama.cpp Metal");
    EXPECT_EQ(d->provenance->measurements, 4u);
    EXPECT_NEAR(d->provenance->residual_percent, largest, 1e-4);
    EXPECT_NEAR(largest, 0.30, 0.01);
    EXPECT_EQ(d->provenance->from, results);
    EXPECT_EQ(written.find("the M2's fit"), std::string::npos) << written;
    EXPECT_EQ(written.find("MLC CUDA"), std::string::npos) << written;
    EXPECT_NE(written.find("method = \"fitted\"           # fitted by `edgeplan calibrate`\n"), std::string::npos)
        << written;
    EXPECT_EQ(written.find("\n[provenance]"), written.rfind("\n[provenance]")) << written;  // one section
  }
  fs::remove_all(dir);
}

TEST(CalibrateWrite, KeepsTheProfileComments) {
  const fs::path dir = fs::temp_directory_path() / ("edgeplan_calibrate_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string device = (dir / "m1.toml").string(), out = (dir / "m1-fitted.toml").string();
  std::ofstream(device) << "# Apple M1 (8-core GPU), 16 GB: a comment that must survive.\n"
                           "description = \"M1\"\n"
                           "memory_gib = 16     # spec sheet\n"
                           "reserved_gib = 4\n"
                           "bandwidth_gbps = 68.25  # LPDDR4X-4266, 128-bit\n"
                           "utilization = 0.9   # a guess\n"
                           "per_token_overhead_ms = 0\n";
  const auto run = testing_cli::run_cli({"calibrate", "--device", device,
                                         std::string(EDGEPLAN_SOURCE_DIR) + "/tests/data/llama-bench/m1-llama2-7b.csv",
                                         "--write-profile", out});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string written = testing_files::read_file(out);
  fs::remove_all(dir);
  EXPECT_NE(written.find("# Apple M1 (8-core GPU), 16 GB: a comment that must survive.\n"), std::string::npos) << written;
  EXPECT_NE(written.find("memory_gib = 16     # spec sheet\n"), std::string::npos) << written;
  EXPECT_NE(written.find("bandwidth_gbps = 68.25  # LPDDR4X-4266, 128-bit\n"), std::string::npos) << written;
  EXPECT_EQ(written.find("utilization = 0.9   # a guess"), std::string::npos) << written;  // fitted
  EXPECT_NE(written.find("   # a guess\n"), std::string::npos) << written;
  EXPECT_EQ(written.rfind("# m1 calibrated by `edgeplan calibrate` on ", 0), 0u) << written;
}

}  // namespace
}  // namespace edgeplan::io
