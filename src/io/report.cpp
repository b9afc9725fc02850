#include "edgeplan/io/report.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <condition_variable>
#include <mutex>
#include <ostream>
#include <stdexcept>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "edgeplan/util/parallel.hpp"
#include "edgeplan/io/text.hpp"
#include "edgeplan/io/warnings.hpp"

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
  if (std::holds_alternative<std::string>(c)) {
    const std::string s = escaped(std::get<std::string>(c));
    if (std::none_of(s.begin(), s.end(), [](char ch) { return ch == ',' || ch == '"'; })) {
      out += s;
      return;
    }
    out += '"';
    for (char ch : s) {
      if (ch == '"') out += '"';
      out += ch;
    }
    out += '"';
  } else if (std::holds_alternative<double>(c)) {
    append_shortest(out, std::get<double>(c));
  } else if (std::holds_alternative<std::int64_t>(c)) {
    char text[24];
    out.append(text, fmt::format_to(text, FMT_COMPILE("{}"), std::get<std::int64_t>(c)));
  } else if (std::holds_alternative<bool>(c)) {
    out += std::get<bool>(c) ? "true" : "false";
  }
}

std::string group_thousands(std::int64_t v) {
  const std::string digits = std::to_string(v < 0 ? -v : v);
  return v < 0 ? "-" + group_digits(digits) : group_digits(digits);
}

bool right_aligned(const Cell& c) {
  return std::holds_alternative<double>(c) || std::holds_alternative<std::int64_t>(c);
}

// The strings of a JSON document (values and keys) that are not UTF-8: how many, and the first one met.
struct InvalidUtf8 {
  std::uint64_t count = 0;
  std::string first;

  void note(const std::string& s) {
    if (!is_valid_utf8(s) && count++ == 0) first = s;
  }
  void add(const InvalidUtf8& other) {
    if (count == 0) first = other.first;
    count += other.count;
  }
  void note_all(const Json& j) {
    if (j.is_string()) {
      note(j.get_ref<const std::string&>());
    } else if (j.is_object()) {
      for (const auto& item : j.items()) {
        note(item.key());
        note_all(item.value());
      }
    } else if (j.is_array()) {
      for (const Json& e : j) note_all(e);
    }
  }
  // The warning that says what JSON replaced.
  void warn_if_any() const {
    if (count == 0) return;
    warn(fmt::format("{} {} in the JSON output {} not valid UTF-8: its invalid bytes are written as U+FFFD (first: {})",
                     count, count == 1 ? "string" : "strings", count == 1 ? "is" : "are", io::quoted(first)));
  }
};

// JSON text, with the bytes of a string that are not UTF-8 replaced by U+FFFD (InvalidUtf8 says which).
std::string json_text(const Json& j, int indent) { return j.dump(indent, ' ', false, Json::error_handler_t::replace); }

Json cell_json(const Cell& c) {
  if (std::holds_alternative<std::string>(c)) return std::get<std::string>(c);
  if (std::holds_alternative<double>(c)) return std::get<double>(c);
  if (std::holds_alternative<std::int64_t>(c)) return std::get<std::int64_t>(c);
  if (std::holds_alternative<bool>(c)) return std::get<bool>(c);
  return nullptr;
}

Json row_json(const std::vector<Cell>& row, const std::vector<Column>& columns) {
  Json obj = Json::object();
  for (std::size_t i = 0; i < columns.size(); ++i) obj[columns[i].key] = cell_json(i < row.size() ? row[i] : Cell{});
  return obj;
}

const Cell& cell_at(const std::vector<Cell>& row, std::size_t i) {
  static const Cell empty;
  return i < row.size() ? row[i] : empty;
}

// Column widths and alignment of the table view: measured over the titles and every row, then applied.
struct Layout {
  std::vector<std::size_t> width;
  std::vector<bool> right;  // a column with any number is right-aligned
};

Layout titles_layout(const std::vector<Column>& columns) {
  Layout l{std::vector<std::size_t>(columns.size()), std::vector<bool>(columns.size(), false)};
  for (std::size_t i = 0; i < columns.size(); ++i) l.width[i] = columns[i].title.size();
  return l;
}

void measure(const std::vector<Cell>& row, const std::vector<Column>& columns, Layout& l) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const Cell& c = cell_at(row, i);
    l.width[i] = std::max(l.width[i], format_cell_text(c, columns[i]).size());
    if (right_aligned(c)) l.right[i] = true;
  }
}

void merge(Layout& into, const Layout& from) {
  for (std::size_t i = 0; i < into.width.size(); ++i) {
    into.width[i] = std::max(into.width[i], from.width[i]);
    into.right[i] = into.right[i] || from.right[i];
  }
}

std::string table_line(const std::vector<std::string>& cells, const Layout& l) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const bool last = i + 1 == cells.size();
    if (l.right[i]) {
      out += fmt::format("{:>{}}", cells[i], l.width[i]);
    } else {
      out += last ? cells[i] : fmt::format("{:<{}}", cells[i], l.width[i]);
    }
    if (!last) out += "  ";
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + "\n";
}

