// The vega-lite format (io/render/vega_lite.cpp): a report's charts as a Vega-Lite v5 specification with the
// data inline, read back as JSON: marks, fields and their types, the shown units, the rows, the reference lines;
// the charts the commands declare, with the figures their other formats print; a sweep's chart; and the usage
// error for a command without any.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cli_run.hpp"
#include "edgeplan/io/embedded.hpp"
#include "edgeplan/io/render/renderer.hpp"

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
  c.x_log = true;
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
  ASSERT_EQ(spec["vconcat"].size(), 2u);
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
