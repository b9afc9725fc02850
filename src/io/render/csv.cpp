// CSV, for spreadsheets and scripts: the first table only, its column keys as the header row (RFC 4180 quoting);
// numbers in shortest round-trip form, the numbers of count columns as integers (io::Column::count).
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

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

// Whether `text` is printable ASCII (0x20 .. 0x7E) without a comma or a quote: written as it is, neither escaped
// nor quoted. Eight bytes at a time: the bytes of a word below 0x20 or above 0x7E, and the commas and quotes
// (each a zero byte of the word xor that character), set the high bit of their byte in `flagged`.
bool plain_field(std::string_view text) {
  constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  const auto flagged = [](std::uint64_t w) {
    const auto zero_byte = [](std::uint64_t x) { return (x - ones) & ~x & highs; };
    const std::uint64_t below = (w - ones * 0x20) & ~w & highs;  // a byte < 0x20 (exact as a test of the word)
    const std::uint64_t above = ((w + ones * (0x7F - 0x7E)) | w) & highs;  // a byte > 0x7E
    return below | above | zero_byte(w ^ (ones * ',')) | zero_byte(w ^ (ones * '"'));
  };
  std::size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, text.data() + i, 8);
    if (flagged(w)) return false;
  }
  if (i < text.size()) {
    std::uint64_t w = ones * 'a';  // the tail, padded with a plain byte
    std::memcpy(&w, text.data() + i, text.size() - i);
    if (flagged(w)) return false;
  }
  return true;
}

void append_csv_field(std::string& out, const Cell& c) {
  if (const std::string* text = std::get_if<std::string>(&c)) {
    if (plain_field(*text)) {
      out += *text;
      return;
    }
    // Escaping writes neither commas nor quotes: a text without them needs no quotes.
    if (std::memchr(text->data(), ',', text->size()) == nullptr && std::memchr(text->data(), '"', text->size()) == nullptr) {
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
    char digits[24];  // appended by length: append(first, last) goes through replace()
    out.append(digits, static_cast<std::size_t>(fmt::format_to(digits, FMT_COMPILE("{}"), std::get<std::int64_t>(c)) - digits));
  } else if (std::holds_alternative<bool>(c)) {
    out += std::get<bool>(c) ? "true" : "false";
  }
}

class CsvRenderer final : public Renderer {
 public:
  explicit CsvRenderer(const Report& head) {
    if (!head.tables.empty()) columns_ = head.tables.front().columns;
  }

  void begin(std::ostream& out) override {
    if (columns_.empty()) return;
    std::string titles;
    for (const Column& c : columns_) titles += (titles.empty() ? "" : ",") + c.key;
    out << titles << '\n';
  }
  void rows(unsigned, std::span<const Row> block, std::string& text) override {
    for (const Row& row : block) {
      for (std::size_t i = 0; i < columns_.size(); ++i) {
        if (i) text += ',';
        if (i >= row.size()) continue;
        // A whole count is a double made an integer (output_cell); any other cell is written as it is.
        if (columns_[i].count && std::holds_alternative<double>(row[i])) {
          append_csv_field(text, output_cell(row[i], columns_[i]));
        } else {
          append_csv_field(text, row[i]);
        }
      }
      text += '\n';
    }
  }
  void end(std::ostream&) override {}

 private:
  std::span<const Column> columns_;  // the first table's (none without a table)
};

}  // namespace

std::string csv_field(const Cell& c) {
  std::string out;
  append_csv_field(out, c);
  return out;
}

std::unique_ptr<Renderer> make_csv_renderer(const Report& head, unsigned) { return std::make_unique<CsvRenderer>(head); }

}  // namespace edgeplan::io
