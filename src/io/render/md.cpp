// Markdown, for pull-request comments: the title as a heading, header lines, each table as a GitHub-flavoured
// table (numbers right-aligned, '|' in text escaped), notes; '<' as &lt; everywhere, so no name is taken for HTML.
#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/text.hpp"

namespace edgeplan::io {
namespace {

// Text as Markdown shows it, not as HTML it would run: GitHub-flavoured Markdown passes raw HTML through, so every
// '<' is written as &lt; (a device named "<img src=x onerror=...>" stays text).
std::string md_text(std::string text) {
  for (std::size_t at = text.find('<'); at != std::string::npos; at = text.find('<', at + 4)) text.replace(at, 1, "&lt;");
  return text;
}

void measure_right(const Row& row, std::vector<bool>& right) {
  for (std::size_t i = 0; i < row.size() && i < right.size(); ++i) right[i] = right[i] || is_number(row[i]);
}

std::string titles(const std::vector<Column>& columns, const std::vector<bool>& right) {
  std::string head = "|", rule = "|";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    head += " " + md_text(columns[i].title) + " |";
    rule += right[i] ? " ---: |" : " --- |";
  }
  return head + "\n" + rule + "\n";
}

std::string markdown_row(const Row& row, const std::vector<Column>& columns) {
  std::string out = "|";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    std::string text = md_text(i < row.size() ? format_cell_text(row[i], columns[i]) : format_cell_text({}, columns[i]));
    for (std::size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2)) text.replace(at, 1, "\\|");
    out += " " + text + " |";
  }
  return out + "\n";
}

class MarkdownRenderer final : public Renderer {
 public:
  MarkdownRenderer(const Report& head, unsigned workers)
      : head_(head), rights_(workers, std::vector<bool>(width(), false)) {}

  bool measures() const override { return true; }
  void measure(unsigned worker, std::span<const Row> block) override {
    for (const Row& row : block) measure_right(row, rights_[worker]);
  }
  void begin(std::ostream& out) override {
    out << "### " << md_text(escaped(head_.title)) << "\n";
    for (const std::string& line : head_.header) out << md_text(escaped(line)) << "  \n";
    if (head_.tables.empty()) return;
    std::vector<bool> right(width(), false);
    for (const auto& each : rights_) {
      for (std::size_t i = 0; i < right.size(); ++i) right[i] = right[i] || each[i];
    }
    out << "\n" << titles(head_.tables.front().columns, right);
  }
  void rows(unsigned, std::span<const Row> block, std::string& text) override {
    for (const Row& row : block) text += markdown_row(row, head_.tables.front().columns);
  }
  void end(std::ostream& out) override {
    for (std::size_t t = 1; t < head_.tables.size(); ++t) {
      const Table& table = head_.tables[t];
      std::vector<bool> right(table.columns.size(), false);
      for (const Row& row : table.rows) measure_right(row, right);
      out << "\n" << titles(table.columns, right);
      for (const Row& row : table.rows) out << markdown_row(row, table.columns);
    }
    if (!head_.notes.empty()) out << "\n";
    for (const std::string& line : head_.notes) out << md_text(escaped(line)) << "  \n";
  }

 private:
  std::size_t width() const { return head_.tables.empty() ? 0 : head_.tables.front().columns.size(); }

  const Report& head_;
  std::vector<std::vector<bool>> rights_;  // per worker: the columns holding a number
};

}  // namespace

std::unique_ptr<Renderer> make_markdown_renderer(const Report& head, unsigned workers) {
  return std::make_unique<MarkdownRenderer>(head, workers);
}

}  // namespace edgeplan::io
