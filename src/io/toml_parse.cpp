#include "edgeplan/io/toml_parse.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace edgeplan::io {

namespace {

// A comment that toml++ would accept as it stands: printable ASCII and tabs up to the line break. Others (a
// control character, a byte of UTF-8, a carriage return) are left in the text for toml++ to judge.
bool plain_comment(std::string_view comment) {
  return std::all_of(comment.begin(), comment.end(), [](char c) { return c == '\t' || (c >= 0x20 && c < 0x7f); });
}

}  // namespace

TomlScan scan_toml(std::string_view text, std::size_t max_depth) {
  TomlScan scan;
  scan.text.reserve(text.size());
  std::size_t copied = 0;  // text[0, copied) is in scan.text already, less its plain comments
  // dots[i]: the dots of keys (or numbers) seen at bracket level i since its last separator; the depth at any
  // point is the number of open brackets plus the dots of all levels.
  std::vector<std::size_t> dots{0};
  std::size_t all_dots = 0;
  TomlPosition at{1, 1};
  std::size_t line_start = 0;
  const auto too_deep = [&](std::size_t i) {
    if (dots.size() - 1 + all_dots <= max_depth) return false;
    scan.too_deep = TomlPosition{at.line, i - line_start + 1};
    return true;
  };
  const auto reset_level = [&] {
    all_dots -= dots.back();
    dots.back() = 0;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++at.line;
      line_start = i + 1;
      if (dots.size() == 1) reset_level();
    } else if (c == '#') {
      const std::size_t end = std::min(text.find('\n', i), text.size());
      if (plain_comment(text.substr(i, end - i))) {
        scan.text.append(text.substr(copied, i - copied));
        copied = end;
      }
      i = end - 1;
    } else if (c == '"' || c == '\'') {
      const bool multi = text.substr(i, 3) == std::string_view(c == '"' ? "\"\"\"" : "'''");
      const std::string_view close = multi ? text.substr(i, 3) : text.substr(i, 1);
      for (i += close.size(); i < text.size() && text.substr(i, close.size()) != close; ++i) {
        if (c == '"' && text[i] == '\\') ++i;
        if (i < text.size() && text[i] == '\n') {
          ++at.line;
          line_start = i + 1;
        }
      }
      i += close.size() - 1;
      // A multi-line string may end in one or two quotes of its own before the delimiter ("""a"""" is a").
      for (int extra = 0; multi && extra < 2 && i + 1 < text.size() && text[i + 1] == c; ++extra) ++i;
    } else if (c == '[' || c == '{') {
      dots.push_back(0);
      if (too_deep(i)) return scan;
    } else if ((c == ']' || c == '}') && dots.size() > 1) {
      reset_level();
      dots.pop_back();
    } else if (c == ',') {
      reset_level();
    } else if (c == '.') {
      ++dots.back();
      ++all_dots;
      if (too_deep(i)) return scan;
    }
  }
  if (copied < text.size()) scan.text.append(text.substr(copied));
  return scan;
}

Result<toml::table> parse_toml(std::string_view text, const std::string& display) {
  const TomlScan scan = scan_toml(text);
  if (const auto& p = scan.too_deep) {
    return Error{fmt::format("{}:{}:{}: TOML nested deeper than {} levels (tables, dotted keys, arrays and inline "
                             "tables each count one)",
                             display, p->line, p->column, kMaxTomlDepth)};
  }
  try {
    return toml::parse(scan.text, display);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    return Error{fmt::format("{}:{}:{}: invalid TOML: {}", display, at.line, at.column, e.description())};
  }
}

}  // namespace edgeplan::io
