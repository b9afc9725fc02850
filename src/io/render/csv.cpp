// CSV, for spreadsheets and scripts: the first table only, its column keys as the header row (RFC 4180 quoting);
// numbers in shortest round-trip form, the numbers of count columns as integers (io::Column::count).
#include <algorithm>
#include <array>
#include <bit>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/text.hpp"

namespace edgeplan::io {
namespace {

// The shortest text that reads back as v. Sweeps print the same numbers over and over (a format's size on
// every row of a bandwidth sweep), so each thread keeps the texts it made last in a small table indexed by
// the number's bits; a hit costs a few nanoseconds against some fifty for formatting.
void append_shortest(std::string& out, double v) {
  struct Entry {
    std::uint64_t bits = 0;
    std::uint8_t size = 0;  // 0: empty (a number's text is never empty)
    char text[31] = {};
  };
  thread_local std::array<Entry, 256> cache;
  const auto bits = std::bit_cast<std::uint64_t>(v);
  Entry& e = cache[(bits * 0x9E3779B97F4A7C15ull) >> 56];
  if (e.size == 0 || e.bits != bits) {
    e.bits = bits;
    e.size = static_cast<std::uint8_t>(fmt::format_to(e.text, FMT_COMPILE("{}"), v) - e.text);
  }
  out.append(e.text, e.size);
}

void append_csv_field(std::string& out, const Cell& c) {
  if (const std::string* text = std::get_if<std::string>(&c)) {
    // Escaping writes neither commas nor quotes: a text without them needs no quotes.
    if (std::none_of(text->begin(), text->end(), [](char ch) { return ch == ',' || ch == '"'; })) {
      append_escaped(out, *text);
      return;
    }
    const std::string s = escaped(*text);
    out += '"';
    for (char ch : s) {
      if (ch == '"') out += '"';
      out += ch;
    }
    out += '"';
  } else if (std::holds_alternative<double>(c)) {
    append_shortest(out, std::get<double>(c));
  } else if (std::holds_alternative<std::int64_t>(c)) {
    char digits[24];
    out.append(digits, fmt::format_to(digits, FMT_COMPILE("{}"), std::get<std::int64_t>(c)));
  } else if (std::holds_alternative<bool>(c)) {
    out += std::get<bool>(c) ? "true" : "false";
  }
}

class CsvRenderer final : public Renderer {
 public:
  explicit CsvRenderer(const Report& head) : head_(head) {
    if (head.tables.empty()) return;
    for (const Column& c : head.tables.front().columns) whole_.push_back(c.count);
  }

  void begin(std::ostream& out) override {
    if (head_.tables.empty()) return;
    std::string titles;
    for (const Column& c : head_.tables.front().columns) titles += (titles.empty() ? "" : ",") + c.key;
    out << titles << '\n';
  }
  void rows(unsigned, std::span<const Row> block, std::string& text) override {
    for (const Row& row : block) {
      for (std::size_t i = 0; i < whole_.size(); ++i) {
        if (i) text += ',';
        if (i >= row.size()) continue;
        // A whole count is a double made an integer (output_cell); any other cell is written as it is.
        if (whole_[i] && std::holds_alternative<double>(row[i])) {
          append_csv_field(text, output_cell(row[i], head_.tables.front().columns[i]));
        } else {
          append_csv_field(text, row[i]);
        }
      }
      text += '\n';
    }
  }
  void end(std::ostream&) override {}

 private:
  const Report& head_;
  std::vector<bool> whole_;  // per column: Column::count
};

}  // namespace

std::string csv_field(const Cell& c) {
  std::string out;
  append_csv_field(out, c);
  return out;
}

std::unique_ptr<Renderer> make_csv_renderer(const Report& head, unsigned) { return std::make_unique<CsvRenderer>(head); }

}  // namespace edgeplan::io
