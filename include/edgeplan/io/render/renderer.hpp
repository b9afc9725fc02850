// One renderer per output format, behind one interface that streams rows, and the table of formats that
// --format, its help text and docs/json.md derive from. A renderer is made for a document (io/report.hpp)
// whose first table's rows it is then given in blocks: begin() writes what comes before those rows (title,
// header, column titles, the JSON envelope), rows() formats a block, end() writes the rest (the other tables,
// the notes). A whole document is the same path with one block (io::render); a sweep gives blocks made on all
// cores (io::render_rows). Adding a format = one src/io/render/X.cpp implementing Renderer and one row in
// kFormats (src/io/render/formats.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/io/report.hpp"

namespace edgeplan::io {

using Row = std::vector<Cell>;

class Renderer {
 public:
  virtual ~Renderer() = default;
  // Whether measure() must see every row before begin() (the table view sizes its columns first).
  virtual bool measures() const { return false; }
  // Sees a block of rows before begin(); called on several threads at once, `worker` < the workers it was made for.
  virtual void measure(unsigned /*worker*/, std::span<const Row> /*block*/) {}
  // Writes what comes before the first table's rows.
  virtual void begin(std::ostream& out) = 0;
  // Appends the text of a block of rows to `text`; called on several threads at once, as measure().
  virtual void rows(unsigned worker, std::span<const Row> block, std::string& text) = 0;
  // Writes the text of one block; called once per block, in block order, on one thread at a time.
  virtual void write(std::ostream& out, const std::string& text) { out << text; }
  // Writes what comes after the first table's rows.
  virtual void end(std::ostream& out) = 0;
};

// A renderer for `head`, whose first table's rows come through rows() (head's own rows of that table are not
// read); `workers`: how many threads may call measure() and rows() at once.
using RendererFactory = std::unique_ptr<Renderer> (*)(const Report& head, unsigned workers);

struct Format {
  std::string_view name;         // --format NAME
  std::string_view description;  // for --help and docs/json.md
  RendererFactory make;
  bool draws = false;            // prints the report's charts: a report without any is a usage error
  std::string (*unavailable)() = nullptr;  // why this build cannot print it (empty: it can); nullptr: it always can
};

// Every format, in the order --help lists them (the first is the default).
std::span<const Format> formats();
// The format called `name`; nullptr when there is none.
const Format* find_format(std::string_view name);
// "table, json, csv or md": the names, for help texts and errors.
std::string format_names();

// The cell as JSON and CSV write it under `col`: a number of a count column (Column::count) made the nearest
// whole number (nearest_count); any other cell as it is.
Cell output_cell(const Cell& c, const Column& col);
// That whole number when output_cell makes one, else nullopt (the cell is written as it is): for renderers that
// write a count without making a cell of it (inline: the CSV renderer asks it of every cell).
inline std::optional<std::int64_t> output_count(const Cell& c, const Column& col) {
  const double* v = std::get_if<double>(&c);
  if (!col.count || !v || !countable(*v)) return std::nullopt;
  return nearest_count(*v);
}
// The document value of a cell.
Node cell_node(const Cell& c);
// Whether a cell holds a number (a double or a whole number): right-aligned in tables, quantitative in charts.
bool is_number(const Cell& c);

}  // namespace edgeplan::io
