// The table view, for people: title, header lines, each table with columns aligned (numbers to the right), notes.
#include <algorithm>

#include <fmt/format.h>

#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/text.hpp"

namespace edgeplan::io {
namespace {

const Cell& cell_at(const Row& row, std::size_t i) {
  static const Cell empty;
  return i < row.size() ? row[i] : empty;
}

// Column widths and alignment: measured over the titles and every row, then applied.
struct Layout {
  std::vector<std::size_t> width;
  std::vector<bool> right;  // a column with any number is right-aligned

  explicit Layout(const std::vector<Column>& columns) : width(columns.size()), right(columns.size(), false) {
    for (std::size_t i = 0; i < columns.size(); ++i) width[i] = columns[i].title.size();
  }
  void measure(const Row& row, const std::vector<Column>& columns) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const Cell& c = cell_at(row, i);
      width[i] = std::max(width[i], format_cell_text(c, columns[i]).size());
      if (is_number(c)) right[i] = true;
    }
  }
  void merge(const Layout& from) {
    for (std::size_t i = 0; i < width.size(); ++i) {
      width[i] = std::max(width[i], from.width[i]);
      right[i] = right[i] || from.right[i];
    }
  }
  std::string line(const std::vector<std::string>& cells) const {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const bool last = i + 1 == cells.size();
      if (right[i]) {
        out += fmt::format("{:>{}}", cells[i], width[i]);
      } else {
        out += last ? cells[i] : fmt::format("{:<{}}", cells[i], width[i]);
      }
      if (!last) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  }
  std::string row(const Row& cells, const std::vector<Column>& columns) const {
    std::vector<std::string> texts;
    for (std::size_t i = 0; i < columns.size(); ++i) texts.push_back(format_cell_text(cell_at(cells, i), columns[i]));
    return line(texts);
  }
  std::string titles(const std::vector<Column>& columns) const {
    std::vector<std::string> texts;
    for (const Column& c : columns) texts.push_back(c.title);
    return line(texts);
  }
};

class TableRenderer final : public Renderer {
 public:
  TableRenderer(const Report& head, unsigned workers)
      : head_(head), layouts_(workers, Layout(columns())), layout_(columns()) {}

  bool measures() const override { return true; }
  void measure(unsigned worker, std::span<const Row> block) override {
    for (const Row& row : block) layouts_[worker].measure(row, columns());
  }
  void begin(std::ostream& out) override {
    out << escaped(head_.title) << "\n";
    for (const std::string& line : head_.header) out << escaped(line) << "\n";
    if (head_.tables.empty()) return;
    for (const Layout& each : layouts_) layout_.merge(each);
    out << "\n" << layout_.titles(columns());
  }
  void rows(unsigned, std::span<const Row> block, std::string& text) override {
    for (const Row& row : block) text += layout_.row(row, columns());
  }
  void end(std::ostream& out) override {
    for (std::size_t t = 1; t < head_.tables.size(); ++t) {
      const Table& table = head_.tables[t];
      Layout l(table.columns);
      for (const Row& row : table.rows) l.measure(row, table.columns);
      out << "\n" << l.titles(table.columns);
      for (const Row& row : table.rows) out << l.row(row, table.columns);
    }
    if (!head_.notes.empty()) out << "\n";
    for (const std::string& line : head_.notes) out << escaped(line) << "\n";
  }

 private:
  const std::vector<Column>& columns() const {
    static const std::vector<Column> none;
    return head_.tables.empty() ? none : head_.tables.front().columns;
  }

  const Report& head_;
  std::vector<Layout> layouts_;  // per worker, merged in begin()
  Layout layout_;
};

}  // namespace

std::unique_ptr<Renderer> make_table_renderer(const Report& head, unsigned workers) {
  return std::make_unique<TableRenderer>(head, workers);
}

}  // namespace edgeplan::io
