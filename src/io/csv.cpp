#include "edgeplan/io/csv.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "edgeplan/io/text.hpp"

namespace edgeplan::io {

Result<std::vector<std::string>> csv_fields(std::string_view line, const std::string& where) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  if (quoted) return Error{where + ": unterminated quote"};
  return out;
}

std::string_view next_line(std::string_view& text) {
  const auto nl = text.find('\n');
  const std::string_view line = text.substr(0, nl);
  text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  return line;
}

bool blank_line(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

std::optional<Error> csv_records(std::string_view text, const std::string& display,
                                 const std::function<std::optional<Error>(const CsvRecord&)>& each) {
  std::vector<std::string> header;
  for (std::size_t i = 0; !text.empty(); ++i) {
    const std::string_view line = next_line(text);
    if (blank_line(line)) continue;
    const std::string where = fmt::format("{}:{}", display, i + 1);
    auto fields = csv_fields(line, where);
    if (!fields) return fields.error();
    if (header.empty()) {
      for (auto it = fields->begin(); it != fields->end(); ++it) {
        if (std::find(fields->begin(), it, *it) != it) {
          return Error{fmt::format("{}: the header names column {} twice", where, io::quoted(*it))};
        }
      }
      header = std::move(*fields);
      continue;
    }
    if (fields->size() != header.size()) {
      return Error{fmt::format("{}: {} fields, but the header row has {}", where, fields->size(), header.size())};
    }
    CsvRecord r{where, {}};
    for (std::size_t f = 0; f < header.size(); ++f) r.fields[header[f]] = std::move((*fields)[f]);
    if (auto e = each(r)) return e;
  }
  return std::nullopt;
}

}  // namespace edgeplan::io
