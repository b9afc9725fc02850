// HTML, for CI artifacts and pull-request comments: one self-contained page (it opens without a network) with the
// title, header lines, each table as the table view writes its cells, the notes, and the report's charts drawn
// by vega-embed from the vega-lite format's specification (docs/charts.md). The Vega, Vega-Lite and vega-embed
// scripts are inlined from the build's EDGEPLAN_VEGA_DIR (io::embedded_scripts), their licenses at the page's
// end. The first table's rows stream through both: a block's table rows go out as they come, its dataset rows
// are kept for the specification at the end of the page.
#include <cctype>
#include <sstream>

#include "edgeplan/io/embedded.hpp"
#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/text.hpp"

namespace edgeplan::io {

std::unique_ptr<Renderer> make_vega_lite_renderer(const Report& head, unsigned workers);

namespace {

// Text as HTML shows it: escaped as the table view escapes it (io/text.hpp), then &, <, > and " as entities.
std::string html_text(std::string_view text) {
  std::string out;
  for (char ch : escaped(text)) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string table_head(const Table& t) {
  std::string out = "<h2>" + html_text(t.name) + "</h2>\n<table>\n<tr>";
  for (const Column& c : t.columns) out += "<th>" + html_text(c.title) + "</th>";
  return out + "</tr>\n";
}

void append_row(std::string& out, const Row& row, const std::vector<Column>& columns) {
  out += "<tr>";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const Cell& c = i < row.size() ? row[i] : Cell{};
    out += is_number(c) ? "<td class=\"n\">" : "<td>";
    out += html_text(format_cell_text(c, columns[i]));
    out += "</td>";
  }
  out += "</tr>\n";
}

// A script's code made safe inside <script> (the inlined Vega scripts): "</script" (any case) would end it early; "<\/script" reads the same
// in JavaScript's strings and regular expressions and in JSON's strings. Nothing else is touched (a "</" elsewhere
// is code: the end of a regular expression /</).
std::string in_script(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] != '<' || i + 8 > text.size() || text[i + 1] != '/') continue;
    std::string word(text.substr(i + 2, 6));
    for (char& ch : word) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (word == "script") out += '\\';
  }
  return out;
}

// JSON text made safe inside <script>, completely: every '<' written as \u003c, which JSON reads as the same
// character and which leaves no "</script", "<!--" or "<script" for the HTML parser to act on (a name holding
// "<!--<script" kept the data script from closing, and the page lost its charts). JSON has '<' only in strings.
std::string json_in_script(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    if (ch == '<') {
      out += "\\u003c";
    } else {
      out += ch;
    }
  }
  return out;
}

constexpr const char* kStyle =
    "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse;margin:0.5em 0 1.5em}th,td{border:1px solid #ccc;padding:2px 8px}"
    "th{background:#f4f4f4;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "h2{font-size:1.1em;margin-top:1.5em}pre{white-space:pre-wrap;font-size:0.8em}";

// vega-embed draws the specification into #charts, then marks the body drawn with the milliseconds since the page
// started loading (what the CI check measures); an error is logged (the check reads the console) and shown.
constexpr const char* kDraw =
    "vegaEmbed('#charts', JSON.parse(document.getElementById('spec').textContent), {actions: false, renderer: 'svg'})"
    ".then(function () { document.body.setAttribute('data-charts', 'drawn');"
    " document.body.setAttribute('data-drawn-ms', String(Math.round(performance.now()))); })"
    ".catch(function (e) { console.error(e); document.getElementById('charts').textContent = 'charts: ' + e; });";

class HtmlRenderer final : public Renderer {
 public:
  HtmlRenderer(const Report& head, unsigned workers) : head_(head), spec_(make_vega_lite_renderer(head, workers)) {}

  void begin(std::ostream& out) override {
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << html_text(head_.title)
        << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<h1>" << html_text(head_.title) << "</h1>\n";
    for (const std::string& line : head_.header) out << "<p>" << html_text(line) << "</p>\n";
    out << "<div id=\"charts\"></div>\n";
    if (!head_.tables.empty()) out << table_head(head_.tables.front());
    spec_->begin(spec_text_);
  }
  // A block's text: its table rows, a NUL (escaped text holds none), then its dataset rows.
  void rows(unsigned worker, std::span<const Row> block, std::string& text) override {
    for (const Row& row : block) append_row(text, row, head_.tables.front().columns);
    text += '\0';
    spec_->rows(worker, block, text);
  }
  void write(std::ostream& out, const std::string& text) override {
    const auto cut = text.find('\0');
    out << std::string_view(text).substr(0, cut);
    spec_->write(spec_text_, text.substr(cut + 1));
  }
  void end(std::ostream& out) override {
    if (!head_.tables.empty()) out << "</table>\n";
    for (std::size_t t = 1; t < head_.tables.size(); ++t) {
      const Table& table = head_.tables[t];
      std::string text = table_head(table);
      for (const Row& row : table.rows) append_row(text, row, table.columns);
      out << text << "</table>\n";
    }
    if (!head_.notes.empty()) {
      out << "<ul>\n";
      for (const std::string& line : head_.notes) out << "<li>" << html_text(line) << "</li>\n";
      out << "</ul>\n";
    }
    spec_->end(spec_text_);
    out << "<script type=\"application/json\" id=\"spec\">" << json_in_script(spec_text_.str()) << "</script>\n";
    std::string licenses;
    for (const EmbeddedFile& f : embedded_scripts()) {
      if (f.path.starts_with("LICENSE")) {
        licenses += "<h3>" + html_text(f.path.substr(8)) + "</h3>\n<pre>" + html_text(f.text) + "</pre>\n";
      } else {
        out << "<script>/* " << f.path << ": its license is at the end of the page */\n" << in_script(f.text)
            << "\n</script>\n";
      }
    }
    out << "<script>" << kDraw << "</script>\n";
    out << "<details><summary>Licenses of the scripts inlined above</summary>\n" << licenses << "</details>\n";
    out << "</body>\n</html>\n";
  }

 private:
  const Report& head_;
  std::unique_ptr<Renderer> spec_;  // the vega-lite format's renderer, writing the specification
  std::ostringstream spec_text_;
};

}  // namespace

std::string html_unavailable() {
  if (!embedded_scripts().empty()) return "";
  return "this edgeplan was built without the Vega scripts the page inlines: run `npm install --prefix DIR vega@5 "
         "vega-lite@5 vega-embed@6`, then `cmake -B BUILD -DEDGEPLAN_VEGA_DIR=DIR` (an absolute DIR) and rebuild "
         "(docs/charts.md)";
}

std::unique_ptr<Renderer> make_html_renderer(const Report& head, unsigned workers) {
  return std::make_unique<HtmlRenderer>(head, workers);
}

}  // namespace edgeplan::io
