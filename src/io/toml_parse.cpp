#include "edgeplan/io/toml_parse.hpp"

#include <vector>

#include <fmt/format.h>

namespace edgeplan::io {

std::optional<TomlPosition> toml_too_deep(std::string_view text, std::size_t max_depth) {
  // dots[i]: the dots of keys (or numbers) seen at bracket level i since its last separator; the depth at any
  // point is the number of open brackets plus the dots of all levels.
  std::vector<std::size_t> dots{0};
  std::size_t all_dots = 0;
  TomlPosition at{1, 1};
  std::size_t line_start = 0;
  const auto too_deep = [&](std::size_t i) {
    return dots.size() - 1 + all_dots > max_depth ? std::optional(TomlPosition{at.line, i - line_start + 1})
                                                  : std::nullopt;
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
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
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
    } else if (c == '[' || c == '{') {
      dots.push_back(0);
      if (auto p = too_deep(i)) return p;
    } else if ((c == ']' || c == '}') && dots.size() > 1) {
      reset_level();
      dots.pop_back();
    } else if (c == ',') {
      reset_level();
    } else if (c == '.') {
      ++dots.back();
      ++all_dots;
      if (auto p = too_deep(i)) return p;
    }
  }
  return std::nullopt;
}

Result<toml::table> parse_toml(std::string_view text, const std::string& display) {
  if (const auto p = toml_too_deep(text)) {
    return Error{fmt::format("{}:{}:{}: TOML nested deeper than {} levels (tables, dotted keys, arrays and inline "
                             "tables each count one)",
                             display, p->line, p->column, kMaxTomlDepth)};
  }
  try {
    return toml::parse(text, display);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    return Error{fmt::format("{}:{}:{}: invalid TOML: {}", display, at.line, at.column, e.description())};
  }
}

}  // namespace edgeplan::io
