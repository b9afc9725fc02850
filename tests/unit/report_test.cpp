#include "edgeplan/io/report.hpp"

#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/json.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
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
  Table t{"rows",
          {{"name", "name"}, counted({"size (GB)", "size_bytes", 2, false, 1e9}), {"count", "count", 0, true}, {"ok", "ok"}},
          {}};
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

// Names are data, never code: CSV fields a spreadsheet would run as formulas (OWASP's =, +, -, @) are quoted after a
// single quote; Markdown shows '<' as &lt; (GitHub passes raw HTML through); the HTML page's JSON data script
// holds no '<' at all, so no name ("<!--<script>") keeps it from closing.
TEST(Report, NamesAreNeitherFormulasNorMarkup) {
  Report r;
  r.command = "demo";
  r.title = "demo: <b>title</b>";
  Table t{"rows", {{"name", "name"}, {"n", "n"}}, {}};
  for (const char* name : {"=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "a-b", "<!--<script>"}) {
    t.add({std::string(name), 1.0});
  }
  r.tables.push_back(t);
  r.charts.push_back(Chart{"chart", "rows", "bar", "name", "n"});
  EXPECT_EQ(render(r, format("csv")),
            "name,n\n\"'=HYPERLINK(\"\"http://x\"\")\",1\n\"'+1\",1\n\"'-2\",1\n\"'@SUM(A1)\",1\na-b,1\n<!--<script>,1\n");
  const std::string md = render(r, format("md"));
  EXPECT_EQ(md.find('<'), std::string::npos) << md;
  EXPECT_NE(md.find("| &lt;!--&lt;script> |"), std::string::npos) << md;
  const std::string html = render(r, format("html"));
  const std::string open = "<script type=\"application/json\" id=\"spec\">";
  const std::size_t from = html.find(open) + open.size(), to = html.find("</script>", from);
  ASSERT_NE(to, std::string::npos);
  EXPECT_EQ(html.substr(from, to - from).find('<'), std::string::npos);
  EXPECT_NE(html.substr(from, to - from).find("\\u003c!--\\u003cscript>"), std::string::npos);
  EXPECT_EQ(Json::parse(html.substr(from, to - from))["datasets"]["rows"][5]["name"], "<!--<script>");
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

// A number is a JSON and CSV integer because it is declared a count (Column::count, Node::count), never because
// of its key: a key that reads like a count keeps its fraction unless declared one, and a declared count with
// any key is an integer, a computed fraction rounded once to the nearest.
TEST(Report, CountsAreTypedNotNamed) {
  Report r;
  r.command = "demo";
  r.inputs["model"]["params"] = 8.5;               // named like a count, not declared one
  r.inputs["model"]["widgets"] = Node::count(7.6);  // declared, with an odd name
  r.results["budget_bytes"] = 2546941132.8;
  r.results["budget"] = Node::count(2546941132.8);
  r.results["huge"] = Node::count(1e300);  // not countable: stays a number
  r.results["weights"] = Node::count(std::uint64_t{5184000000});  // already whole
  Table t{"rows", {{"name", "name"}, {"weights (GB)", "weights_bytes", 2, false, 1e9},
                   counted({"size (GB)", "size", 2, false, 1e9}), counted({"max context", "max_ctx", 0, true})}, {}};
  t.add({std::string("a"), 5184000000.5, 5184000000.4, 19431.0});
  r.tables.push_back(t);

  const Json j = Json::parse(render(r, format("json")));
  EXPECT_TRUE(j["inputs"]["model"]["params"].is_number_float());
  EXPECT_EQ(j["inputs"]["model"]["params"], 8.5);
  EXPECT_TRUE(j["inputs"]["model"]["widgets"].is_number_integer());
  EXPECT_EQ(j["inputs"]["model"]["widgets"], 8);
  EXPECT_TRUE(j["results"]["budget_bytes"].is_number_float());
  EXPECT_EQ(j["results"]["budget"], 2546941133);
  EXPECT_TRUE(j["results"]["budget"].is_number_integer());
  EXPECT_TRUE(j["results"]["huge"].is_number_float());
  EXPECT_EQ(j["results"]["weights"], 5184000000);
  const Json& row = j["results"]["rows"][0];
  EXPECT_TRUE(row["weights_bytes"].is_number_float());
  EXPECT_EQ(row["weights_bytes"], 5184000000.5);
  EXPECT_TRUE(row["size"].is_number_integer());
  EXPECT_EQ(row["size"], 5184000000);
  EXPECT_TRUE(row["max_ctx"].is_number_integer());
  EXPECT_EQ(row["max_ctx"], 19431);

  // CSV writes the same cells; the table view is the same whether a column counts or not.
  EXPECT_EQ(render(r, format("csv")), "name,weights_bytes,size,max_ctx\na,5184000000.5,5184000000,19431\n");
  Report plain = r;
  for (Column& c : plain.tables.front().columns) c.count = false;
  EXPECT_EQ(render(plain, format("table")), render(r, format("table")));

  EXPECT_EQ(nearest_count(2546941132.8), 2546941133);
  // As std::llround rounds: halves away from zero, and the double just below a half down.
  for (double v : {2.5, -2.5, 0.5, -0.5, 0.49999999999999994, -0.49999999999999994, 4503599627370495.5, -0.0, 9e18}) {
    EXPECT_EQ(nearest_count(v), std::llround(v)) << v;
  }
  EXPECT_EQ(output_count(2546941132.8, counted({"b", "b"})), std::int64_t{2546941133});
  EXPECT_EQ(output_count(2.5, Column{"b", "b"}), std::nullopt);
  EXPECT_EQ(output_count(1e300, counted({"b", "b"})), std::nullopt);  // not countable
  EXPECT_EQ(output_cell(2546941132.8, counted({"b", "b"})), Cell{std::int64_t{2546941133}});
  EXPECT_EQ(output_cell(2.5, Column{"b", "b"}), Cell{2.5});
  EXPECT_EQ(output_cell(Cell{}, counted({"b", "b"})), Cell{});
  EXPECT_EQ(output_cell(std::string("x"), counted({"b", "b"})), Cell{std::string("x")});
}

// Precision below zero: the shortest text that reads back as the number.
TEST(Report, ShortestPrecision) {
  EXPECT_EQ(format_cell_text(9.236558750046637, Column{"v", "v", -1}), "9.236558750046637");
  EXPECT_EQ(format_cell_text(9.236558750046637, Column{"v", "v"}), "9.24");
}

}  // namespace
}  // namespace edgeplan::io
