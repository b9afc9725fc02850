// The formats --format takes: its parsing, its help text and the list in docs/json.md derive from kFormats.
#include <array>

#include "edgeplan/io/render/renderer.hpp"

namespace edgeplan::io {

std::unique_ptr<Renderer> make_table_renderer(const Report& head, unsigned workers);
std::unique_ptr<Renderer> make_json_renderer(const Report& head, unsigned workers);
std::unique_ptr<Renderer> make_csv_renderer(const Report& head, unsigned workers);
std::unique_ptr<Renderer> make_markdown_renderer(const Report& head, unsigned workers);
std::unique_ptr<Renderer> make_vega_lite_renderer(const Report& head, unsigned workers);
std::unique_ptr<Renderer> make_html_renderer(const Report& head, unsigned workers);
std::string html_unavailable();

namespace {

constexpr std::array kFormats{
    Format{"table", "aligned columns for people", make_table_renderer},
    Format{"json", "one object: schema, version, command, inputs, results", make_json_renderer},
    Format{"csv", "the command's main table, column keys as the header row", make_csv_renderer},
    Format{"md", "Markdown: the title as a heading, each table as a GitHub table", make_markdown_renderer},
    Format{"vega-lite", "the report's charts as one Vega-Lite v5 specification, their tables' rows inline",
           make_vega_lite_renderer, true},
    Format{"html", "one self-contained page: the tables and the charts, the Vega scripts inlined (a build option)",
           make_html_renderer, true, html_unavailable},
};

}  // namespace

std::span<const Format> formats() { return kFormats; }

const Format* find_format(std::string_view name) {
  for (const Format& f : kFormats) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string format_names() {
  std::string out;
  for (std::size_t i = 0; i < kFormats.size(); ++i) {
    if (i > 0) out += i + 1 == kFormats.size() ? " or " : ", ";
    out += kFormats[i].name;
  }
  return out;
}

}  // namespace edgeplan::io
