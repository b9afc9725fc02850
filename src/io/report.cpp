#include "edgeplan/io/report.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace edgeplan::io {
namespace {

std::string group_thousands(std::int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

bool right_aligned(const Cell& c) {
  return std::holds_alternative<double>(c) || std::holds_alternative<std::int64_t>(c);
}

Json cell_json(const Cell& c) {
  if (std::holds_alternative<std::string>(c)) return std::get<std::string>(c);
  if (std::holds_alternative<double>(c)) return std::get<double>(c);
  if (std::holds_alternative<std::int64_t>(c)) return std::get<std::int64_t>(c);
  if (std::holds_alternative<bool>(c)) return std::get<bool>(c);
  return nullptr;
}

std::string render_table(const Table& t) {
  std::vector<std::size_t> width(t.columns.size());
  std::vector<bool> right(t.columns.size(), false);
  std::vector<std::vector<std::string>> text;
  for (std::size_t i = 0; i < t.columns.size(); ++i) width[i] = t.columns[i].title.size();
  for (const auto& row : t.rows) {
    auto& line = text.emplace_back();
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      const Cell& c = i < row.size() ? row[i] : Cell{};
      line.push_back(format_cell_text(c, t.columns[i]));
      width[i] = std::max(width[i], line.back().size());
      if (right_aligned(c)) right[i] = true;
    }
  }
  auto emit = [&](const std::vector<std::string>& cells) {
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
  };
  std::vector<std::string> titles;
  for (const Column& c : t.columns) titles.push_back(c.title);
  std::string out = emit(titles);
  for (const auto& line : text) out += emit(line);
  return out;
}

}  // namespace

std::string csv_field(const Cell& c) {
  if (std::holds_alternative<std::string>(c)) {
    const std::string& s = std::get<std::string>(c);
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return out + "\"";
  }
  if (std::holds_alternative<double>(c)) return fmt::format("{}", std::get<double>(c));
  if (std::holds_alternative<std::int64_t>(c)) return std::to_string(std::get<std::int64_t>(c));
  if (std::holds_alternative<bool>(c)) return std::get<bool>(c) ? "true" : "false";
  return "";
}

std::string format_cell_text(const Cell& c, const Column& col) {
  if (std::holds_alternative<std::string>(c)) return std::get<std::string>(c);
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
    for (const auto& row : t.rows) {
      Json obj = Json::object();
      for (std::size_t i = 0; i < t.columns.size(); ++i) obj[t.columns[i].key] = cell_json(i < row.size() ? row[i] : Cell{});
      rows.push_back(std::move(obj));
    }
    results[t.name] = std::move(rows);
  }
  return results;
}

std::string render(const Report& r, Format f) {
  if (!r.verbatim.empty()) return r.verbatim;
  switch (f) {
    case Format::json: {
      Json doc = Json::object();
      doc["schema"] = kJsonSchema;
      doc["command"] = r.command;
      doc["inputs"] = r.inputs;
      doc["results"] = full_results(r);
      return doc.dump(2) + "\n";
    }
    case Format::csv: {
      if (r.tables.empty()) return "";
      const Table& t = r.tables.front();
      std::string out;
      for (std::size_t i = 0; i < t.columns.size(); ++i) out += (i ? "," : "") + t.columns[i].key;
      out += "\n";
      for (const auto& row : t.rows) {
        for (std::size_t i = 0; i < t.columns.size(); ++i) out += (i ? "," : "") + csv_field(i < row.size() ? row[i] : Cell{});
        out += "\n";
      }
      return out;
    }
    case Format::table: {
      std::string out = r.title + "\n";
      for (const std::string& line : r.header) out += line + "\n";
      for (const Table& t : r.tables) out += "\n" + render_table(t);
      if (!r.notes.empty()) out += "\n";
      for (const std::string& line : r.notes) out += line + "\n";
      return out;
    }
  }
  return "";
}

}  // namespace edgeplan::io
