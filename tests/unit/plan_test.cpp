// The plan of a pair (core/plan.hpp) and the commands built on it: report's figures are the single commands'
// figures, one prefill model, one `fits`, one `ttft_s`, and spec's draft cost from decode's own times.
#include "edgeplan/core/plan.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "edgeplan/core/calibrate.hpp"
#include "edgeplan/core/decode.hpp"
#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/prefill.hpp"
#include "edgeplan/io/profiles.hpp"
#include "edgeplan/io/report.hpp"
#include "fixtures.hpp"
#include "scratch_dir.hpp"
#include "edgeplan/io/json.hpp"

namespace edgeplan {
namespace {

using testing_cli::CliRun;
using testing_cli::run_cli;

// The JSON output's `part` ("results" or "inputs") of a command line.
io::Json json_of(std::vector<std::string> args, const char* part = "results") {
  args.insert(args.end(), {"--format", "json"});
  const CliRun run = run_cli(args);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return io::Json::parse(run.out)[part];
}

std::string source_file(const std::string& path) { return std::string(EDGEPLAN_SOURCE_DIR) + "/" + path; }

// A device or model profile by name or path, through the loader.
DeviceSpec device_profile(const std::string& name) {
  return io::load_device(io::find_profile("devices", name, {}).value(), {}).value();
}
ModelSpec model_profile(const std::string& name) {
  return io::load_model(io::find_profile("models", name, {}).value(), {}).value();
}

// Each figure report prints is the one the single command prints for the same pair.
TEST(PlanCli, ReportFiguresAreTheSingleCommands) {
  const std::vector<std::string> pair{"--device", "phone8g", "--model", "ref-8b"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin() + 1, pair.begin(), pair.end());
    return more;
  };
  const io::Json report = json_of(with({"report", "--spec", "alpha=0.75,gamma=4,cost=0.15"}));
  const io::Json decode = json_of(with({"decode", "--quant", "Q4_K_M,Q8_0,F16", "--context", "4096", "--spec",
                                        "alpha=0.75,gamma=4,cost=0.15"}));
  const io::Json kv = json_of(with({"kv", "--context", "4096"}));
  const io::Json stream = json_of(with({"stream"}));
  const io::Json lora = json_of(with({"lora", "--rank", "16"}));
  const io::Json place = json_of(with({"place", "--prompt", "512"}));
  const io::Json route = json_of(with({"route", "--cloud", "llama-70b-api", "--requests", "typical-mix"}));
  const io::Json& q4 = decode["formats"][0];
  EXPECT_EQ(report["fits"], q4["fits"]);
  EXPECT_EQ(report["weights_bytes"], q4["weights_bytes"]);
  EXPECT_EQ(report["decode_tok_per_s"], q4["tok_per_s"]);
  EXPECT_EQ(report["spec_tok_per_s"], q4["spec_tok_per_s"]);
  EXPECT_EQ(report["prefill_tok_per_s"], q4["prefill_tok_per_s"]);
  EXPECT_EQ(report["ttft_s"], q4["ttft_s"]);
  EXPECT_EQ(report["kv_budget_bytes"], kv["budget_bytes"]);
  EXPECT_EQ(report["max_context"], kv["max_context"]);
  EXPECT_EQ(report["load_s"], stream["load"][0]["total_s"]);
  EXPECT_EQ(report["lora_resident_adapters"], lora["resident_adapters"]);
  EXPECT_EQ(report["npu_tax_percent"], place["tax_percent"]);
  EXPECT_EQ(report["device_share"], route["to_device"].get<double>() / route["request_count"].get<double>());
}

// lora and report count the same resident adapters on every shipped device for both Llama 3 models, beside the same
// weights, buffers and 4k KV cache (lora counted beside the weights alone: 138 on an M2 where report said 135, and 2
// on an iPhone 15 Pro whose 4k cache does not fit).
TEST(PlanCli, LoraAndReportCountTheSameAdapters) {
  int compared = 0;
  for (const io::ProfileText& device : io::list_profiles("devices", {})) {
    for (const char* model : {"llama-3.2-1b", "llama-3.1-8b"}) {
      const CliRun page = run_cli({"report", "--device", device.name, "--model", model, "--format", "json"});
      ASSERT_EQ(page.exit_code, 0) << device.name << " " << model << ": " << page.err;
      const io::Json adapters = io::Json::parse(page.out)["results"]["lora_resident_adapters"];
      if (adapters.is_null()) continue;  // no [lora] in the profile
      EXPECT_EQ(adapters, json_of({"lora", "--device", device.name, "--model", model, "--rank", "16"})["resident_adapters"])
          << device.name << " " << model;
      ++compared;
    }
  }
  EXPECT_GT(compared, 20);
  EXPECT_EQ(json_of({"lora", "--device", "iphone-15-pro", "--model", "llama-3.1-8b", "--rank", "16"})["resident_adapters"],
            0);
}

// On a device that counts llama.cpp's buffers, report shows and counts the buffers kv counts, with the same
// runtime options; check and fit take the same options (a check plan's figures are report's).
TEST(PlanCli, ReportCountsTheBuffersKvCounts) {
  for (const char* parallel : {"1", "2"}) {
    const std::vector<std::string> pair{"--device", "galaxy-s24-ultra", "--model", "llama-3.2-1b", "--quant", "Q4_0",
                                        "--ubatch", "256", "--parallel", parallel, "--no-mmap"};
    auto with = [&](std::vector<std::string> more) {
      more.insert(more.begin() + 1, pair.begin(), pair.end());
      return more;
    };
    const io::Json report = json_of(with({"report"}));
    const io::Json kv = json_of(with({"kv", "--context", "4096"}));
    for (const char* key : {"compute_bytes", "output_bytes", "repack_bytes", "runtime_bytes", "flash_attn",
                            "parallel", "ubatch", "max_context", "fits"}) {
      EXPECT_EQ(report[key], kv[key]) << key << " at --parallel " << parallel;
    }
    EXPECT_EQ(report["kv_budget_bytes"], kv["budget_bytes"]);
    EXPECT_GT(report["compute_bytes"].get<double>(), 0);
    EXPECT_EQ(report["ubatch"], 256);
    // fit's longest context is kv's, for the same options: capped at the trained context as kv caps it, and what the
    // memory allows with --allow-beyond-trained.
    for (const bool beyond : {false, true}) {
      std::vector<std::string> args{"fit", "--device", "galaxy-s24-ultra", "--models", "llama-3.2-1b", "--quant", "Q4_0",
                                    "--ubatch", "256", "--parallel", parallel, "--no-mmap", "--format", "json"};
      if (beyond) args.push_back("--allow-beyond-trained");
      const CliRun fit = run_cli(args);
      ASSERT_EQ(fit.exit_code, 0) << fit.err;
      EXPECT_EQ(io::Json::parse(fit.out)["results"]["fits"][0]["max_context"],
                kv[beyond ? "memory_max_context" : "max_context"])
          << "--parallel " << parallel << (beyond ? " --allow-beyond-trained" : "");
    }
  }
  const CliRun page = run_cli({"report", "--device", "galaxy-s24-ultra", "--model", "llama-3.2-1b"});
  ASSERT_EQ(page.exit_code, 0) << page.err;
  for (const char* line : {"compute buffer", "output buffer", "repack buffer", "memory - reserved - weights - buffers"}) {
    EXPECT_NE(page.out.find(line), std::string::npos) << line;
  }
  const CliRun ref = run_cli({"report", "--device", "phone8g", "--model", "ref-8b"});
  EXPECT_EQ(ref.out.find("compute buffer"), std::string::npos);  // the chapter counts none
}

// One pair, one prefill model: a device with [units] and no [prefill] gets the gpu's roofline over the fitted
// gpu utilization in report, decode and route alike.
TEST(PlanCli, UnitsWithoutPrefillUseTheFittedGpuRoofline) {
  const std::string device = source_file("tests/data/place-three-units.toml");
  const io::Json report = json_of({"report", "--device", device, "--model", "ref-8b"});
  EXPECT_EQ(report["prefill_source"], "units");
  EXPECT_EQ(report["prefill_basis"]["unit"], "gpu");
  EXPECT_EQ(report["prefill_basis"]["utilization"], 0.693);
  const io::Json decode = json_of({"decode", "--device", device, "--model", "ref-8b", "--quant", "Q4_K_M",
                                  "--context", "4096"});
  EXPECT_EQ(decode["formats"][0]["prefill_tok_per_s"], report["prefill_tok_per_s"]);
  EXPECT_EQ(decode["prefill_basis"], report["prefill_basis"]);
  EXPECT_DOUBLE_EQ(report["ttft_s"].get<double>(), 512 / report["prefill_tok_per_s"].get<double>() +
                                                       decode["formats"][0]["ms_per_token"].get<double>() / 1000);
}

// The estimate is the gpu unit's own roofline (no npu, no transfers) divided by the fitted utilization.
TEST(Plan, UnitsPrefillIsTheGpuRooflineOverItsUtilization) {
  const DeviceSpec d = device_profile(source_file("tests/data/place-three-units.toml"));
  const ModelSpec m = model_profile("ref-8b");
  const auto est = prefill_estimate(d, m, prefill_flops(m, 512), matmul_weights(m, *find_file_type("Q4_K_M")), 512);
  ASSERT_TRUE(est.ok()) << est.error().message;
  ASSERT_NE(est->fitted, nullptr);
  EXPECT_EQ(est->fitted->unit, UnitKind::gpu);
  const auto roof = unit_roofline_prefill(m, d, UnitKind::gpu, 512);
  ASSERT_TRUE(roof.ok());
  EXPECT_DOUBLE_EQ(est->seconds, roof->total_s / 0.693);
  EXPECT_DOUBLE_EQ(fit_utilization(std::vector<double>{1, 4}, std::vector<double>{2, 2}), 1.0);
}

// A device whose only unit has no fitted utilization prints no prefill figure: the iPhone 15 Pro's Neural
// Engine roofline (35 int8 TOPS at 100%) gave 1,665 tok/s for an 8B, 5-15x what any runtime reaches.
TEST(Plan, NoPrefillFigureWithoutAFittedUnit) {
  DeviceSpec d = device_profile("iphone-15-pro");
  d.units.erase(UnitKind::gpu);  // its runtime class's unit; the Neural Engine alone stays
  const ModelSpec m = model_profile("llama-3.1-8b");
  const auto est = prefill_estimate(d, m, prefill_flops(m, 512), matmul_weights(m, *find_file_type("Q4_K_M")), 512);
  ASSERT_FALSE(est.ok());
  EXPECT_EQ(est.error().message, "device profile has no [prefill], and no unit with a utilization fitted to measured "
                                 "prefill (gpu has one; the profile's units: npu)");
}

// Every shipped real device answers every speed and time figure of report for a small and a large model, under its
// default runtime class and with its range; the one exception is written here: a class without a prefill fit (MLC on
// Jetson) prefills on its unit's roofline with no range.
TEST(PlanCli, EveryRealDeviceGivesEveryFigureWithItsRange) {
  for (const io::ProfileText& text : io::list_profiles("devices", io::SearchPath{})) {
    const DeviceSpec d = io::load_device(text, {}).value();
    if (d.provenance && d.provenance->method == Calibration::reference) continue;  // the chapter's phone
    for (const char* model : {"llama-3.2-1b", "llama-3.1-8b"}) {
      const io::Json j = json_of({"report", "--device", text.name, "--model", model});
      const io::Json inputs = json_of({"report", "--device", text.name, "--model", model}, "inputs");
      const std::string pair = text.name + " " + model;
      EXPECT_TRUE(inputs.contains("runtime")) << pair;
      EXPECT_FALSE(j["provenance"].is_null()) << pair;
      for (const char* key : {"decode_tok_per_s", "decode_tok_per_s_low", "decode_tok_per_s_high", "prefill_tok_per_s",
                              "ttft_s", "load_s", "load_s_low", "load_s_high"}) {
        EXPECT_TRUE(j[key].is_number()) << pair << ": " << key;
      }
      const bool prefill_fit = inputs["runtime"]["name"] != "mlc-cuda-jetson-orin";
      for (const char* key : {"prefill_tok_per_s_low", "prefill_tok_per_s_high", "ttft_s_low", "ttft_s_high"}) {
        EXPECT_EQ(j[key].is_number(), prefill_fit) << pair << ": " << key;
      }
    }
  }
}

// A datasheet-only device's decode and prefill are marked "*" and explained; JSON says calibrated false and
// --require can ask for a fitted device. A device under a runtime class is marked too, naming the class.
TEST(PlanCli, UncalibratedFiguresAreMarked) {
  const std::string device = source_file("tests/data/datasheet-device.toml");
  const CliRun sheet = run_cli({"report", "--device", device, "--model", "llama-3.1-8b"});
  ASSERT_EQ(sheet.exit_code, 0) << sheet.err;
  EXPECT_NE(sheet.out.find(" tok/s *"), std::string::npos) << sheet.out;
  EXPECT_NE(sheet.out.find("* uncalibrated: datasheet-device is datasheet only (vendor figures at utilization 0.85; "
                           "nothing fitted)"), std::string::npos) << sheet.out;
  const io::Json j = json_of({"report", "--device", device, "--model", "llama-3.1-8b"});
  EXPECT_EQ(j["calibrated"], false);
  EXPECT_EQ(j["provenance"]["method"], "datasheet");
  const CliRun classed = run_cli({"report", "--device", "iphone-16-pro", "--model", "llama-3.1-8b"});
  EXPECT_NE(classed.out.find("* not measured: iphone-16-pro runs llama.cpp Metal at the figures of runtime class "
                             "llama.cpp-metal-apple-m"), std::string::npos) << classed.out;
  const io::Json iphone = json_of({"report", "--device", "iphone-16-pro", "--model", "llama-3.1-8b"});
  EXPECT_EQ(iphone["calibrated"], false);
  EXPECT_EQ(iphone["provenance"]["method"], "class");
  const io::Json fitted = json_of({"report", "--device", "apple-m2-24g", "--model", "llama-3.1-8b"});
  EXPECT_EQ(fitted["calibrated"], true);
  EXPECT_EQ(fitted["provenance"]["runtime"], "llama.cpp Metal");
  EXPECT_EQ(run_cli({"report", "--device", "iphone-16-pro", "--model", "llama-3.1-8b", "--require",
                     "calibrated == true"}).exit_code, 1);
  EXPECT_EQ(run_cli({"report", "--device", "apple-m2-24g", "--model", "llama-3.1-8b", "--require",
                     "calibrated == true"}).exit_code, 0);
  const CliRun ref = run_cli({"report", "--device", "phone8g", "--model", "ref-8b"});
  EXPECT_EQ(ref.out.find("uncalibrated"), std::string::npos) << ref.out;
}

// A llama.cpp GGUF on a device fitted to another runtime names the mismatch; on a llama.cpp-fitted one it does not.
TEST(PlanCli, RuntimeMismatchIsNamed) {
  const std::string gguf = source_file("tests/data/tiny-llama.gguf");
  const io::Json jetson = json_of({"report", "--device", "jetson-orin-nano-8g", "--model", gguf});
  EXPECT_EQ(jetson["runtime_mismatch"], "runtime mismatch: jetson-orin-nano-8g was fitted to MLC CUDA, and the model "
                                        "is a llama.cpp GGUF: the figures carry that runtime's efficiency, not "
                                        "llama.cpp's");
  EXPECT_TRUE(json_of({"report", "--device", "apple-m2-24g", "--model", gguf})["runtime_mismatch"].is_null());
  EXPECT_TRUE(json_of({"report", "--device", "jetson-orin-nano-8g", "--model", "llama-3.1-8b"})["runtime_mismatch"].is_null());
}

// Where a device gives both, report keeps the chapter's [prefill] figure and says so, naming place's.
TEST(PlanCli, ReportSaysWhichPrefillItShows) {
  const CliRun run = run_cli({"report", "--device", "phone8g", "--model", "ref-8b"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("178.5 tok/s    512-token prompt"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("use the device's [prefill] rate (178.5 tok/s)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("per-op roofline of its [units] (1869 tok/s, npu-first)"), std::string::npos) << run.out;
  EXPECT_EQ(json_of({"report", "--device", "phone8g", "--model", "ref-8b"})["prefill_source"], "prefill");
}

// `fits` means weights + KV at the context + reserved within memory; stream's weights-only test is weights_fit;
// place's prefill time is prefill_s (ttft_s is prefill + one decode step only).
TEST(PlanCli, OneMeaningPerName) {
  const io::Json stream = json_of({"stream", "--device", "phone8g", "--model", "ref-8b"});
  EXPECT_FALSE(stream.contains("fits"));
  EXPECT_EQ(stream["weights_fit"], true);
  const io::Json place = json_of({"place", "--device", "phone8g", "--model", "ref-8b"});
  EXPECT_FALSE(place.contains("ttft_s"));
  EXPECT_NEAR(place["prefill_s"].get<double>(), 0.273908, 1e-6);
}

// spec --draft takes the draft cost from decode's per-token times (overhead included): 1.75x under the phone's
// llama.cpp CPU class, not what the byte ratio alone gives.
TEST(PlanCli, DraftCostFromDecodeTimes) {
  const io::Json spec = json_of({"spec", "--alpha", "0.8", "--best-gamma", "--draft", "llama-3.2-1b", "--model",
                                 "llama-3.1-8b", "--device", "galaxy-s24-ultra"});
  const io::Json target = json_of({"decode", "--device", "galaxy-s24-ultra", "--model", "llama-3.1-8b", "--quant", "Q4_K_M"});
  const io::Json draft = json_of({"decode", "--device", "galaxy-s24-ultra", "--model", "llama-3.2-1b", "--quant", "Q4_K_M"});
  const double cost = draft["formats"][0]["ms_per_token"].get<double>() / target["formats"][0]["ms_per_token"].get<double>();
  EXPECT_NEAR(spec["alphas"][0]["speedup"].get<double>(),
              spec_speedup({0.8, static_cast<std::uint32_t>(spec["gamma"].get<int>()), cost}), 1e-12);
  EXPECT_NEAR(spec["speedup"].get<double>(), 1.75, 0.005);
}

TEST(Plan, MemoryFitIsWeightsPlusKvWithinMemory) {
  const MemoryFit f = memory_fit(8.0, 1.0, 5.0, 2.0);
  EXPECT_EQ(f.budget_bytes, 2.0);
  EXPECT_EQ(f.headroom_bytes, 0.0);
  EXPECT_TRUE(f.fits);
  EXPECT_FALSE(memory_fit(8.0, 1.0, 5.0, 2.5).fits);
  EXPECT_TRUE(weights_fit(8.0, 1.0, 7.0));
  EXPECT_FALSE(weights_fit(8.0, 1.0, 7.5));
}

TEST(Plan, TtftIsPrefillPlusOneDecodeStep) { EXPECT_EQ(ttft_s(2.5, 0.25), 2.75); }

TEST(Plan, DraftCostWithoutDeviceIsTheBytesRatio) {
  EXPECT_DOUBLE_EQ(spec_draft_cost(nullptr, 0.8e9, 5.184e9), 0.8 / 5.184);
  DeviceSpec d = fixtures::phone8g();
  d.per_token_overhead_s = 0.01;
  const double draft = 0.8e9 / (68e9 * 0.85) + 0.01, target = 5.184e9 / (68e9 * 0.85) + 0.01;
  EXPECT_DOUBLE_EQ(spec_draft_cost(&d, 0.8e9, 5.184e9), draft / target);
}

// The chapter's pair: every section there, each figure the chapter's.
TEST(Plan, ReferencePair) {
  const DeviceSpec device = fixtures::phone8g();
  const ModelSpec model = fixtures::ref_8b();
  PlanInputs in;
  in.formats = {find_file_type("Q4_K_M"), find_file_type("F16")};
  in.kv_type = *find_kv_type("f16");
  in.context_tokens = 0;
  in.lora_rank = 16;
  const Result<PlanResult> r = plan(device, model, in);
  ASSERT_TRUE(r) << r.error().message;
  const WeightSize q4 = *weight_size(model, *in.formats[0]), f16 = *weight_size(model, *in.formats[1]);
  EXPECT_EQ(r->chosen().decode.tok_per_s, decode(device, {q4.active_bytes, 0}).tok_per_s);
  EXPECT_EQ(r->chosen().relative, r->formats[0].decode.tok_per_s / r->formats[1].decode.tok_per_s);
  EXPECT_EQ(r->formats[1].weights.bytes, f16.bytes);
  const double budget = kv_budget_bytes(device.memory_bytes, device.reserved_bytes, q4.bytes);
  EXPECT_EQ(r->kv_budget_bytes, budget);
  ASSERT_EQ(r->kv[1].type, in.kv_type);  // f32 first, as llama.cpp lists its cache types
  EXPECT_EQ(r->kv[1].max_context, max_context(model, in.kv_type, budget, device.kv_cache));
  EXPECT_FALSE(r->route);  // no clouds asked for
  EXPECT_EQ(r->route.error().message, "no clouds or requests to route");
}

// A sweep over device numbers derives the model's figures once and plans each device from them: the same plan.
TEST(Plan, ModelFiguresComputedOnceGiveTheSamePlan) {
  const ModelSpec model = fixtures::ref_8b();
  PlanInputs in;
  in.formats = {find_file_type("Q4_K_M"), find_file_type("Q8_0")};
  in.kv_type = *find_kv_type("f16");
  const Result<ModelFigures> figures = model_figures(model, in);
  ASSERT_TRUE(figures);
  ASSERT_EQ(figures->sizes.size(), 2u);
  EXPECT_EQ(figures->sizes[1].bytes, weight_size(model, *in.formats[1])->bytes);
  EXPECT_EQ(figures->prompt_flops, prefill_flops(model, in.prompt_tokens));
  for (const double gbps : {30.0, 68.0}) {
    DeviceSpec device = fixtures::phone8g();
    device.bandwidth_bytes_per_s = gbps * 1e9;
    const Result<PlanResult> once = plan(device, model, in, *figures), each = plan(device, model, in);
    ASSERT_TRUE(once && each);
    EXPECT_EQ(once->chosen().decode.tok_per_s, each->chosen().decode.tok_per_s);
    EXPECT_EQ(once->kv_budget_bytes, each->kv_budget_bytes);
    EXPECT_EQ(once->kv[1].max_context, each->kv[1].max_context);
    EXPECT_EQ(once->chosen().ttft_s, each->chosen().ttft_s);
  }
  ModelFigures short_one = *figures;
  short_one.sizes.pop_back();  // figures of other formats than the inputs'
  EXPECT_FALSE(plan(fixtures::phone8g(), model, in, short_one));
}

// A device that counts llama.cpp's buffers: the plan's fits, budget and max context take them off, as kv does.
TEST(Plan, FitsCountTheRuntimeBuffers) {
  DeviceSpec device = fixtures::phone8g();
  device.runtime.buffers = true;
  const ModelSpec model = fixtures::llama32_1b();
  PlanInputs in;
  in.formats = {find_file_type("Q8_0")};
  in.kv_type = *find_kv_type("f16");
  in.context_tokens = 4096;
  const Result<PlanResult> r = plan(device, model, in);
  ASSERT_TRUE(r) << r.error().message;
  // Compute: when the logits of 512 tokens are allocated, the slot of the token ids (2,048 B, freed), the
  // embeddings input and the normed last hidden states lie under them: 2,048 + 4 x 512 x (128,256 + 2 x 2,048)
  // = 271,058,944 (the layers' tensors are smaller); output: 4 x 128,256 = 513,024.
  const RuntimeBuffers& b = r->chosen().runtime.buffers;
  EXPECT_DOUBLE_EQ(b.compute_bytes, 271058944);
  EXPECT_DOUBLE_EQ(b.output_bytes, 513024);
  EXPECT_DOUBLE_EQ(b.added_bytes, 271571968);
  const double free = 7.2 * 1073741824.0, weights = r->chosen().weights.bytes;
  EXPECT_DOUBLE_EQ(r->kv_budget_bytes, free - weights - 271571968);
  // 16 layers x 2 x 512 x 2 B = 32,768 B/token: 134,217,728 B at 4096 tokens.
  EXPECT_DOUBLE_EQ(r->chosen().memory.headroom_bytes, free - weights - 271571968 - 134217728);
  ASSERT_EQ(r->kv[1].type, in.kv_type);
  EXPECT_EQ(r->kv[1].max_context, max_context(model, in.kv_type, r->kv_budget_bytes, device.kv_cache));

  // Two sequences share what is left: each cache gets half, so the longest context halves (to a pad).
  in.runtime.parallel = 2;
  const Result<PlanResult> two = plan(device, model, in);
  ASSERT_TRUE(two);
  const double share = (free - weights - two->chosen().runtime.buffers.added_bytes) / 2;
  EXPECT_DOUBLE_EQ(two->chosen().memory.budget_bytes, share);
  EXPECT_EQ(two->kv[1].max_context, max_context(model, in.kv_type, share, device.kv_cache));

  // The phone of the chapter counts none: its figures are weights + KV alone.
  device.runtime.buffers = false;
  const Result<PlanResult> none = plan(device, model, in);
  ASSERT_TRUE(none);
  EXPECT_DOUBLE_EQ(none->kv_budget_bytes, kv_budget_bytes(device.memory_bytes, device.reserved_bytes, weights));
}

// Flash attention off with a quantized V cache is refused by llama.cpp, and by the plan.
TEST(Plan, RefusesFlashAttentionOffWithAQuantizedV) {
  PlanInputs in;
  in.formats = {find_file_type("Q4_K_M")};
  in.kv_type = *find_kv_type("q8_0");
  in.runtime.flash_attn = FlashAttn::off;
  const Result<PlanResult> r = plan(fixtures::phone8g(), fixtures::llama32_1b(), in);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("needs flash attention"), std::string::npos);
}

TEST(Plan, AbsentSectionsSayWhy) {
  DeviceSpec device = fixtures::phone8g();
  device.storage.reset();
  device.prefill.reset();
  device.units.clear();
  PlanInputs in;
  in.formats = {find_file_type("Q4_K_M")};
  in.kv_type = *find_kv_type("f16");
  const Result<PlanResult> r = plan(device, fixtures::ref_8b(), in);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->load.error().message,
            "device profile has no [storage]: no storage class (class) or read rate (read_gbps), and no page size");
  EXPECT_EQ(r->chosen().prefill.error().message,
            "device profile has no [prefill]: no published compute rate (tflops) or [units] peak to estimate it from");
  EXPECT_EQ(r->place.error().message, "device profile has no [units.*]");
  EXPECT_EQ(r->lora.error().message, "no LoRA rank asked for");
}

TEST(Lora, MatricesGroupByTargetShapeAndRank) {
  const std::vector<LoraMatrix> m{{"attn_q.weight", {8, 8}, 2, 10}, {"attn_q.weight", {8, 8}, 2, 10},
                                  {"attn_q.weight", {8, 4}, 2, 5}, {"ffn_up.weight", {8, 16}, 2, 12}};
  const std::vector<LoraMatrixGroup> g = group_lora_matrices(m);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].layers, 2u);
  EXPECT_EQ(g[0].matrix.adapter_bytes, 20);
  EXPECT_EQ(g[1].matrix.shape.d_out, 4u);
  EXPECT_EQ(g[2].matrix.target, "ffn_up.weight");
}

// calibrate on tg tests at a depth, with --model and a device with one-token rates: each row's token reads the
// weights and the f16 cache at its average context (depth + (n_gen + 1) / 2) and computes its matmuls and its
// attention over that context; the overhead is what max(bandwidth term, compute term) leaves, averaged. A q8_0
// cache (type_k, type_v) is read at its own size; the depth-0 row reads the weights alone (its cache starts empty);
// without --model the depth rows are not fitted.
TEST(Calibrate, DepthTestsReadAndAttendToTheCache) {
  const testing_dir::ScratchDir dir("calibrate_depth");
  const std::string device = (dir / "d.toml").string(), results = (dir / "r.csv").string();
  std::ofstream(device) << "description = \"d\"\nmemory_gib = 64\nreserved_gib = 1\nbandwidth_gbps = 1000\n"
                           "utilization = 1\nper_token_overhead_ms = 0\n[decode]\nq4_0_gflops = 2000\n"
                           "q6_k_gflops = 1000\nattention_gflops = 50\n";
  std::ofstream(results) << "model_type,model_size,model_n_params,n_prompt,n_gen,n_depth,type_k,type_v,avg_ts\n"
                            "llama 7B Q4_0,3825065984,6738415616,0,64,512,f16,f16,20\n"
                            "llama 7B Q4_0,3825065984,6738415616,0,64,4096,q8_0,q8_0,15\n"
                            "llama 7B Q4_0,3825065984,6738415616,0,64,0,f16,f16,22\n";
  const io::Json fit = json_of({"calibrate", "--device", device, "--model", "llama-2-7b", results});
  const ModelSpec m = model_profile("llama-2-7b");
  const DeviceSpec d = io::load_device(io::find_profile("devices", device, {}).value(), {}).value();
  const FileType& q4_0 = *find_file_type("Q4_0");
  const double weights = weight_size(m, q4_0).value().bytes;
  double overhead = 0;
  for (const auto& [depth, kv, tok_per_s] : {std::tuple{512u, "f16", 20.0}, {4096u, "q8_0", 15.0}, {0u, "f16", 22.0}}) {
    const std::uint64_t context = depth + 32;
    const double bytes = weights + (depth > 0 ? kv_cache_bytes(m, *find_kv_type(kv), context, d.kv_cache) : 0);
    overhead += (1 / tok_per_s - std::max(bytes / 1000e9, decode_compute_s(*d.decode, m, q4_0, context))) / 3;
  }
  EXPECT_NEAR(fit["per_token_overhead_ms"].get<double>(), overhead * 1e3, 1e-9);
  // The attention at 4128 cached tokens is 4 x 32 x 128 x 4128 x 32 FLOPs: 43.3 ms at 50 GFLOPS, in that row alone.
  EXPECT_NEAR(decode_attention_flops(m, 4128) / 50e9 * 1e3, 43.28, 0.01);

  const io::Json bare = json_of({"calibrate", "--device", device, results});
  EXPECT_EQ(bare["tests"].size(), 1u);  // the depth-0 row alone

  std::ofstream(results) << "model_type,model_size,model_n_params,n_prompt,n_gen,n_depth,type_k,type_v,avg_ts\n"
                            "llama 7B Q4_0,3825065984,6738415616,0,64,512,q9_0,f16,20\n";
  const CliRun bad = run_cli({"calibrate", "--device", device, "--model", "llama-2-7b", results});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "edgeplan: error: " + results + ":2: type_k: unknown cache type 'q9_0'; did you mean q8_0?\n");
}

