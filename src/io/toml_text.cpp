#include "edgeplan/io/toml_text.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "edgeplan/io/text.hpp"
#include "edgeplan/io/toml_parse.hpp"

namespace edgeplan::io {

namespace {

// Basic strings with escapes (one line), floats at 6 significant digits.
constexpr toml::format_flags kFlags =
    (toml::toml_formatter::default_flags | toml::format_flags::relaxed_float_precision) &
    ~toml::format_flags::allow_literal_strings & ~toml::format_flags::allow_multi_line_strings;

// Column at which a value's trailing comment starts.
constexpr std::size_t kCommentColumn = 28;

std::string format(const toml::table& t) {
  std::ostringstream out;
  out << toml::toml_formatter(t, kFlags);
  return out.str();
}

// Byte offset of each line's start (line 1 at index 0), and of the end of the text.
std::vector<std::size_t> line_starts(std::string_view text) {
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') starts.push_back(i + 1);
  }
  return starts;
}

// Byte offset of a toml++ source position (columns count code points).
std::size_t offset_of(std::string_view text, const std::vector<std::size_t>& starts, const toml::source_position& at) {
  std::size_t i = starts[at.line - 1];
  for (toml::source_index column = 1; column < at.column && i < text.size(); ++column) {
    ++i;
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
  }
  return i;
}

// TOML text is UTF-8 throughout: text that is not (a path of bytes, x\xFF.gguf) is written with those bytes as
// \xNN (io/text.hpp, escaped), for people to read; what the file names is read from the path itself.
std::string as_utf8(std::string_view text) { return is_valid_utf8(text) ? std::string(text) : escaped(text); }

// "# text": control characters (a newline too) escaped, so it stays one line.
std::string comment_text(std::string_view raw) {
  const std::string text = as_utf8(raw);
  std::string out = "# ";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if ((u < 0x20 && c != '\t') || u == 0x7F) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out;
}

// `setting` (a line's text up to the end of its value) and the comment, at the comment column.
std::string with_comment(std::string_view setting, std::string_view comment) {
  return fmt::format("{:<{}}{}", setting, std::max(kCommentColumn, setting.size() + 1), comment_text(comment));
}

struct Splice {
  std::size_t from, to;  // bytes replaced: [from, to)
  std::string text;
};

}  // namespace

std::string toml_value_text(const toml::node& value) {
  toml::table one;
  one.insert("v", value);
  const std::string line = format(one);
  return line.substr(line.find('=') + 2);
}

std::string toml_key_text(std::string_view key) {
  toml::table one;
  one.insert(key, 0);
  const std::string line = format(one);
  return line.substr(0, line.rfind(" = "));
}

TomlText& TomlText::comment(std::string_view text) {
  text_ += comment_text(text) + '\n';
  return *this;
}

TomlText& TomlText::table(const std::vector<std::string>& path) {
  std::string header;
  for (const std::string& key : path) header += (header.empty() ? "" : ".") + toml_key_text(key);
  text_ += fmt::format("\n[{}]\n", header);
  return *this;
}

TomlText& TomlText::set(std::string_view key, const toml::node& value, std::string_view comment) {
  const std::string setting = toml_key_text(key) + " = " + toml_value_text(value);
  text_ += (comment.empty() ? setting : with_comment(setting, comment)) + "\n";
  return *this;
}

TomlText& TomlText::set(std::string_view key, std::string_view value, std::string_view comment) {
  return set(key, toml::value<std::string>(as_utf8(value)), comment);
}
TomlText& TomlText::set(std::string_view key, double value, std::string_view comment) {
  return set(key, toml::value<double>(value), comment);
}
TomlText& TomlText::set(std::string_view key, std::int64_t value, std::string_view comment) {
  return set(key, toml::value<std::int64_t>(value), comment);
}
TomlText& TomlText::set(std::string_view key, bool value, std::string_view comment) {
  return set(key, toml::value<bool>(value), comment);
}

