// A computed result, ready to print: compute first, render second. Every subcommand builds one Report;
// the renderers (io/render/renderer.hpp, one per format) turn it into an aligned table for people, JSON for
// scripts (schema tag, tool version, resolved inputs, results), CSV (the first table) or Markdown (for
// pull-request comments). --format changes the printer, never the computation.
// JSON layout: docs/json.md. Text from outside is made safe on the way out (io/text.hpp): the table, CSV and
// Markdown views escape control characters and bytes that are not UTF-8; JSON writes those bytes as U+FFFD and
// warns on stderr.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "edgeplan/io/node.hpp"

namespace edgeplan::io {

inline constexpr const char* kJsonSchema = "edgeplan/2";
// The tool's version (CMakeLists.txt, project()), printed by --version and beside the schema tag in JSON.
std::string_view version();

// A table cell: empty (printed "--"), text, number, whole number or yes/no.
using Cell = std::variant<std::monostate, std::string, double, std::int64_t, bool>;

struct Column {
  std::string title;      // header for people, unit included: "weights (GB)"
  std::string key;        // JSON / CSV name, unit included: "weights_gb"
  int precision = 2;      // decimals for numbers in the table view (CSV and JSON keep full precision);
                          // negative: the shortest text that reads back as the number
  bool thousands = false; // group whole numbers as 19,431 in the table view
  double scale = 1;       // table view shows value / scale (for example bytes shown as GB)
  bool count = false;     // its numbers count whole things (bytes, parameters, tokens): JSON and CSV write them as
                          // integers, a computed fraction rounded to the nearest (nearest_count); the table view
                          // still shows value / scale at `precision`. Declared, never read from the key (counted)
};

// `c` declared a count column (Column::count): io::counted({"bytes/token", "bytes_per_token", 0}).
Column counted(Column c);

struct Table {
  std::string name;              // JSON key of the rows in results
  std::vector<Column> columns;   // the first column identifies the row (used by --require name[id])
                                 // the renderers stream the rows of a report's first table
  std::vector<std::vector<Cell>> rows;

  void add(std::vector<Cell> row) { rows.push_back(std::move(row)); }
};

// A reference line across a chart: the device's memory budget, the model's trained context.
struct ChartRule {
  char axis = 'y';    // the line crosses this axis ('x' or 'y') at `value`
  double value = 0;   // in the unit of the axis's column (bytes, not GB): drawn at value / Column::scale
  std::string label;  // "budget 10.83 GiB"
};

// A chart of one table, as data (docs/charts.md): which columns go where and how they are marked. The drawing
// formats (vega-lite, html) turn it into a Vega-Lite view; the others leave it out.
struct Chart {
  std::string title{};
  std::string table{};  // the Table::name whose rows it draws: one of the tables, else of the chart tables
  std::string mark{};   // a Vega-Lite mark: "bar", "line", "area", "point"
  std::string x{};      // column keys (a column with a scale is drawn in its shown unit, titled as the table titles it)
  std::string y{};
  std::string x2{};     // with x: the end of a bar along x (a timeline); empty: none
  std::string color{};  // a column whose values colour (and, with stack, stack) the marks; empty: one colour
  std::string size{};   // a column the marks' area follows (points); empty: one size
  std::string y_low{};  // with y_high: columns bounding each y (its interval), drawn as a band under the marks;
  std::string y_high{}; // empty: none
  bool stack = false;   // bars and areas of the colours stacked on each other
  int x_log = 0;        // x on a log scale of this base (2: contexts; 10: operational intensity); 0: linear
  int y_log = 0;        // the same for y
  std::vector<ChartRule> rules{};
};

struct Report {
  std::string command;             // "decode"
  std::string title;               // first line of the table view
  Node inputs = Node::object();    // resolved inputs: profile names, origins and values used
  Node results = Node::object();   // scalar results; the tables are added under their names
  std::vector<std::string> header; // lines printed between title and tables
  std::vector<Table> tables;       // the first is the CSV output
  std::vector<std::string> notes;  // lines printed after the tables
  std::vector<std::string> failures;  // requirement failures the command found itself (check): exit code 1
  std::vector<std::string> errors;    // figures it could not evaluate (check): printed after the output, exit code 2
  std::vector<Chart> charts;       // the pictures of the tables (--format vega-lite, html); empty: none
  std::vector<Table> chart_tables; // tables only the charts draw (a memory stack over contexts): the other
                                   // formats leave them out
  std::string verbatim;            // when set, printed as is in every format (a file, e.g. place --emit-graph)
};

struct Format;  // io/render/renderer.hpp

std::string format_cell_text(const Cell& c, const Column& col);
// A run of decimal digits grouped by thousands, as the table view shows whole numbers: "19431" -> "19,431".
std::string group_digits(std::string_view digits);
// One CSV field: text with control characters escaped (io/text.hpp), quoted when it holds a comma or quote;
// numbers in shortest round-trip form.
std::string csv_field(const Cell& c);
// The whole report in format f: the renderer's streamed path with the first table's rows as one block.
std::string render(const Report& r, const Format& f);

// Rows made on demand, for tables too large to hold at once (a sweep of 10^6 combinations). `worker` is called
// once per thread per block and returns a function that appends the rows of one item to `rows`; items are
// numbered 0 .. items-1 and their rows appear in that order.
struct RowSource {
  std::uint64_t items = 0;
  std::function<std::function<void(std::uint64_t item, std::vector<std::vector<Cell>>& rows)>()> worker;
};

// An empty row for a RowSource's worker to fill: with the storage of a row of a block this thread made and
// rendered before when there is one (render_rows hands each block's rows back once it has formatted them, until
// the sweep ends), so a sweep does not allocate every row anew.
std::vector<Cell> recycled_row();

// Writes what render(head, f) would if head's only table held the rows of `source`: the rows are made and
// formatted on all cores a block at a time, so memory stays bounded whatever the number of rows.
void render_rows(const Report& head, const RowSource& source, const Format& f, std::ostream& out);
// results with the tables folded in as arrays of objects (what JSON prints and --require reads), the numbers of
// count columns (Column::count) as integers.
Node full_results(const Report& r);

}  // namespace edgeplan::io
