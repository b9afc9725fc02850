#include "edgeplan/io/require.hpp"

#include <array>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "edgeplan/util/names.hpp"
#include "edgeplan/util/text.hpp"
#include "edgeplan/io/json.hpp"
#include "edgeplan/io/text.hpp"

namespace edgeplan::io {
namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

Node parse_bound(const std::string& v) {
  if (v == "true") return true;
  if (v == "false") return false;
  double d = 0;
  const char* end = v.data() + v.size();
  auto [ptr, ec] = std::from_chars(v.data(), end, d);
  if (ec == std::errc() && ptr == end && std::isfinite(d)) return d;
  // A token count as --context takes it: 8k, 32k, 1M.
  if (const std::optional<std::uint64_t> tokens = util::parse_tokens(v)) return static_cast<double>(*tokens);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    return v.substr(1, v.size() - 2);
  }
  return v;
}

std::string show(const Node& n) {
  if (n.is_string()) return n.string();
  if (n.is_number_float()) return fmt::format("{}", n.number());
  return json_text(to_json(n));
}

// Whether two values are of one JSON type (numbers aside, which compare as numbers).
bool same_kind(const Node& a, const Node& b) {
  return a.is_boolean() == b.is_boolean() && a.is_string() == b.is_string() && a.is_array() == b.is_array() &&
         a.is_object() == b.is_object();
}

// A table: an array of objects (the rows).
bool is_table(const Node& j) { return j.is_array() && !j.empty() && j.front().is_object(); }

// Every FIELD a requirement on `j` can name: scalars, objects' members, a table's fields by its first row's key
// (`formats[Q4_K_M].tok_per_s`) and, at the top, the fields of a one-row table by their own names.
void collect_paths(const Node& j, const std::string& prefix, std::vector<std::string>& out) {
  if (!j.is_object()) return;
  for (const auto& [k, v] : j.items()) {
    const std::string path = prefix.empty() ? k : prefix + "." + k;
    if (is_table(v)) {
      const auto& first = v.front();
      const std::string id = first.items().front().second.is_string() ? first.items().front().second.string() : "0";
      for (const auto& [fk, fv] : first.items()) out.push_back(path + "[" + id + "]." + fk);
      if (prefix.empty() && v.size() == 1) {
        for (const auto& [fk, fv] : first.items()) out.push_back(fk);
      }
    } else if (v.is_object()) {
      collect_paths(v, path, out);
    } else if (!v.is_array()) {
      out.push_back(path);
    }
  }
}

// The field `name` of the one-row tables of results: none, or where it is; an Error when two tables have it.
Result<const Node*> one_row_field(const Node& results, const std::string& name, const std::string& field) {
  const Node* found = nullptr;
  std::string table;
  for (const auto& [k, v] : results.items()) {
    if (!is_table(v) || v.size() != 1 || !v.front().contains(name)) continue;
    if (found) {
      return Error{fmt::format("--require: '{}' is a field of the one-row tables {} and {}: name the table, as in '{}[0].{}'",
                               clipped(field), table, k, table, clipped(name))};
    }
    found = &v.front()[name];
    table = k;
  }
  return found;
}

}  // namespace

Result<Requirement> parse_requirement(std::string_view text) {
  static constexpr std::array kOps{"<=", ">=", "==", "!=", "<", ">"};
  for (const char* op : kOps) {
    const auto at = text.find(op);
    if (at == std::string_view::npos) continue;
    Requirement r;
    r.field = trim(text.substr(0, at));
    r.op = op;
    const std::string value = trim(text.substr(at + std::string_view(op).size()));
    r.text = std::string(text);
    if (r.field.empty() || value.empty()) break;
    r.bound = parse_bound(value);
    return r;
  }
  return Error{fmt::format("--require '{}': expected 'FIELD OP VALUE' with OP one of < <= > >= == !=, "
                           "for example 'fits == true'", clipped(text))};
}