std::string table_row(const std::vector<Cell>& row, const std::vector<Column>& columns, const Layout& l) {
  std::vector<std::string> cells;
  for (std::size_t i = 0; i < columns.size(); ++i) cells.push_back(format_cell_text(cell_at(row, i), columns[i]));
  return table_line(cells, l);
}

std::string table_titles(const std::vector<Column>& columns, const Layout& l) {
  std::vector<std::string> titles;
  for (const Column& c : columns) titles.push_back(c.title);
  return table_line(titles, l);
}

std::string render_table(const Table& t) {
  Layout l = titles_layout(t.columns);
  for (const auto& row : t.rows) measure(row, t.columns, l);
  std::string out = table_titles(t.columns, l);
  for (const auto& row : t.rows) out += table_row(row, t.columns, l);
  return out;
}

// A GitHub-flavoured Markdown table: numbers right-aligned, '|' in text escaped.
void measure_markdown(const std::vector<Cell>& row, std::vector<bool>& right) {
  for (std::size_t i = 0; i < row.size() && i < right.size(); ++i) right[i] = right[i] || right_aligned(row[i]);
}

std::string markdown_titles(const std::vector<Column>& columns, const std::vector<bool>& right) {
  std::string head = "|", rule = "|";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    head += " " + columns[i].title + " |";
    rule += right[i] ? " ---: |" : " --- |";
  }
  return head + "\n" + rule + "\n";
}

std::string markdown_row(const std::vector<Cell>& row, const std::vector<Column>& columns) {
  std::string out = "|";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    std::string text = format_cell_text(cell_at(row, i), columns[i]);
    for (std::size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2)) text.replace(at, 1, "\\|");
    out += " " + text + " |";
  }
  return out + "\n";
}

std::string render_markdown_table(const Table& t) {
  std::vector<bool> right(t.columns.size(), false);
  for (const auto& row : t.rows) measure_markdown(row, right);
  std::string out = markdown_titles(t.columns, right);
  for (const auto& row : t.rows) out += markdown_row(row, t.columns);
  return out;
}

std::string csv_titles(const std::vector<Column>& columns) {
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i) out += ',';
    out += columns[i].key;
  }
  return out + '\n';
}

void append_csv_row(std::string& out, const std::vector<Cell>& row, const std::vector<Column>& columns) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i) out += ',';
    append_csv_field(out, cell_at(row, i));
  }
  out += '\n';
}

// One row of the JSON view's results array, as doc.dump(2) indents it there.
std::string json_row(const std::vector<Cell>& row, const std::vector<Column>& columns) {
  std::string text = json_text(row_json(row, columns), 2);
  std::string out = "      ";
  for (char c : text) {
    out += c;
    if (c == '\n') out += "      ";
  }
  return out;
}

Json json_document(const Report& r) {
  Json doc = Json::object();
  doc["schema"] = kJsonSchema;
  doc["command"] = r.command;
  doc["inputs"] = r.inputs;
  doc["results"] = full_results(r);
  return doc;
}

std::string table_preamble(const Report& r) {
  std::string out = escaped(r.title) + "\n";
  for (const std::string& line : r.header) out += escaped(line) + "\n";
  return out;
}

std::string table_notes(const Report& r) {
  std::string out = r.notes.empty() ? "" : "\n";
  for (const std::string& line : r.notes) out += escaped(line) + "\n";
  return out;
}

std::string markdown_preamble(const Report& r) {
  std::string out = "### " + escaped(r.title) + "\n";
  for (const std::string& line : r.header) out += escaped(line) + "  \n";
  return out;
}

std::string markdown_notes(const Report& r) {
  std::string out = r.notes.empty() ? "" : "\n";
  for (const std::string& line : r.notes) out += escaped(line) + "  \n";
  return out;
}

// Items per block: large enough to keep a thread busy, small enough to bound the memory.
constexpr std::uint64_t kBlockItems = 8192;

