#include "edgeplan/io/report.hpp"

#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/json.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace edgeplan::io {
namespace {

const Format& format(std::string_view name) { return *find_format(name); }

Report sample() {
  Report r;
  r.command = "demo";
  r.title = "demo: title";
  r.inputs["device"] = "phone8g";
  r.results["total"] = 2.5;
  Table t{"rows", {{"name", "name"}, {"size (GB)", "size_bytes", 2, false, 1e9}, {"count", "count", 0, true}, {"ok", "ok"}}, {}};
  t.add({std::string("a,b"), 5.184e9, std::int64_t{19431}, true});
  t.add({std::string("c"), Cell{}, std::int64_t{7}, false});
  r.tables.push_back(t);
  r.notes.push_back("note");
  return r;
}

TEST(Report, Table) {
  EXPECT_EQ(render(sample(), format("table")),
            "demo: title\n\nname  size (GB)   count  ok\na,b        5.18  19,431  yes\nc            --       7  no\n\nnote\n");
}

TEST(Report, Csv) {
  EXPECT_EQ(render(sample(), format("csv")), "name,size_bytes,count,ok\n\"a,b\",5184000000,19431,true\nc,,7,false\n");
}

TEST(Report, Json) {
  const Json j = Json::parse(render(sample(), format("json")));
  EXPECT_EQ(j["schema"], "edgeplan/2");
  EXPECT_EQ(j["command"], "demo");
  EXPECT_EQ(j["inputs"]["device"], "phone8g");
  EXPECT_EQ(j["results"]["total"], 2.5);
  EXPECT_EQ(j["version"], std::string(version()));
  EXPECT_TRUE(j["results"]["rows"][0]["size_bytes"].is_number_integer());  // a byte count: an integer, not 5184000000.0
  EXPECT_EQ(j["results"]["rows"][0]["size_bytes"], 5184000000);
  EXPECT_TRUE(j["results"]["rows"][1]["size_bytes"].is_null());
}

// render_rows writes what render writes for the same rows, in every format, also when the rows span many
// blocks and threads and some items have no rows.
TEST(Report, RenderRowsEqualsRender) {
  Report r = sample();
  r.tables.front().rows.clear();
  const std::uint64_t items = 40'000;
  auto rows_of = [](std::uint64_t i, std::vector<std::vector<Cell>>& rows) {
    for (std::uint64_t k = 0; k < i % 3; ++k) {
      rows.push_back({std::string(i % 7 ? "x" : "x|y"), static_cast<double>(i) * 1.25e7, static_cast<std::int64_t>(i * k),
                      i % 2 == 0});
    }
  };
  Report full = r;
  for (std::uint64_t i = 0; i < items; ++i) rows_of(i, full.tables.front().rows);
  for (const Format& f : formats()) {
    std::ostringstream out;
    render_rows(r, RowSource{items, [&] { return rows_of; }}, f, out);
    EXPECT_EQ(out.str(), render(full, f)) << "format " << f.name;
  }
  for (const Format& f : formats()) {  // and with no rows at all
    std::ostringstream out;
    render_rows(r, RowSource{1, [] { return [](std::uint64_t, std::vector<std::vector<Cell>>&) {}; }}, f, out);
    EXPECT_EQ(out.str(), render(r, f)) << "format " << f.name;
  }
}

// The streamed table is the first; the others, the scalars and the notes come around it whole.
TEST(Report, SecondTableAfterTheStreamedRows) {
  Report r = sample();
  r.tables.push_back(Table{"more", {{"what", "what"}, {"n", "n"}}, {{std::string("[]"), 1.5}}});
  EXPECT_EQ(render(r, format("table")), "demo: title\n\nname  size (GB)   count  ok\na,b        5.18  19,431  yes\n"
                                        "c            --       7  no\n\nwhat     n\n[]    1.50\n\nnote\n");
  const Json j = Json::parse(render(r, format("json")));
  EXPECT_EQ(j["results"]["rows"].size(), 2u);
  EXPECT_EQ(j["results"]["more"][0]["what"], "[]");
  EXPECT_EQ(render(r, format("csv")), render(sample(), format("csv")));
  Report head = r;
  head.tables.front().rows.clear();
  const auto rows = sample().tables.front().rows;
  for (const Format& f : formats()) {
    std::ostringstream out;
    render_rows(head, RowSource{rows.size(), [&] { return [&](std::uint64_t i, std::vector<std::vector<Cell>>& made) {
                                                   made.push_back(rows[i]);
                                                 }; }},
                f, out);
    EXPECT_EQ(out.str(), render(r, f)) << "format " << f.name;
  }
}

// --format parsing, its help and docs/json.md read one table.
TEST(Report, Formats) {
  EXPECT_EQ(format_names(), "table, json, csv, md, vega-lite or html");
  EXPECT_EQ(find_format("xml"), nullptr);
  EXPECT_EQ(formats().front().name, "table");
}

TEST(Report, CountsWhole) {
  for (const char* key : {"weights_bytes", "bytes", "budget_bytes", "bytes_per_token", "kv_bytes_per_token_f16", "params",
                          "active_params", "max_context"}) {
    EXPECT_TRUE(counts_whole(key)) << key;
  }
  for (const char* key : {"tok_per_s", "budget_gib", "expected_tokens", "adapter_mib", "read_gbps"}) {
    EXPECT_FALSE(counts_whole(key)) << key;
  }
  EXPECT_EQ(output_cell(2546941132.8, true), Cell{std::int64_t{2546941133}});
  EXPECT_EQ(output_cell(2.5, false), Cell{2.5});
  EXPECT_EQ(output_cell(Cell{}, true), Cell{});
}

// Precision below zero: the shortest text that reads back as the number.
TEST(Report, ShortestPrecision) {
  EXPECT_EQ(format_cell_text(9.236558750046637, Column{"v", "v", -1}), "9.236558750046637");
  EXPECT_EQ(format_cell_text(9.236558750046637, Column{"v", "v"}), "9.24");
}

}  // namespace
}  // namespace edgeplan::io