Result<std::string> edit_toml(std::string_view text, const std::string& display, const std::vector<TomlEdit>& edits) {
  auto parsed = parse_toml(text, display);
  if (!parsed) return parsed.error();
  const toml::table& doc = *parsed;
  const std::vector<std::size_t> starts = line_starts(text);
  std::vector<Splice> splices;
  for (const TomlEdit& edit : edits) {
    const std::string key = fmt::format("{}", fmt::join(edit.path, "."));
    const toml::table* table = &doc;
    std::size_t depth = 0;  // path[0, depth) are tables of the text
    while (depth + 1 < edit.path.size()) {
      const toml::node* next = table->get(edit.path[depth]);
      if (!next) break;
      if (!next->is_table()) return Error{fmt::format("{}: cannot set {}: {} is not a table", display, key, edit.path[depth])};
      table = next->as_table();
      ++depth;
    }
    const std::string value = toml_value_text(*edit.value);
    if (const toml::node* old = depth + 1 == edit.path.size() ? table->get(edit.path.back()) : nullptr) {
      if (old->is_table()) return Error{fmt::format("{}: cannot set {}: it is a table", display, key)};
      const std::size_t from = offset_of(text, starts, old->source().begin);
      std::size_t to = offset_of(text, starts, old->source().end);
      if (edit.comment.empty()) {
        splices.push_back({from, to, value});
        continue;
      }
      // The rest of the value's line is blank or a comment (a value in an inline table keeps its line as is).
      const std::size_t line_end = std::min(text.find('\n', to), text.size());
      const std::size_t rest = text.find_first_not_of(" \t\r", to);
      if (rest < line_end && text[rest] != '#') {
        splices.push_back({from, to, value});
        continue;
      }
      const std::size_t line_start = starts[old->source().begin.line - 1];
      to = line_end > to && text[line_end - 1] == '\r' ? line_end - 1 : line_end;  // a CRLF line keeps its CR
      const std::string setting = std::string(text.substr(line_start, from - line_start)) + value;
      splices.push_back({from, to, with_comment(setting, edit.comment).substr(from - line_start)});
      continue;
    }
    // A new key: on a line after the last value of the deepest table the text has, written with that value's
    // key prefix (`prefill.` when the table's values are dotted keys).
    if (table->is_inline()) {
      return Error{fmt::format("{}:{}: cannot add {} to an inline table; write it as a [table]", display,
                               table->source().begin.line, key)};
    }
    const toml::key* last_key = nullptr;
    const toml::node* last_value = nullptr;
    for (const auto& [k, v] : *table) {
      if (v.is_table()) continue;
      if (!last_value || v.source().end.line > last_value->source().end.line) {
        last_key = &k;
        last_value = &v;
      }
    }
    if (!last_value) return Error{fmt::format("{}: cannot add {}: its table has no value to put it after", display, key)};
    const std::size_t line_start = starts[last_key->source().begin.line - 1];
    const std::size_t key_start = offset_of(text, starts, last_key->source().begin);
    std::string prefix(text.substr(line_start, key_start - line_start));
    for (std::size_t i = depth; i < edit.path.size(); ++i) prefix += toml_key_text(edit.path[i]) + (i + 1 < edit.path.size() ? "." : "");
    const std::size_t end_line = last_value->source().end.line;
    const std::size_t at = end_line < starts.size() ? starts[end_line] : text.size();
    const std::string setting = fmt::format("{} = {}", prefix, value);
    splices.push_back({at, at, fmt::format("{}{}\n", at == text.size() && !text.ends_with('\n') ? "\n" : "",
                                           edit.comment.empty() ? setting : with_comment(setting, edit.comment))});
  }
  std::string out(text);
  std::reverse(splices.begin(), splices.end());  // insertions at one place keep their order
  std::stable_sort(splices.begin(), splices.end(), [](const Splice& a, const Splice& b) { return a.from > b.from; });
  for (const Splice& s : splices) out.replace(s.from, s.to - s.from, s.text);
  try {
    (void)toml::parse(out, display);
  } catch (const toml::parse_error& e) {
    return Error{fmt::format("{}: the edited profile is not valid TOML (a bug): {}", display, e.description())};
  }
  return out;
}

}  // namespace edgeplan::io
