// Vega-Lite v5, for notebooks, VS Code, Observable and vega-cli: the report's charts (io::Chart) as one
// specification with the data inline (docs/charts.md). The tables the charts draw are its named `datasets`, a
// row an object with the columns' keys as JSON writes it (Column::count whole); each chart is a view of
// its table in a `vconcat`, whose fields are the columns in their shown unit (value / Column::scale, named by
// the column's title). The first table's rows stream in as they come (a sweep's), so the datasets come first
// and the views last: a field's type (quantitative when every value is a number, else nominal) is known once
// its rows are.
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "edgeplan/io/json.hpp"
#include "edgeplan/io/render/renderer.hpp"

namespace edgeplan::io {
namespace {

constexpr const char* kVegaLiteSchema = "https://vega.github.io/schema/vega-lite/v5.json";
constexpr const char* kOrder = "table order";  // the field a stacked chart orders its layers by

// What the values of a column are, over the rows seen.
struct Seen {
  bool number = false;
  bool other = false;  // text or yes/no
};

void see(std::vector<Seen>& seen, const Row& row) {
  for (std::size_t i = 0; i < seen.size() && i < row.size(); ++i) {
    if (std::holds_alternative<std::monostate>(row[i])) continue;
    (is_number(row[i]) ? seen[i].number : seen[i].other) = true;
  }
}

// A table's row as one line of a dataset.
std::string row_line(const Row& row, const std::vector<Column>& columns) {
  return json_text(row_json(row, columns));
}

// A field name as Vega-Lite reads it: dots and brackets would name nested fields.
std::string field_name(const std::string& title) {
  std::string out;
  for (char ch : title) {
    if (ch == '.' || ch == '[' || ch == ']' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

// The report's tables, then its chart tables, as the charts name them.
std::vector<const Table*> all_tables(const Report& r) {
  std::vector<const Table*> out;
  for (const Table& t : r.tables) out.push_back(&t);
  for (const Table& t : r.chart_tables) out.push_back(&t);
  return out;
}

bool drawn(const Report& r, const Table& t) {
  return std::any_of(r.charts.begin(), r.charts.end(), [&](const Chart& c) { return c.table == t.name; });
}

// The tables the charts draw, with what each column holds.
class ChartTables {
 public:
  ChartTables(const Report& r, std::vector<Seen> first_seen) : tables_(all_tables(r)) {
    for (std::size_t t = 0; t < tables_.size(); ++t) {
      std::vector<Seen> seen(tables_[t]->columns.size());
      if (t == 0 && !r.tables.empty()) {
        seen = std::move(first_seen);
      } else {
        for (const Row& row : tables_[t]->rows) see(seen, row);
      }
      seen_.push_back(std::move(seen));
    }
  }

  const Table& table(const Chart& c) const { return *tables_[table_index(c)]; }
  const Column& column(const Chart& c, const std::string& key) const {
    const Table& t = table(c);
    return t.columns[column_index(t, c, key)];
  }
  bool quantitative(const Chart& c, const std::string& key) const {
    const Table& t = table(c);
    const Seen& s = seen_[table_index(c)][column_index(t, c, key)];
    return s.number && !s.other;
  }

 private:
  std::size_t table_index(const Chart& c) const {
    for (std::size_t t = 0; t < tables_.size(); ++t) {
      if (tables_[t]->name == c.table) return t;
    }
    throw std::logic_error(fmt::format("chart '{}' draws table '{}', which the report does not have", c.title, c.table));
  }
  static std::size_t column_index(const Table& t, const Chart& c, const std::string& key) {
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      if (t.columns[i].key == key) return i;
    }
    throw std::logic_error(fmt::format("chart '{}' draws column '{}', which table '{}' does not have", c.title, key,
                                       t.name));
  }

  std::vector<const Table*> tables_;
  std::vector<std::vector<Seen>> seen_;
};

// The encoding of one channel: the column under its title, quantitative or nominal (then in the table's order).
Json channel(const ChartTables& tables, const Chart& c, const std::string& key) {
  Json ch = Json::object();
  const std::string& title = tables.column(c, key).title;
  ch["field"] = field_name(title);
  ch["title"] = title;
  const bool number = tables.quantitative(c, key);
  ch["type"] = number ? "quantitative" : "nominal";
  if (!number) ch["sort"] = nullptr;
  return ch;
}

// A reference line and its label.
std::vector<Json> rule_layers(const ChartTables& tables, const Chart& c, const ChartRule& rule) {
  const std::string& key = rule.axis == 'x' ? c.x : c.y;
  const double at = rule.value / tables.column(c, key).scale;
  const std::string axis(1, rule.axis);
  const Json one_row = {{"values", Json::array({Json::object()})}};
  Json line = {{"data", one_row},
               {"mark", {{"type", "rule"}, {"color", "firebrick"}, {"strokeDash", {6, 4}}}},
               {"encoding", {{axis, {{"datum", at}}}}}};
  Json label = {{"data", one_row},
                {"mark", {{"type", "text"}, {"color", "firebrick"}, {"align", "left"}, {"baseline", "bottom"},
                          {"dx", 4}, {"dy", -2}}},
                {"encoding", {{axis, {{"datum", at}}}, {"text", {{"value", rule.label}}}}}};
  if (rule.axis == 'x') {
    label["mark"]["angle"] = 270;
    label["encoding"]["y"] = {{"value", 0}};
  } else {
    label["encoding"]["x"] = {{"value", 0}};
  }
  return {std::move(line), std::move(label)};
}

Json view_of(const ChartTables& tables, const Chart& c) {
  Json transform = Json::array();
  std::vector<std::string> keys;
  for (const std::string* key : {&c.x, &c.x2, &c.y, &c.color, &c.size, &c.y_low, &c.y_high}) {
    if (key->empty() || std::find(keys.begin(), keys.end(), *key) != keys.end()) continue;
    keys.push_back(*key);
    const Column& col = tables.column(c, *key);
    const std::string value = fmt::format("datum[{}]", json_text(Json(col.key)));
    transform.push_back({{"calculate", col.scale == 1 || !tables.quantitative(c, *key)
                                           ? value : fmt::format("{} / {}", value, col.scale)},
                         {"as", col.title}});
  }
  Json encoding = Json::object();
  if (!c.x.empty()) encoding["x"] = channel(tables, c, c.x);
  if (!c.x2.empty()) encoding["x2"] = {{"field", field_name(tables.column(c, c.x2).title)}};
  if (!c.y.empty()) encoding["y"] = channel(tables, c, c.y);
  if (!c.color.empty()) encoding["color"] = channel(tables, c, c.color);
  if (!c.size.empty()) encoding["size"] = channel(tables, c, c.size);
  if (c.x_log) encoding["x"]["scale"] = {{"type", "log"}, {"base", c.x_log}};
  if (c.y_log) encoding["y"]["scale"] = {{"type", "log"}, {"base", c.y_log}};
  if (c.stack && c.mark == "bar") {  // bars stacked in the table's order, not by the colours' names (an area's
                                     // order would be its path's)
    transform.push_back({{"window", {{{"op", "row_number"}, {"as", kOrder}}}}});
    encoding["order"] = {{"field", kOrder}, {"type", "quantitative"}};
  }
  // Stacking is along the quantitative axis; said either way, since Vega-Lite stacks bars and areas by default.
  const char* along = !c.y.empty() && tables.quantitative(c, c.y) ? "y" : "x";
  if (encoding.contains(along) && (c.mark == "bar" || c.mark == "area")) {
    encoding[along]["stack"] = c.stack ? Json("zero") : Json(nullptr);
  }
  Json mark = {{"type", c.mark}, {"tooltip", true}};
  if (c.mark == "line") mark["point"] = true;
  if (c.mark == "area" && !c.stack) mark["opacity"] = 0.5;
  Json marks = Json::object();
  marks["mark"] = mark;
  marks["encoding"] = encoding;
  Json layer = Json::array();
  if (!c.y_low.empty()) {  // the interval of each y, under the marks: the same x and colours, y from low to high
    Json band = encoding;
    band["y"] = channel(tables, c, c.y_low);
    band["y"]["title"] = encoding["y"]["title"];  // one axis title, the marks'
    band["y"]["stack"] = nullptr;                 // bands of the colours overlap, not stack
    band["y2"] = {{"field", field_name(tables.column(c, c.y_high).title)}};
    layer.push_back({{"mark", {{"type", "area"}, {"opacity", 0.2}}}, {"encoding", std::move(band)}});
  }
  layer.push_back(std::move(marks));
  for (const ChartRule& rule : c.rules) {
    for (Json& l : rule_layers(tables, c, rule)) layer.push_back(std::move(l));
  }
  return {{"title", c.title}, {"width", 480}, {"height", c.y.empty() ? 40 : 240}, {"data", {{"name", c.table}}},
          {"transform", transform}, {"layer", layer}};
}

class VegaLiteRenderer final : public Renderer {
 public:
  VegaLiteRenderer(const Report& head, unsigned workers) : head_(head) {
    if (head.tables.empty()) return;
    const Table& first = head.tables.front();
    first_drawn_ = drawn(head, first);
    seen_.assign(workers, std::vector<Seen>(first.columns.size()));
  }

  void begin(std::ostream& out) override {
    out << "{\n  \"$schema\": " << json_text(Json(kVegaLiteSchema)) << ",\n  \"title\": " << json_text(Json(head_.title))
        << ",\n  \"datasets\": {";
    if (first_drawn_) out << "\n    " << json_text(Json(head_.tables.front().name)) << ": [";
  }
  void rows(unsigned worker, std::span<const Row> block, std::string& text) override {
    if (!first_drawn_) return;
    const std::vector<Column>& columns = head_.tables.front().columns;
    for (const Row& row : block) {
      see(seen_[worker], row);
      text += ",\n      ";
      text += row_line(row, columns);
    }
  }
  void write(std::ostream& out, const std::string& text) override {
    if (text.empty()) return;
    out << (any_rows_ ? std::string_view(text) : std::string_view(text).substr(1));
    any_rows_ = true;
  }
  void end(std::ostream& out) override {
    std::vector<Seen> first(head_.tables.empty() ? 0 : head_.tables.front().columns.size());
    for (const std::vector<Seen>& w : seen_) {
      for (std::size_t i = 0; i < first.size(); ++i) {
        first[i].number = first[i].number || w[i].number;
        first[i].other = first[i].other || w[i].other;
      }
    }
    bool any_table = first_drawn_;
    if (first_drawn_) out << (any_rows_ ? "\n    ]" : "]");
    const std::vector<const Table*> tables = all_tables(head_);
    for (std::size_t t = head_.tables.empty() ? 0 : 1; t < tables.size(); ++t) {
      const Table& table = *tables[t];
      if (!drawn(head_, table)) continue;
      out << (any_table ? ",\n    " : "\n    ") << json_text(Json(table.name)) << ": [";
      for (std::size_t i = 0; i < table.rows.size(); ++i) {
        out << (i ? ",\n      " : "\n      ") << row_line(table.rows[i], table.columns);
      }
      out << (table.rows.empty() ? "]" : "\n    ]");
      any_table = true;
    }
    out << (any_table ? "\n  },\n" : "},\n");
    const ChartTables charted(head_, std::move(first));
    Json views = Json::array();
    for (const Chart& c : head_.charts) views.push_back(view_of(charted, c));
    // Each view its own colours and legend (a format and a memory part are not one scale); legends uncut.
    out << "  \"resolve\": {\"scale\": {\"color\": \"independent\"}, \"legend\": {\"color\": \"independent\"}},\n"
        << "  \"config\": {\"legend\": {\"labelLimit\": 0}},\n";
    out << "  \"vconcat\": [";
    for (std::size_t i = 0; i < views.size(); ++i) out << (i ? ",\n    " : "\n    ") << json_text(views[i]);
    out << "\n  ]\n}\n";
  }

 private:
  const Report& head_;
  bool first_drawn_ = false;             // a chart draws the first table: its rows go into the datasets
  std::vector<std::vector<Seen>> seen_;  // per worker: what the first table's columns hold
  bool any_rows_ = false;
};

}  // namespace

std::unique_ptr<Renderer> make_vega_lite_renderer(const Report& head, unsigned workers) {
  return std::make_unique<VegaLiteRenderer>(head, workers);
}

}  // namespace edgeplan::io