// Makes the rows of `source` on all cores: worker w takes blocks w, w + workers, ... and each(w, row, text)
// appends each row of its block to the block's text; `write` gets the blocks' texts in block order (the
// workers take turns, so the output is the same whatever the number of threads).
template <class Each, class Write>
void for_each_block(const RowSource& source, Each each, Write write) {
  const std::uint64_t blocks = (source.items + kBlockItems - 1) / kBlockItems;
  const unsigned workers = util::worker_count();
  std::mutex mutex;
  std::condition_variable turn;
  std::uint64_t next = 0;  // the block to write next
  bool failed = false;     // a worker threw: the others stop instead of waiting for its turn
  util::parallel_for(workers, [&](unsigned w, std::uint64_t, std::uint64_t) {
    try {
      auto rows_of = source.worker();
      std::vector<std::vector<Cell>> rows;
      std::string text;
      for (std::uint64_t b = w; b < blocks; b += workers) {
        text.clear();
        for (std::uint64_t i = b * kBlockItems; i < std::min(source.items, (b + 1) * kBlockItems); ++i) {
          rows.clear();
          rows_of(i, rows);
          for (const auto& row : rows) each(w, row, text);
        }
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

void render_rows(const Report& head, const RowSource& source, Format f, std::ostream& out) {
  const std::vector<Column>& columns = head.tables.front().columns;
  auto write = [&](const std::string& text) { out << text; };
  switch (f) {
    case Format::csv:
      out << csv_titles(columns);
      for_each_block(
          source, [&](unsigned, const std::vector<Cell>& row, std::string& text) { append_csv_row(text, row, columns); },
          write);
      return;
    case Format::json: {
      const Json head_doc = json_document(head);
      std::vector<InvalidUtf8> invalid(util::worker_count() + 1);
      invalid.back().note_all(head_doc);
      const std::string doc = json_text(head_doc, 2) + "\n";
      const auto empty = doc.rfind("[]");  // the table's rows: the last array of the document
      out << doc.substr(0, empty) << "[";
      bool first = true;
      for_each_block(
          source,
          [&](unsigned w, const std::vector<Cell>& row, std::string& text) {
            for (const Cell& c : row) {
              if (const auto* s = std::get_if<std::string>(&c)) invalid[w].note(*s);
            }
            text += ",\n" + json_row(row, columns);
          },
          [&](const std::string& text) {
            if (text.empty()) return;
            out << (first ? text.substr(1) : text);
            first = false;
          });
      out << (first ? "]" : "\n    ]") << doc.substr(empty + 2);
      InvalidUtf8 all = invalid.back();
      for (std::size_t w = 0; w + 1 < invalid.size(); ++w) all.add(invalid[w]);
      all.warn_if_any();
      return;
    }
    case Format::table: {
      std::vector<Layout> layouts(util::worker_count(), titles_layout(columns));
      for_each_block(
          source, [&](unsigned w, const std::vector<Cell>& row, std::string&) { measure(row, columns, layouts[w]); },
          [](const std::string&) {});
      Layout l = titles_layout(columns);
      for (const Layout& each : layouts) merge(l, each);
      out << table_preamble(head) << "\n" << table_titles(columns, l);
      for_each_block(
          source, [&](unsigned, const std::vector<Cell>& row, std::string& text) { text += table_row(row, columns, l); },
          write);
      out << table_notes(head);
      return;
    }
    case Format::md: {
      std::vector<std::vector<bool>> rights(util::worker_count(), std::vector<bool>(columns.size(), false));
      for_each_block(
          source, [&](unsigned w, const std::vector<Cell>& row, std::string&) { measure_markdown(row, rights[w]); },
          [](const std::string&) {});
      std::vector<bool> right(columns.size(), false);
      for (const auto& each : rights) {
        for (std::size_t i = 0; i < right.size(); ++i) right[i] = right[i] || each[i];
      }
      out << markdown_preamble(head) << "\n" << markdown_titles(columns, right);
      for_each_block(
          source, [&](unsigned, const std::vector<Cell>& row, std::string& text) { text += markdown_row(row, columns); },
          write);
      out << markdown_notes(head);
      return;
    }
  }
}

std::string csv_field(const Cell& c) {
  std::string out;
  append_csv_field(out, c);
  return out;
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
  if (std::holds_alternative<double>(c)) return fmt::format("{:.{}f}", std::get<double>(c) / col.scale, col.precision);
  if (std::holds_alternative<std::int64_t>(c)) {
    const std::int64_t v = std::get<std::int64_t>(c);
    return col.thousands ? group_thousands(v) : std::to_string(v);
  }
  if (std::holds_alternative<bool>(c)) return std::get<bool>(c) ? "yes" : "no";
  return "--";
}

Json full_results(const Report& r) {
  Json results = r.results;
  for (const Table& t : r.tables) {
    Json rows = Json::array();
    for (const auto& row : t.rows) rows.push_back(row_json(row, t.columns));
    if (results.contains(t.name)) throw std::logic_error("results." + t.name + " is both a figure and a table");
    results[t.name] = std::move(rows);
  }
  return results;
}

std::string render(const Report& r, Format f) {
  if (!r.verbatim.empty()) return r.verbatim;
  switch (f) {
    case Format::json: {
      const Json doc = json_document(r);
      InvalidUtf8 invalid;
      invalid.note_all(doc);
      invalid.warn_if_any();
      return json_text(doc, 2) + "\n";
    }
    case Format::csv: {
      if (r.tables.empty()) return "";
      const Table& t = r.tables.front();
      std::string out = csv_titles(t.columns);
      for (const auto& row : t.rows) append_csv_row(out, row, t.columns);
      return out;
    }
    case Format::table: {
      std::string out = table_preamble(r);
      for (const Table& t : r.tables) out += "\n" + render_table(t);
      return out + table_notes(r);
    }
    case Format::md: {
      std::string out = markdown_preamble(r);
      for (const Table& t : r.tables) out += "\n" + render_markdown_table(t);
      return out + markdown_notes(r);
    }
  }
  return "";
}

}  // namespace edgeplan::io