Result<Node> lookup_field(const Node& results, const std::string& field) {
  const Node* at = &results;
  std::string_view rest = field;
  while (!rest.empty()) {
    const auto dot = rest.find('.');
    std::string segment(rest.substr(0, dot));
    rest = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
    std::string selector;
    bool has_selector = false;
    if (const auto open = segment.find('['); open != std::string::npos && segment.back() == ']') {
      selector = segment.substr(open + 1, segment.size() - open - 2);
      segment.resize(open);
      has_selector = true;
    }
    const Node* next = at->is_object() && at->contains(segment) ? &(*at)[segment] : nullptr;
    if (!next && !has_selector && at == &results) {  // a field of a one-row table, by its own name
      auto in_row = one_row_field(results, segment, field);
      if (!in_row) return in_row.error();
      next = *in_row;
    }
    if (next && has_selector) {
      const Node* picked = nullptr;
      if (next->is_array()) {
        for (const Node& e : *next) {
          if (e.is_object() && !e.empty() && show(e.items().front().second) == selector) {
            picked = &e;
            break;
          }
        }
        std::size_t index = 0;
        auto [p, ec] = std::from_chars(selector.data(), selector.data() + selector.size(), index);
        if (!picked && ec == std::errc() && p == selector.data() + selector.size() && index < next->size()) {
          picked = &(*next)[index];
        }
      }
      next = picked;
    }
    if (!next || (!has_selector && next->is_array())) {
      std::vector<std::string> paths;
      collect_paths(results, "", paths);
      std::string hint;
      for (const auto& [k, v] : results.items()) {  // a field of a table of several rows: say how to pick one
        if (hint.empty() && at == &results && !has_selector && is_table(v) && v.front().contains(segment)) {
          const std::string id = v.front().items().front().second.is_string() ? v.front().items().front().second.string() : "0";
          hint = fmt::format(": '{}' is a field of the {} rows of {}; pick one, as in '{}[{}].{}'", clipped(segment),
                             v.size(), k, k, id, clipped(segment));
        }
      }
      if (hint.empty()) hint = util::did_you_mean(field, paths);
      if (hint.empty()) {
        std::string list;
        for (const std::string& p : paths) list += (list.empty() ? "" : ", ") + p;
        hint = " (its fields: " + (list.empty() ? std::string("none") : list) + ")";
      }
      return Error{fmt::format("--require: no field '{}' in the results{}", clipped(field), hint)};
    }
    at = next;
  }
  return *at;
}

Result<Outcome> evaluate_requirement(const Node& results, const Requirement& r) {
  auto value = lookup_field(results, r.field);
  if (!value) return value.error();
  const Node& v = *value;
  bool pass = false;
  if (v.is_number() && r.bound.is_number()) {
    const double a = v.number(), b = r.bound.number();
    pass = r.op == "<" ? a < b : r.op == "<=" ? a <= b : r.op == ">" ? a > b : r.op == ">=" ? a >= b
         : r.op == "==" ? a == b : a != b;
  } else if (v.is_null()) {
    return Error{fmt::format("--require '{}': {} has no value for these inputs", r.text, r.field)};
  } else if (r.op == "==" || r.op == "!=") {
    const bool same = same_kind(v, r.bound) ? v == r.bound : show(v) == show(r.bound);
    pass = r.op == "==" ? same : !same;
  } else {
    return Error{fmt::format("--require '{}': cannot compare {} ({}) with {}", clipped(r.text), clipped(r.field), clipped(show(v)), r.op)};
  }
  return Outcome{pass, show(v), v};
}

Result<std::vector<std::string>> check_requirements(const Node& results, const std::vector<Requirement>& reqs) {
  std::vector<std::string> failures;
  for (const Requirement& r : reqs) {
    auto outcome = evaluate_requirement(results, r);
    if (!outcome) return outcome.error();
    if (!outcome->pass) {
      failures.push_back(fmt::format("requirement failed: {} (got {} = {})", clipped(r.text), clipped(r.field), clipped(outcome->value)));
    }
  }
  return failures;
}

}  // namespace edgeplan::io
