#include "edgeplan/io/report.hpp"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "edgeplan/util/parallel.hpp"
#include "edgeplan/io/json.hpp"
#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/text.hpp"

namespace edgeplan::io {
namespace {

std::string group_thousands(std::int64_t v) {
  const std::string digits = std::to_string(v < 0 ? -v : v);
  return v < 0 ? "-" + group_digits(digits) : group_digits(digits);
}

// Items per block: enough to keep a thread busy between its turns to write, few enough that the block's rows stay
// in the cache from being made to being formatted and recycled (8,192 kv combinations of eleven rows were 28 MB,
// and took a third longer).
constexpr std::uint64_t kBlockItems = 512;

// The rows of this thread's last block, emptied, for recycled_row (for_each_block fills and releases it).
thread_local std::vector<std::vector<Cell>> spare_rows;

// Empties `rows`, keeping each row's storage in spare_rows.
void recycle(std::vector<std::vector<Cell>>& rows) {
  for (std::vector<Cell>& row : rows) {
    row.clear();
    spare_rows.push_back(std::move(row));
  }
  rows.clear();
}

// Makes the rows of `source` on all cores: worker w takes blocks w, w + workers, ... and each(w, rows, text)
// appends the block's rows to its text; `write` gets the blocks' texts in block order (the workers take turns,
// so the output is the same whatever the number of threads).
template <class Each, class Write>
void for_each_block(const RowSource& source, unsigned workers, Each each, Write write) {
  const std::uint64_t blocks = (source.items + kBlockItems - 1) / kBlockItems;
  std::mutex mutex;
  std::condition_variable turn;
  std::uint64_t next = 0;  // the block to write next
  bool failed = false;     // a worker threw: the others stop instead of waiting for its turn
  util::parallel_for(workers, [&](unsigned w, std::uint64_t, std::uint64_t) {
    try {
      auto rows_of = source.worker();
      std::vector<std::vector<Cell>> rows;
      std::string text;
      // The spare rows go when this worker is done (the thread may be the caller's, which goes on).
      const struct Release {
        ~Release() { std::vector<std::vector<Cell>>().swap(spare_rows); }
      } release;
      for (std::uint64_t b = w; b < blocks; b += workers) {
        text.clear();
        recycle(rows);
        for (std::uint64_t i = b * kBlockItems; i < std::min(source.items, (b + 1) * kBlockItems); ++i) rows_of(i, rows);
        each(w, rows, text);
        std::unique_lock lock(mutex);
        turn.wait(lock, [&] { return next == b || failed; });
        if (failed) return;
        write(text);
        ++next;
        turn.notify_all();
      }
    } catch (...) {
      const std::lock_guard lock(mutex);
      failed = true;
      turn.notify_all();
      throw;
    }
  });
}

}  // namespace

std::vector<Cell> recycled_row() {
  if (spare_rows.empty()) return {};
  std::vector<Cell> row = std::move(spare_rows.back());
  spare_rows.pop_back();
  return row;
}

std::string_view version() { return EDGEPLAN_VERSION; }

Column counted(Column c) {
  c.count = true;
  return c;
}

Cell output_cell(const Cell& c, const Column& col) {
  const std::optional<std::int64_t> count = output_count(c, col);
  return count ? Cell(*count) : c;
}

Json row_json(const std::vector<Cell>& row, const std::vector<Column>& columns) {
  Json obj = Json::object();
  for (std::size_t i = 0; i < columns.size(); ++i) {
    obj[columns[i].key] = cell_json(output_cell(i < row.size() ? row[i] : Cell{}, columns[i]));
  }
  return obj;
}

bool is_number(const Cell& c) { return std::holds_alternative<double>(c) || std::holds_alternative<std::int64_t>(c); }

Node cell_node(const Cell& c) {
  if (std::holds_alternative<std::string>(c)) return std::get<std::string>(c);
  if (std::holds_alternative<double>(c)) return std::get<double>(c);
  if (std::holds_alternative<std::int64_t>(c)) return std::get<std::int64_t>(c);
  if (std::holds_alternative<bool>(c)) return std::get<bool>(c);
  return nullptr;
}

Json cell_json(const Cell& c) {
  if (std::holds_alternative<std::string>(c)) return std::get<std::string>(c);
  if (std::holds_alternative<double>(c)) return std::get<double>(c);
  if (std::holds_alternative<std::int64_t>(c)) return std::get<std::int64_t>(c);
  if (std::holds_alternative<bool>(c)) return std::get<bool>(c);
  return nullptr;
}

void render_rows(const Report& head, const RowSource& source, const Format& f, std::ostream& out) {
  const unsigned workers = util::worker_count();
  const std::unique_ptr<Renderer> r = f.make(head, workers);
  if (r->measures()) {
    for_each_block(
        source, workers, [&](unsigned w, const std::vector<Row>& rows, std::string&) { r->measure(w, rows); },
        [](const std::string&) {});
  }
  r->begin(out);
  for_each_block(
      source, workers, [&](unsigned w, const std::vector<Row>& rows, std::string& text) { r->rows(w, rows, text); },
      [&](const std::string& text) { r->write(out, text); });
  r->end(out);
}

std::string render(const Report& report, const Format& f) {
  if (!report.verbatim.empty()) return report.verbatim;
  static const std::vector<Row> none;
  const std::vector<Row>& block = report.tables.empty() ? none : report.tables.front().rows;
  const std::unique_ptr<Renderer> r = f.make(report, 1);
  std::ostringstream out;
  if (r->measures()) r->measure(0, block);
  r->begin(out);
  std::string text;
  r->rows(0, block, text);
  r->write(out, text);
  r->end(out);
  return out.str();
}

std::string group_digits(std::string_view digits) {
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_cell_text(const Cell& c, const Column& col) {
  if (std::holds_alternative<std::string>(c)) return escaped(std::get<std::string>(c));
  if (std::holds_alternative<double>(c)) {
    const double v = std::get<double>(c) / col.scale;
    return col.precision < 0 ? fmt::format("{}", v) : fmt::format("{:.{}f}", v, col.precision);
  }
  if (std::holds_alternative<std::int64_t>(c)) {
    const std::int64_t v = std::get<std::int64_t>(c);
    return col.thousands ? group_thousands(v) : std::to_string(v);
  }
  if (std::holds_alternative<bool>(c)) return std::get<bool>(c) ? "yes" : "no";
  return "--";
}

Json to_json(const Node& n) {
  if (n.is_boolean()) return n.boolean();
  if (n.is_number_unsigned()) return n.whole();
  if (n.is_number_integer()) return n.integer();
  if (n.is_number_float()) return n.number();
  if (n.is_string()) return n.string();
  if (n.is_array()) {
    Json a = Json::array();
    for (const Node& e : n) a.push_back(to_json(e));
    return a;
  }
  if (n.is_object()) {
    Json o = Json::object();
    for (const auto& [key, v] : n.items()) o[key] = to_json(v);
    return o;
  }
  return nullptr;
}

Node from_json(const Json& j) {
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number_unsigned()) return j.get<std::uint64_t>();
  if (j.is_number_integer()) return j.get<std::int64_t>();
  if (j.is_number_float()) return j.get<double>();
  if (j.is_string()) return j.get<std::string>();
  if (j.is_array()) {
    Node a = Node::array();
    for (const Json& e : j) a.push_back(from_json(e));
    return a;
  }
  if (j.is_object()) {
    Node o = Node::object();
    for (const auto& [key, v] : j.items()) o[key] = from_json(v);
    return o;
  }
  return nullptr;
}

Node full_results(const Report& r) {
  Node results = r.results;
  for (const Table& t : r.tables) {
    Node rows = Node::array();
    for (const auto& row : t.rows) {
      Node obj = Node::object();
      for (std::size_t i = 0; i < t.columns.size(); ++i) {
        const Column& col = t.columns[i];
        obj[col.key] = cell_node(output_cell(i < row.size() ? row[i] : Cell{}, col));
      }
      rows.push_back(std::move(obj));
    }
    if (results.contains(t.name)) throw std::logic_error("results." + t.name + " is both a figure and a table");
    results[t.name] = std::move(rows);
  }
  return results;
}

}  // namespace edgeplan::io
