// The vega-lite format (io/render/vega_lite.cpp): a report's charts as a Vega-Lite v5 specification with the
// data inline, read back as JSON: marks, fields and their types, the shown units, the rows, the reference lines;
// the charts the commands declare, with the figures their other formats print; a sweep's chart; and the usage
// error for a command without any.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "cli/plan.hpp"
#include "cli_run.hpp"
#include "scratch_dir.hpp"
#include "edgeplan/core/prefill.hpp"
#include "edgeplan/core/roofline.hpp"
#include "edgeplan/io/profiles.hpp"
#include "edgeplan/io/embedded.hpp"
#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/json.hpp"

namespace edgeplan {
namespace {

using testing_cli::run_cli;

io::Json spec_of(const io::Report& r) { return io::Json::parse(io::render(r, *io::find_format("vega-lite"))); }

io::Json run_spec(const std::vector<std::string>& args) {
  const testing_cli::CliRun run = run_cli(args);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return io::Json::parse(run.out);
}

io::Report formats_report() {
  io::Report r;
  r.command = "decode";
  r.title = "decode: m on d";
  io::Table t{"formats", {{"format", "format"}, {"weights (GB)", "weights_bytes", 2, false, 1e9}, {"tok/s", "tok_per_s", 2}}, {}};
  t.add({"Q4_K_M", 2.5e9, 12.5});
  t.add({"F16", 8e9, 4.0});
  r.tables.push_back(std::move(t));
  io::Table notes{"other", {{"a", "a"}}, {}};
  notes.add({"not drawn"});
  r.tables.push_back(std::move(notes));
  io::Chart c{"tok/s per format", "formats", "bar", "format", "tok_per_s"};
  c.size = "weights_bytes";
  c.rules.push_back({'y', 10, "ten"});
  r.charts.push_back(std::move(c));
  return r;
}

TEST(VegaLite, SpecHoldsTheMarkTheFieldsAndTheRows) {
  const io::Json spec = spec_of(formats_report());
  EXPECT_EQ(spec["$schema"], "https://vega.github.io/schema/vega-lite/v5.json");
  EXPECT_EQ(spec["title"], "decode: m on d");
  // Only the drawn tables are inline, each row as JSON writes it (bytes as whole numbers).
  ASSERT_EQ(spec["datasets"].size(), 1u);
  const io::Json& rows = spec["datasets"]["formats"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], io::Json({{"format", "Q4_K_M"}, {"weights_bytes", 2500000000}, {"tok_per_s", 12.5}}));
  EXPECT_EQ(rows[1]["tok_per_s"], 4.0);
  ASSERT_EQ(spec["vconcat"].size(), 1u);
  const io::Json& view = spec["vconcat"][0];
  EXPECT_EQ(view["title"], "tok/s per format");
  EXPECT_EQ(view["data"], io::Json({{"name", "formats"}}));
  // Each field under its column's title, in the shown unit: bytes over the column's scale.
  EXPECT_EQ(view["transform"][0], io::Json({{"calculate", "datum[\"format\"]"}, {"as", "format"}}));
  EXPECT_EQ(view["transform"][1], io::Json({{"calculate", "datum[\"tok_per_s\"]"}, {"as", "tok/s"}}));
  EXPECT_EQ(view["transform"][2],
            io::Json({{"calculate", "datum[\"weights_bytes\"] / 1000000000"}, {"as", "weights (GB)"}}));
  const io::Json& bars = view["layer"][0];
  EXPECT_EQ(bars["mark"]["type"], "bar");
  EXPECT_EQ(bars["encoding"]["x"],
            io::Json({{"field", "format"}, {"title", "format"}, {"type", "nominal"}, {"sort", nullptr}}));
  EXPECT_EQ(bars["encoding"]["y"],
            io::Json({{"field", "tok/s"}, {"title", "tok/s"}, {"type", "quantitative"}, {"stack", nullptr}}));
  EXPECT_EQ(bars["encoding"]["size"]["field"], "weights (GB)");
  // The reference line and its label, at the value given.
  ASSERT_EQ(view["layer"].size(), 3u);
  EXPECT_EQ(view["layer"][1]["mark"]["type"], "rule");
  EXPECT_EQ(view["layer"][1]["encoding"]["y"]["datum"], 10.0);
  EXPECT_EQ(view["layer"][2]["encoding"]["text"]["value"], "ten");
}

TEST(VegaLite, RulesAreDrawnInTheShownUnitAndStacksAlongTheNumbers) {
  io::Report r;
  r.title = "t";
  io::Table t{"memory", {{"context", "context", 0, true}, {"part", "part"}, {"memory (GiB)", "bytes", 2, false, 1024.0}}, {}};
  t.add({std::int64_t{1024}, "weights", 2048.0});
  t.add({std::int64_t{1024}, "KV", 512.0});
  r.chart_tables.push_back(std::move(t));
  io::Chart c{"stack", "memory", "area", "context", "bytes", "", "part"};
  c.stack = true;
  c.x_log = 2;
  c.rules.push_back({'y', 4096, "budget"});
  c.rules.push_back({'x', 8192, "trained"});
  r.charts.push_back(std::move(c));
  const io::Json spec = spec_of(r);
  // A chart table is drawn though no other format prints it.
  EXPECT_EQ(spec["datasets"]["memory"][1], io::Json({{"context", 1024}, {"part", "KV"}, {"bytes", 512}}));
  const io::Json& view = spec["vconcat"][0];
  const io::Json& area = view["layer"][0];
  EXPECT_EQ(area["encoding"]["y"]["stack"], "zero");
  EXPECT_EQ(area["encoding"]["x"]["scale"], io::Json({{"type", "log"}, {"base", 2}}));
  EXPECT_EQ(area["encoding"]["color"]["field"], "part");
  EXPECT_EQ(view["layer"][1]["encoding"]["y"]["datum"], 4.0);  // 4096 B over the column's 1024
  EXPECT_EQ(view["layer"][3]["encoding"]["x"]["datum"], 8192.0);
}

TEST(VegaLite, StreamedRowsGiveTheSpecOfTheWholeTable) {
  const io::Report whole = formats_report();
  io::Report head = whole;
  head.tables.front().rows.clear();
  const io::RowSource source{2, [&] {
                               return [&](std::uint64_t i, std::vector<std::vector<io::Cell>>& rows) {
                                 rows.push_back(whole.tables.front().rows[i]);
                               };
                             }};
  std::ostringstream out;
  io::render_rows(head, source, *io::find_format("vega-lite"), out);
  EXPECT_EQ(out.str(), io::render(whole, *io::find_format("vega-lite")));
}

TEST(VegaLite, KvDrawsTheMemoryStackAgainstContextWithBudgetAndTrainedContext) {
  const std::vector<std::string> args{"kv", "--device", "galaxy-s24-ultra", "--model", "gemma-3-4b", "--quant", "Q4_K_M"};
  std::vector<std::string> json_args = args;
  json_args.insert(json_args.end(), {"--format", "json"});
  const io::Json kv = run_spec(json_args)["results"];
  std::vector<std::string> chart_args = args;
  chart_args.insert(chart_args.end(), {"--format", "vega-lite"});
  const io::Json spec = run_spec(chart_args);
  ASSERT_EQ(spec["vconcat"].size(), 2u);
  EXPECT_EQ(spec["vconcat"][0]["layer"][0]["mark"]["type"], "bar");
  EXPECT_EQ(spec["datasets"]["types"].size(), kv["types"].size());
  const io::Json& stack = spec["vconcat"][1];
  EXPECT_EQ(stack["layer"][0]["mark"]["type"], "area");
  EXPECT_FALSE(stack["layer"][0]["encoding"].contains("order"));  // an area's order would be its path's
  // Weights, llama.cpp's buffers and the f16 cache at 1024 tokens, ... up to the trained 131,072 tokens.
  const io::Json& rows = spec["datasets"]["memory"];
  ASSERT_EQ(rows.size(), 3u * 8u);
  EXPECT_EQ(rows[0]["context"], 1024);
  EXPECT_EQ(rows[0]["part"], "weights");
  EXPECT_EQ(rows[0]["bytes"], kv["weights_bytes"]);
  EXPECT_EQ(rows[1]["bytes"], kv["runtime_bytes"]);
  EXPECT_EQ(rows[2]["part"], "KV cache (f16)");
  EXPECT_EQ(rows.back()["context"], 131072);
  // The stack crosses memory - reserved where kv's longest context ends: below it at the last power of two
  // that fits, above it at the next.
  const double line = stack["layer"][1]["encoding"]["y"]["datum"].get<double>() * 1073741824.0;
  EXPECT_NEAR(line, kv["budget_bytes"].get<double>() + kv["weights_bytes"].get<double>() + kv["runtime_bytes"].get<double>(),
              1.0);
  const auto total_at = [&](std::uint64_t c) {
    double sum = 0;
    for (const io::Json& row : rows) {
      if (row["context"] == c) sum += row["bytes"].get<double>();
    }
    return sum;
  };
  const std::uint64_t longest = kv["max_context"].get<std::uint64_t>();
  std::uint64_t below = 1024;
  while (below * 2 <= longest) below *= 2;
  if (below * 2 <= 131072) {
    EXPECT_LE(total_at(below), line);
    EXPECT_GT(total_at(below * 2), line);
  }
  EXPECT_EQ(stack["layer"][3]["encoding"]["x"]["datum"], 131072.0);
  EXPECT_EQ(stack["layer"][4]["encoding"]["text"]["value"], "trained 131,072");
}

TEST(VegaLite, ReportDrawsItsMemoryAndDecodeAgainstContextPerFormat) {
  const io::Json spec = run_spec({"report", "--device", "galaxy-s24-ultra", "--model", "gemma-3-4b", "--quant", "Q5_K_M",
                                  "--format", "vega-lite"});
  const io::Json report = run_spec({"report", "--device", "galaxy-s24-ultra", "--model", "gemma-3-4b", "--quant", "Q5_K_M",
                                    "--format", "json"})["results"];
  // Memory, decode against context, the roofline, the layer placed on the phone's one unit (its CPU) and the routing
  // share.
  ASSERT_EQ(spec["vconcat"].size(), 5u);
  EXPECT_EQ(spec["vconcat"][2]["data"]["name"], "roofline");
  EXPECT_EQ(spec["vconcat"][3]["data"]["name"], "timeline");
  EXPECT_EQ(spec["vconcat"][4]["data"]["name"], "routing");
  // Under the phone's runtime class each decode line carries its range, a band from tok/s low to tok/s high.
  const io::Json& band = spec["vconcat"][1]["layer"][0];
  EXPECT_EQ(band["mark"]["type"], "area");
  EXPECT_EQ(band["encoding"]["y"]["field"], "tok/s low");
  EXPECT_EQ(band["encoding"]["y2"]["field"], "tok/s high");
  EXPECT_TRUE(band["encoding"]["y"]["stack"].is_null());
  const io::Json& speed = spec["datasets"]["decode"][0];
  EXPECT_LT(speed["tok_per_s_low"].get<double>(), speed["tok_per_s"].get<double>());
  EXPECT_GT(speed["tok_per_s_high"].get<double>(), speed["tok_per_s"].get<double>());
  const io::Json& memory = spec["datasets"]["memory"];
  EXPECT_EQ(memory[1]["part"], "weights Q5_K_M");
  EXPECT_EQ(memory[1]["bytes"], report["weights_bytes"]);
  EXPECT_EQ(spec["vconcat"][0]["layer"][0]["encoding"]["x"]["stack"], "zero");
  // Its bar stacks in the table's order (reserved, weights, cache, free), not by the parts' names.
  EXPECT_EQ(spec["vconcat"][0]["layer"][0]["encoding"]["order"]["field"], "table order");
  // The decode line at the page's context (4096) is the rate the page prints.
  bool found = false;
  for (const io::Json& row : spec["datasets"]["decode"]) {
    if (row["context"] == 4096 && row["format"] == "Q5_K_M") {
      EXPECT_DOUBLE_EQ(row["tok_per_s"].get<double>(), report["decode_tok_per_s"].get<double>());
      found = true;
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(spec["vconcat"][1]["layer"][0]["encoding"]["color"]["field"], "format");
}

TEST(VegaLite, ReportsMemoryAddsUpToTheDevicesMemoryWithParallelSequences) {
  const std::vector<std::string> args{"report", "--device", "galaxy-s24-ultra", "--model", "gemma-3-4b",
                                      "--parallel", "4", "--format"};
  std::vector<std::string> chart = args, json = args;
  chart.push_back("vega-lite");
  json.push_back("json");
  const io::Json spec = run_spec(chart);
  const io::Json device = run_spec(json)["inputs"]["device"];
  double sum = 0;
  std::string cache;
  for (const io::Json& row : spec["datasets"]["memory"]) {
    sum += row["bytes"].get<double>();
    if (row["part"].get<std::string>().starts_with("KV cache")) cache = row["part"];
  }
  EXPECT_EQ(cache, "KV cache f16 at 4096 x 4 sequences");
  // The parts (reserved, weights, buffers, four caches, free) fill the memory the line marks.
  EXPECT_NEAR(sum, spec["vconcat"][0]["layer"][1]["encoding"]["x"]["datum"].get<double>() * 1073741824.0, 5.0);
  EXPECT_NEAR(sum, device["memory_gib"].get<double>() * 1073741824.0, 5.0);
}

// The tables only charts draw are built only for a format that draws them.
TEST(VegaLite, ReportBuildsItsChartsOnlyForAFormatThatDrawsThem) {
  cli::ReportOptions o;
  o.device = "galaxy-s24-ultra";
  o.model = "gemma-3-4b";
  cli::CommonOptions common;
  common.format = "json";
  const io::Report table = cli::report(o, cli::Context(common));
  EXPECT_TRUE(table.charts.empty());
  EXPECT_TRUE(table.chart_tables.empty());
  common.format = "vega-lite";
  const io::Report drawn = cli::report(o, cli::Context(common));
  EXPECT_FALSE(drawn.charts.empty());
  EXPECT_FALSE(drawn.chart_tables.empty());
  EXPECT_EQ(table.results, drawn.results);
}

// The rows of a dataset whose `key` is `value`.
std::vector<io::Json> rows_where(const io::Json& rows, const std::string& key, const std::string& value) {
  std::vector<io::Json> out;
  for (const io::Json& row : rows) {
    if (row[key] == value) out.push_back(row);
  }
  return out;
}

ModelSpec model_profile(const std::string& name) {
  return io::load_model(io::find_profile("models", name, {}).value(), {}).value();
}

// A user's device known by its memory and, where given, its achieved prefill rate alone, as `phone.toml` in `dir`
// (every shipped device has a unit).
std::string bare_device(const testing_dir::ScratchDir& dir, const std::string& prefill = "") {
  const std::string path = (dir / "phone.toml").string();
  std::ofstream(path) << "memory_gib = 5.59\nreserved_gib = 0.5\nbandwidth_gbps = 68.3\nutilization = 0.728\n"
                         "per_token_overhead_ms = 5.14\n" << prefill;
  return path;
}

// decode's roofline: log-log, the [prefill] peak as the compute roof of a phone without [units], and a decode and
// a prefill point per format at the FLOPs and times decode prints.
TEST(VegaLite, DecodeDrawsTheRooflineOfEachFormatAgainstTheDevicesRoofs) {
  const testing_dir::ScratchDir dir("roofline_prefill_peak");
  const std::vector<std::string> args{"decode", "--device", bare_device(dir, "[prefill]\ntflops = 0.58\nefficiency = 1.0\n"),
                                      "--model", "gemma-3-4b", "--quant", "Q4_K_M,F16", "--context", "4096", "--format"};
  std::vector<std::string> chart = args, json = args;
  chart.push_back("vega-lite");
  json.push_back("json");
  const io::Json spec = run_spec(chart);
  const io::Json decode = run_spec(json);
  ASSERT_EQ(spec["vconcat"].size(), 2u);
  const io::Json& view = spec["vconcat"][1];
  EXPECT_EQ(view["title"], "roofline: decode and prefill against phone's 68.3 GB/s and its [prefill] peak "
                           "(the profile has no [units])");
  const io::Json& line = view["layer"][0];
  EXPECT_EQ(line["mark"]["type"], "line");
  EXPECT_EQ(line["encoding"]["x"]["scale"], io::Json({{"type", "log"}, {"base", 10}}));
  EXPECT_EQ(line["encoding"]["y"]["scale"], io::Json({{"type", "log"}, {"base", 10}}));
  EXPECT_EQ(line["encoding"]["y"]["title"], "GFLOP/s");
  const io::Json& rows = spec["datasets"]["roofline"];
  const double bandwidth = decode["inputs"]["device"]["bandwidth_gbps"].get<double>() * 1e9;
  const double peak = decode["inputs"]["device"]["prefill"]["tflops"].get<double>() * 1e12;
  // The roof: the bandwidth slope, flat from the ridge on.
  const std::vector<io::Json> roof = rows_where(rows, "series", fmt::format("roof: [prefill] {:.2f} TFLOP/s, 68.3 GB/s", peak / 1e12));
  ASSERT_EQ(roof.size(), 3u);
  EXPECT_DOUBLE_EQ(roof[0]["flops_per_s"].get<double>(), roof[0]["flop_per_byte"].get<double>() * bandwidth);
  EXPECT_DOUBLE_EQ(roof[1]["flop_per_byte"].get<double>(), peak / bandwidth);
  EXPECT_DOUBLE_EQ(roof[1]["flops_per_s"].get<double>(), peak);
  EXPECT_DOUBLE_EQ(roof[2]["flops_per_s"].get<double>(), peak);
  // Decode: a token's FLOPs at its modelled time, left of the ridge and under the roof.
  const ModelSpec model = model_profile("gemma-3-4b");
  for (std::size_t f = 0; f < 2; ++f) {
    const io::Json& format = decode["results"]["formats"][f];
    const std::string name = format["format"];
    const std::vector<io::Json> point = rows_where(rows, "series", "decode " + name);
    ASSERT_EQ(point.size(), 1u) << name;
    const double flops = decode_token_flops(model, 4096);
    EXPECT_NEAR(point[0]["flops_per_s"].get<double>(), flops / (format["ms_per_token"].get<double>() / 1e3),
                flops * 1e-9);
    EXPECT_LT(point[0]["flop_per_byte"].get<double>(), peak / bandwidth);
    EXPECT_LT(point[0]["flops_per_s"].get<double>(), point[0]["flop_per_byte"].get<double>() * bandwidth);
    // Prefill: the prompt's FLOPs over one micro-batch's weights, at the prefill rate decode prints.
    const std::vector<io::Json> prefill = rows_where(rows, "series", "prefill " + name);
    ASSERT_EQ(prefill.size(), 1u) << name;
    EXPECT_DOUBLE_EQ(prefill[0]["flop_per_byte"].get<double>(),
                     prefill_flops(model, 512) / format["weights_bytes"].get<double>());
    EXPECT_NEAR(prefill[0]["flops_per_s"].get<double>(), prefill_flops(model, 512) * format["prefill_tok_per_s"].get<double>() / 512,
                1e3);
  }
}

TEST(VegaLite, RooflineDrawsTheBandwidthRoofAloneAndSaysWhyWithoutComputePeaks) {
  const testing_dir::ScratchDir dir("roofline_no_peaks");
  const io::Json spec = run_spec({"decode", "--device", bare_device(dir), "--model", "gemma-3-4b", "--quant", "Q4_K_M",
                                  "--format", "vega-lite"});
  const std::string title = spec["vconcat"][1]["title"];
  EXPECT_TRUE(title.ends_with("no compute roof: the profile has no [units] or [prefill]")) << title;
  const io::Json& rows = spec["datasets"]["roofline"];
  ASSERT_EQ(rows.size(), 3u);  // the bandwidth roof's two ends and the decode point: no prefill estimate
  EXPECT_TRUE(rows[0]["series"].get<std::string>().starts_with("roof: ")) << rows[0];
  EXPECT_EQ(rows[2]["series"], "decode Q4_K_M");
}

// On a device with [units], report places the layer as place does and routes its mix as route does.
TEST(VegaLite, ReportDrawsThePlacementAndTheRoutingShare) {
  const io::Json spec = run_spec({"report", "--device", "phone8g", "--model", "ref-8b", "--cloud", "ref-private,ref-public",
                                  "--format", "vega-lite"});
  const io::Json place = run_spec({"place", "--device", "phone8g", "--model", "ref-8b", "--format", "vega-lite"});
  const io::Json route = run_spec({"route", "--device", "phone8g", "--model", "ref-8b", "--cloud", "ref-private,ref-public",
                                   "--requests", "typical-mix", "--format", "json"});
  ASSERT_EQ(spec["vconcat"].size(), 5u);
  EXPECT_EQ(spec["vconcat"][3]["title"], place["vconcat"][0]["title"]);
  EXPECT_EQ(spec["datasets"]["timeline"], place["datasets"]["timeline"]);
  const std::string roofline = spec["vconcat"][2]["title"];
  EXPECT_TRUE(roofline.ends_with("and the peaks of its [units]")) << roofline;
  const io::Json& share = spec["datasets"]["routing"];
  const io::Json& decisions = route["results"]["request_count"];
  ASSERT_EQ(share.size(), 3u);
  EXPECT_EQ(share[0]["destination"], "device");
  EXPECT_EQ(share[0]["requests"], route["results"]["to_device"]);
  EXPECT_EQ(share[1]["destination"], "ref-private");
  EXPECT_EQ(share[2]["destination"], "ref-public");
  EXPECT_EQ(share[0]["requests"].get<std::uint64_t>() + share[1]["requests"].get<std::uint64_t>() +
                share[2]["requests"].get<std::uint64_t>(),
            decisions.get<std::uint64_t>());
  EXPECT_DOUBLE_EQ(share[1]["request_share"].get<double>(),
                   share[1]["requests"].get<double>() / decisions.get<double>());
  const io::Json& bars = spec["vconcat"][4];
  EXPECT_EQ(bars["title"], fmt::format("where the {} requests of typical-mix go", decisions.get<std::uint64_t>()));
  EXPECT_EQ(bars["layer"][0]["encoding"]["y"]["title"], "requests %");
}

// route --trace draws the device's queue an arrival found, per bin: the trace of the hand-worked simulator test
// (route_test.cpp, TraceByHand): a arrives to an idle device, b finds a running, c finds a and b and goes to the
// cloud, d finds the device idle again. Arrivals up to 36 s: 256 bins of 0.25 s.
TEST(VegaLite, RouteTraceDrawsTheQueueInRequests) {
  const std::string data = std::string(EDGEPLAN_SOURCE_DIR) + "/tests/data/";
  const io::Json spec = run_spec({"route", "--device", data + "route-device.toml", "--prefill-tok-per-s", "180",
                                  "--decode-tok-per-s", "13", "--cloud", "ref-private,ref-public", "--cloud-ratio", "100",
                                  "--trace", data + "route-trace-small.csv", "--format", "vega-lite"});
  EXPECT_EQ(spec["datasets"]["trace_queue"],
            io::Json::parse(R"([{"arrival_s": 0.0, "queue_requests": 0}, {"arrival_s": 2.0, "queue_requests": 1},
                                {"arrival_s": 3.0, "queue_requests": 2}, {"arrival_s": 36.0, "queue_requests": 0}])"));
  ASSERT_EQ(spec["vconcat"].size(), 4u);
  const io::Json& queue = spec["vconcat"][1];
  EXPECT_EQ(queue["title"], "longest queue for the device, in requests (0.25 s bins)");
  EXPECT_EQ(queue["layer"][0]["encoding"]["y"]["title"], "longest queue (requests)");
  EXPECT_EQ(queue["layer"][0]["encoding"]["y"]["type"], "quantitative");
}

TEST(VegaLite, FitDrawsTheParetoFrontWithSizeAsArea) {
  const io::Json spec = run_spec({"fit", "--device", "galaxy-s24-ultra", "--context", "8k", "--format", "vega-lite"});
  const io::Json& points = spec["vconcat"][0]["layer"][0];
  EXPECT_EQ(points["mark"]["type"], "point");
  EXPECT_EQ(points["encoding"]["x"]["field"], "quality (B)");
  EXPECT_EQ(points["encoding"]["y"]["field"], "tok/s");
  EXPECT_EQ(points["encoding"]["size"]["field"], "weights (GB)");
  EXPECT_EQ(points["encoding"]["color"]["field"], "pareto");
  EXPECT_FALSE(spec["datasets"]["fits"].empty());
}

TEST(VegaLite, SweepDrawsTheSweptKeyAgainstTheFigure) {
  const io::Json spec = run_spec({"decode", "--device", "galaxy-s24-ultra", "--model", "gemma-3-4b", "--sweep",
                                  "context=1024,4096,16384", "--format", "vega-lite"});
  const io::Json& view = spec["vconcat"][0];
  EXPECT_EQ(view["title"], "tok/s against context");
  EXPECT_EQ(view["layer"][0]["mark"]["type"], "line");
  EXPECT_EQ(view["layer"][0]["encoding"]["x"]["field"], "context");
  EXPECT_EQ(view["layer"][0]["encoding"]["x"]["type"], "quantitative");
  EXPECT_EQ(view["layer"][0]["encoding"]["color"]["field"], "format");
  const io::Json& rows = spec["datasets"]["sweep"];
  EXPECT_EQ(rows.front()["context"], 1024);
  EXPECT_EQ(rows.back()["context"], 16384);
  // A key with a dot is escaped, so Vega-Lite does not read it as a nested field.
  const io::Json bw = run_spec({"decode", "--device", "galaxy-s24-ultra", "--model", "gemma-3-4b", "--sweep",
                                "device.bandwidth_gbps=50,100", "--format", "vega-lite"});
  EXPECT_EQ(bw["vconcat"][0]["layer"][0]["encoding"]["x"]["field"], "device\\.bandwidth_gbps");
  EXPECT_EQ(bw["vconcat"][0]["layer"][0]["encoding"]["x"]["title"], "device.bandwidth_gbps");
}

TEST(VegaLite, ACommandWithoutChartsIsAUsageErrorNamingThoseWithCharts) {
  const testing_cli::CliRun run = run_cli({"profiles", "--format", "vega-lite"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.out.empty());
  EXPECT_NE(run.err.find("--format vega-lite: this profiles output has no chart; charts are drawn by decode, kv"),
            std::string::npos)
      << run.err;
}

// html inlines the scripts of the build's EDGEPLAN_VEGA_DIR; a build without them says how to get them.
TEST(Html, PageHoldsTheTablesTheSpecAndTheScriptsOrSaysHowToBuildThemIn) {
  const testing_cli::CliRun run =
      run_cli({"kv", "--device", "galaxy-s24-ultra", "--model", "gemma-3-4b", "--format", "html"});
  if (io::embedded_scripts().empty()) {
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_TRUE(run.out.empty());
    EXPECT_NE(run.err.find("--format html: this edgeplan was built without the Vega scripts the page inlines: run "
                           "`npm install --prefix DIR vega@5 vega-lite@5 vega-embed@6`, then `cmake -B BUILD "
                           "-DEDGEPLAN_VEGA_DIR=DIR`"),
              std::string::npos)
        << run.err;
    return;
  }
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(run.out.find("<h1>kv: gemma-3-4b (Q4_K_M) on galaxy-s24-ultra</h1>"), std::string::npos);
  EXPECT_NE(run.out.find("<th>max context (tokens)</th>"), std::string::npos);
  EXPECT_NE(run.out.find("<td class=\"n\">109,824</td>"), std::string::npos);  // the table view's text
  EXPECT_NE(run.out.find("\"$schema\": \"https://vega.github.io/schema/vega-lite/v5.json\""), std::string::npos);
  EXPECT_NE(run.out.find("/* vega-lite.min.js: its license is at the end of the page */"), std::string::npos);
  EXPECT_NE(run.out.find("<h3>vega-embed (BSD-3-Clause)</h3>"), std::string::npos);
}

}  // namespace
}  // namespace edgeplan