TEST(Calibrate, SampleSelection) {
  EXPECT_EQ(bench_test_kind(0, 128, 0, false), BenchTest::decode);
  EXPECT_EQ(bench_test_kind(512, 0, 0, false), BenchTest::prefill);
  EXPECT_EQ(bench_test_kind(512, 128, 0, true), BenchTest::not_fitted);
  EXPECT_EQ(bench_test_kind(512, 0, 4096, true), BenchTest::not_fitted);
  // A tg test at a depth reads and attends to the cache: fitted where the model's layers are known.
  EXPECT_EQ(bench_test_kind(0, 128, 4096, true), BenchTest::decode);
  EXPECT_EQ(bench_test_kind(0, 128, 4096, false), BenchTest::not_fitted);
  EXPECT_EQ(bench_context(0, 128), 64u);
  EXPECT_EQ(bench_context(512, 64), 544u);
  EXPECT_EQ(bench_context(0, 1), 1u);  // the one token sees itself
  EXPECT_EQ(decode_sample(4e9, 8).s_per_token, 0.125);
  EXPECT_EQ(prefill_sample(1e12, 512, 256).seconds, 2.0);
}

// A profile with an attention efficiency fits the weights' efficiency on what the attention leaves of each sample.
TEST(Calibrate, AttentionIsTakenOutAtItsOwnEfficiency) {
  PrefillSpec unit{1e12, 0.5, 0.5};
  const PrefillSample s{1e12, 2.0};
  EXPECT_EQ(weights_part(s, 0.1e12, unit)->seconds, 2.0);  // no attention efficiency: the sample as it is
  unit.attention_efficiency = 0.1;                          // 0.1e12 FLOPs at 1e11 FLOP/s: 1 s
  const Result<PrefillSample> w = weights_part(s, 0.1e12, unit);
  ASSERT_TRUE(w.ok());
  EXPECT_DOUBLE_EQ(w->flops, 0.9e12);
  EXPECT_DOUBLE_EQ(w->seconds, 1.0);
  EXPECT_EQ(weights_part(s, 0.2e12, unit).error().message,
            "the prompt's attention alone takes 2 s at prefill.attention_efficiency 0.1, at least the measured 2 s: "
            "the attention efficiency is too low for these measurements");
}

}  // namespace
}  // namespace edgeplan
