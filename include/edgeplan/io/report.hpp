// A computed result, ready to print: compute first, render second. Every subcommand builds one Report;
// the renderers turn it into an aligned table for people, JSON for scripts (schema version, resolved
// inputs, results) or CSV (the first table). --format changes the printer, never the computation.
// JSON layout: docs/json.md.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace edgeplan::io {

using Json = nlohmann::ordered_json;

inline constexpr const char* kJsonSchema = "edgeplan/1";

// A table cell: empty (printed "--"), text, number, whole number or yes/no.
using Cell = std::variant<std::monostate, std::string, double, std::int64_t, bool>;

struct Column {
  std::string title;      // header for people, unit included: "weights (GB)"
  std::string key;        // JSON / CSV name, unit included: "weights_gb"
  int precision = 2;      // decimals for numbers in the table view (CSV and JSON keep full precision)
  bool thousands = false; // group whole numbers as 19,431 in the table view
  double scale = 1;       // table view shows value / scale (for example bytes shown as GB)
};

struct Table {
  std::string name;              // JSON key of the rows in results
  std::vector<Column> columns;   // the first column identifies the row (used by --require name[id])
  std::vector<std::vector<Cell>> rows;

  void add(std::vector<Cell> row) { rows.push_back(std::move(row)); }
};

struct Report {
  std::string command;             // "decode"
  std::string title;               // first line of the table view
  Json inputs = Json::object();    // resolved inputs: profile names, origins and values used
  Json results = Json::object();   // scalar results; the tables are added under their names
  std::vector<std::string> header; // lines printed between title and tables
  std::vector<Table> tables;       // the first is the CSV output
  std::vector<std::string> notes;  // lines printed after the tables
  std::string verbatim;            // when set, printed as is in every format (a file, e.g. place --emit-graph)
};

enum class Format { table, json, csv };

std::string format_cell_text(const Cell& c, const Column& col);
// One CSV field: text quoted when it holds a comma, quote or newline; numbers in shortest round-trip form.
std::string csv_field(const Cell& c);
std::string render(const Report& r, Format f);
// results with the tables folded in as arrays of objects (what JSON prints and --require reads).
Json full_results(const Report& r);

}  // namespace edgeplan::io
