// Fuzz harness: the writers. The bytes, cut at each 0x1F byte, become a report's title, a header line, a note, a
// column title and the rows of a table (a name, then a number where the piece reads as one, else text) with a chart
// of it. The report is rendered in every format, and each output must keep its promise:
// - CSV: one record a line, and no field a spreadsheet would run as a formula ('=', '+', '@', or '-' not starting a
//   number; OWASP's tab and carriage return escaped), read back by edgeplan's own CSV reader;
// - Markdown: no raw '<' (it is written &lt;);
// - HTML: the page's data script closes where it should: no '<' inside it, and what it holds reads as JSON;
// - JSON and Vega-Lite: JSON.
// A broken promise aborts (libFuzzer reports it with the input).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/io/csv.hpp"
#include "edgeplan/io/json.hpp"
#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/report.hpp"

namespace {

[[noreturn]] void broken(const char* promise, std::string_view output) {
  std::fprintf(stderr, "fuzz_writers: %s\n--- output ---\n%.*s\n", promise, static_cast<int>(output.size()),
               output.data());
  std::abort();
}

// A piece as a number where it reads wholly as a finite one, else as text.
edgeplan::io::Cell cell_of(const std::string& piece) {
  if (!piece.empty()) {
    char* end = nullptr;
    const double v = std::strtod(piece.c_str(), &end);
    if (end == piece.c_str() + piece.size() && std::isfinite(v)) return v;
  }
  return piece;
}

bool reads_as_number(const std::string& field) {
  char* end = nullptr;
  (void)std::strtod(field.c_str(), &end);
  return !field.empty() && end == field.c_str() + field.size();
}

void check_csv(const std::string& out) {
  std::string_view text = out;
  while (!text.empty()) {
    const std::string_view line = edgeplan::io::next_line(text);
    const auto fields = edgeplan::io::csv_fields(line, "fuzz");
    if (!fields) broken("CSV: a line does not read back", out);
    for (const std::string& f : *fields) {
      if (f.find_first_of("\t\r\n") != std::string::npos) broken("CSV: a raw tab, CR or newline in a field", out);
      const char first = f.empty() ? ' ' : f.front();
      if (first == '=' || first == '+' || first == '@' || (first == '-' && !reads_as_number(f))) {
        broken("CSV: a field a spreadsheet would run as a formula", out);
      }
    }
  }
}

void check_html(const std::string& out) {
  const std::string open = "<script type=\"application/json\" id=\"spec\">";
  const std::size_t begin = out.find(open);
  if (begin == std::string::npos) broken("HTML: no data script", out);
  const std::size_t from = begin + open.size(), to = out.find("</script>", from);
  if (to == std::string::npos) broken("HTML: the data script does not close", out);
  const std::string_view data = std::string_view(out).substr(from, to - from);
  if (data.find('<') != std::string_view::npos) broken("HTML: a '<' inside the data script", out);
  if (!edgeplan::io::Json::accept(data)) broken("HTML: the data script is not JSON", out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace edgeplan::io;
  std::vector<std::string> pieces(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0x1f) {
      pieces.emplace_back();
    } else {
      pieces.back() += static_cast<char>(data[i]);
    }
  }
  pieces.resize(std::max<std::size_t>(pieces.size(), 6));
  Report r;
  r.command = "fuzz";
  r.title = pieces[0];
  r.header.push_back(pieces[1]);
  r.notes.push_back(pieces[2]);
  Table t{"rows", {{pieces[3], "name"}, {"value", "value", 2}}, {}};
  for (std::size_t i = 4; i + 1 < pieces.size(); i += 2) t.add({pieces[i], cell_of(pieces[i + 1])});
  r.results["name"] = pieces[4];
  r.tables.push_back(std::move(t));
  r.charts.push_back(Chart{.title = pieces[0], .table = "rows", .mark = "bar", .x = "name", .y = "value"});

  for (const Format& f : formats()) {
    const std::string out = render(r, f);
    if (f.name == "csv") check_csv(out);
    if (f.name == "md" && out.find('<') != std::string::npos) broken("Markdown: a raw '<'", out);
    if (f.name == "html") check_html(out);
    if ((f.name == "json" || f.name == "vega-lite") && !Json::accept(out)) broken("JSON: not JSON", out);
  }
  return 0;
}
