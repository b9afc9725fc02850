#include "edgeplan/io/report.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace edgeplan::io {
namespace {

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
  EXPECT_EQ(render(sample(), Format::table),
            "demo: title\n\nname  size (GB)   count  ok\na,b        5.18  19,431  yes\nc            --       7  no\n\nnote\n");
}

TEST(Report, Csv) {
  EXPECT_EQ(render(sample(), Format::csv), "name,size_bytes,count,ok\n\"a,b\",5184000000,19431,true\nc,,7,false\n");
}

TEST(Report, Json) {
  const Json j = Json::parse(render(sample(), Format::json));
  EXPECT_EQ(j["schema"], "edgeplan/1");
  EXPECT_EQ(j["command"], "demo");
  EXPECT_EQ(j["inputs"]["device"], "phone8g");
  EXPECT_EQ(j["results"]["total"], 2.5);
  EXPECT_EQ(j["results"]["rows"][0]["size_bytes"], 5.184e9);
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
  for (Format f : {Format::table, Format::json, Format::csv, Format::md}) {
    std::ostringstream out;
    render_rows(r, RowSource{items, [&] { return rows_of; }}, f, out);
    EXPECT_EQ(out.str(), render(full, f)) << "format " << static_cast<int>(f);
  }
  for (Format f : {Format::table, Format::json, Format::csv, Format::md}) {  // and with no rows at all
    std::ostringstream out;
    render_rows(r, RowSource{1, [] { return [](std::uint64_t, std::vector<std::vector<Cell>>&) {}; }}, f, out);
    EXPECT_EQ(out.str(), render(r, f)) << "format " << static_cast<int>(f);
  }
}

}  // namespace
}  // namespace edgeplan::io
