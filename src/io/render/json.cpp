// JSON, for scripts: {schema, version, command, inputs, results} with each table folded into results as an array
// of objects (docs/json.md), indented by two. Counts of bytes, parameters and tokens are integers because they
// are declared counts (io::Node::count, io::Column::count), never by their key. Strings that are not UTF-8 are
// written with U+FFFD for their invalid bytes, and one warning says how many there were.
#include <cmath>

#include <fmt/format.h>

#include "edgeplan/io/json.hpp"
#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/text.hpp"
#include "edgeplan/io/warnings.hpp"

namespace edgeplan::io {
namespace {

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

Json envelope(const Report& r, const Node& results) {
  Json doc = Json::object();
  doc["schema"] = kJsonSchema;
  doc["version"] = version();
  doc["command"] = r.command;
  doc["inputs"] = to_json(r.inputs);
  doc["results"] = to_json(results);
  return doc;
}

class JsonRenderer final : public Renderer {
 public:
  JsonRenderer(const Report& head, unsigned workers) : head_(head), invalid_(workers + 1) {}

  // The document with the first table's rows left out, cut where they go: before is the text up to its "[]"
  // (the last array of a document whose results stop at that table), after the text that follows it.
  void begin(std::ostream& out) override {
    Report rest = head_;
    if (!rest.tables.empty()) rest.tables.front().rows.clear();
    const Json doc = envelope(rest, full_results(rest));
    invalid_.back().note_all(doc);
    const std::string text = json_text(doc, 2) + "\n";
    if (rest.tables.empty()) {
      out << text;
      return;
    }
    rest.tables.resize(1);
    const std::string before = json_text(envelope(rest, full_results(rest)), 2);
    const auto cut = before.rfind("[]");
    out << text.substr(0, cut) << "[";
    after_ = text.substr(cut + 2);
  }
  void rows(unsigned worker, std::span<const Row> block, std::string& text) override {
    const std::vector<Column>& columns = head_.tables.front().columns;
    for (const Row& row : block) {
      const Json obj = row_json(row, columns);
      for (const Json& v : obj) {
        if (v.is_string()) invalid_[worker].note(v.get_ref<const std::string&>());
      }
      text += ",\n      ";  // a row of results' array, as the whole document's dump(2) indents it
      for (char ch : json_text(obj, 2)) {
        text += ch;
        if (ch == '\n') text += "      ";
      }
    }
  }
  void write(std::ostream& out, const std::string& text) override {
    if (text.empty()) return;
    out << (any_rows_ ? std::string_view(text) : std::string_view(text).substr(1));
    any_rows_ = true;
  }
  void end(std::ostream& out) override {
    if (!head_.tables.empty()) out << (any_rows_ ? "\n    ]" : "]") << after_;
    InvalidUtf8 all = invalid_.back();
    for (std::size_t w = 0; w + 1 < invalid_.size(); ++w) all.add(invalid_[w]);
    all.warn_if_any();
  }

 private:
  const Report& head_;
  std::vector<InvalidUtf8> invalid_;  // per worker, then the document around the rows
  std::string after_;                 // the text after the first table's rows
  bool any_rows_ = false;
};

}  // namespace

std::string json_text(const Json& j, int indent) { return j.dump(indent, ' ', false, Json::error_handler_t::replace); }

std::unique_ptr<Renderer> make_json_renderer(const Report& head, unsigned workers) {
  return std::make_unique<JsonRenderer>(head, workers);
}

}  // namespace edgeplan::io
