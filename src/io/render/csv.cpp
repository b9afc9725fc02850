// CSV, for spreadsheets and scripts: the first table only, its column keys as the header row (RFC 4180 quoting);
// numbers in shortest round-trip form, the numbers of count columns as integers (io::Column::count).
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/text.hpp"

namespace edgeplan::io {
namespace {

// The text of CSV fields, put together in a buffer on the stack and appended to `text` when the buffer fills
// (and at the end): an append to a std::string per field cost more than formatting most of the fields.
class FieldWriter {
 public:
  explicit FieldWriter(std::string& text) : text_(text) {}
  FieldWriter(const FieldWriter&) = delete;
  FieldWriter& operator=(const FieldWriter&) = delete;
  ~FieldWriter() { flush(); }

  // Where the next `n` characters (at most kSize) go; wrote() then says where they end.
  char* room(std::size_t n) {
    if (size_ + n > kSize) flush();
    return buffer_ + size_;
  }
  void wrote(const char* end) { size_ = static_cast<std::size_t>(end - buffer_); }
  void put(char c) {
    *room(1) = c;
    ++size_;
  }
  void put(std::string_view s) {
    if (s.size() > kSize) {
      flush();
      text_.append(s);
      return;
    }
    std::memcpy(room(s.size()), s.data(), s.size());
    size_ += s.size();
  }
  // The text itself, with everything put so far, for what writes into a std::string (escaping).
  std::string& text() {
    flush();
    return text_;
  }

 private:
  static constexpr std::size_t kSize = 512;
  void flush() {
    text_.append(buffer_, size_);
    size_ = 0;
  }
  std::string& text_;
  std::size_t size_ = 0;
  char buffer_[kSize];
};

// The text of a number, as a table entry: see put_number.
struct NumberText {
  std::uint64_t bits = 0;
  std::uint8_t size = 0;  // 0: empty (a number's text is never empty)
  char text[31] = {};
};

// Makes e the entry of v: out of line and cold, so that a hit (put_number) saves no registers for fmt.
template <class T>
[[gnu::cold]] void make_text(NumberText& e, T v) {
  e.bits = std::bit_cast<std::uint64_t>(v);
  e.size = static_cast<std::uint8_t>(fmt::format_to(e.text, FMT_COMPILE("{}"), v) - e.text);
}

// The text of number v (a double or an int64) as fmt's "{}" writes it: the shortest that reads back, or the
// digits. Sweeps print the same numbers over and over (a format's size on every row of a bandwidth sweep, the
// swept value on each of a combination's rows), so each thread keeps the texts it made last in a small table
// per type indexed by the number's bits; a hit costs a few nanoseconds against some fifty for formatting.
template <class T>
void put_number(FieldWriter& out, T v) {
  thread_local std::array<NumberText, 256> cache;
  const auto bits = std::bit_cast<std::uint64_t>(v);
  NumberText& e = cache[(bits * 0x9E3779B97F4A7C15ull) >> 56];
  if (e.size == 0 || e.bits != bits) make_text(e, v);
  // The whole entry's text, a copy of fixed size (made inline, where one of e.size bytes is a call), of which
  // the first e.size characters count.
  char* to = out.room(sizeof e.text);
  std::memcpy(to, e.text, sizeof e.text);
  out.wrote(to + e.size);
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

// Whether a spreadsheet would run `text` as a formula: it starts with '=', '+', '-' or '@' (a tab or a carriage
// return, OWASP's other two, are written escaped as \t and \r). OWASP, "CSV Injection"
// (https://owasp.org/www-community/attacks/CSV_Injection): such a field is written quoted, after a single quote.
bool formula_like(std::string_view text) {
  return !text.empty() && (text.front() == '=' || text.front() == '+' || text.front() == '-' || text.front() == '@');
}

// `text` escaped and quoted, its quotes doubled, after `lead` ("'" before a formula, or nothing).
void put_quoted(FieldWriter& out, std::string_view text, std::string_view lead) {
  out.put('"');
  out.put(lead);
  for (char ch : escaped(text)) {
    if (ch == '"') out.put('"');
    out.put(ch);
  }
  out.put('"');
}

void put_csv_field(FieldWriter& out, const Cell& c) {
  if (const std::string* text = std::get_if<std::string>(&c)) {
    if (formula_like(*text)) {
      put_quoted(out, *text, "'");
      return;
    }
    if (plain_field(*text)) {
      out.put(*text);
      return;
    }
    // Escaping writes neither commas nor quotes: a text without them needs no quotes.
    if (std::memchr(text->data(), ',', text->size()) == nullptr && std::memchr(text->data(), '"', text->size()) == nullptr) {
      append_escaped(out.text(), *text);
      return;
    }
    put_quoted(out, *text, "");
  } else if (std::holds_alternative<double>(c)) {
    put_number(out, std::get<double>(c));
  } else if (std::holds_alternative<std::int64_t>(c)) {
    put_number(out, std::get<std::int64_t>(c));
  } else if (std::holds_alternative<bool>(c)) {
    out.put(std::get<bool>(c) ? std::string_view("true") : std::string_view("false"));
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
    FieldWriter out(text);
    for (const Row& row : block) {
      for (std::size_t i = 0; i < columns_.size(); ++i) {
        if (i) out.put(',');
        if (i >= row.size()) continue;
        // A whole count is a double made an integer (output_count); any other cell is written as it is.
        if (const std::optional<std::int64_t> count = output_count(row[i], columns_[i])) {
          put_number(out, *count);
        } else {
          put_csv_field(out, row[i]);
        }
      }
      out.put('\n');
    }
  }
  void end(std::ostream&) override {}

 private:
  std::span<const Column> columns_;  // the first table's (none without a table)
};

}  // namespace

std::string csv_field(const Cell& c) {
  std::string out;
  {
    FieldWriter field(out);
    put_csv_field(field, c);
  }  // the writer appends the field as it goes
  return out;
}

std::unique_ptr<Renderer> make_csv_renderer(const Report& head, unsigned) { return std::make_unique<CsvRenderer>(head); }

}  // namespace edgeplan::io
