#include "edgeplan/io/fields.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

#include "edgeplan/util/names.hpp"
#include "edgeplan/io/text.hpp"
#include "edgeplan/io/toml_parse.hpp"

namespace edgeplan::io {
namespace {

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date or time";
  }
}

std::string show(double v) { return fmt::format("{}", v); }

std::string range_text(Range r) {
  switch (r) {
    case Range::positive: return "greater than 0";
    case Range::non_negative: return "0 or more";
    case Range::unit_interval: return "in (0, 1]";
    case Range::probability: return "in [0, 1]";
    case Range::any: return "finite";
  }
  return "";
}

// VALUE of a --set KEY=VALUE as TOML (the table {v = VALUE}); nullopt when it is not one TOML value.
std::optional<toml::table> parse_value(std::string_view value) {
  auto parsed = parse_toml("v = " + std::string(value), "--set");
  if (parsed && parsed->size() == 1) return std::move(*parsed);
  return std::nullopt;
}

bool in_range(double v, Range r) {
  switch (r) {
    case Range::positive: return v > 0;
    case Range::non_negative: return v >= 0;
    case Range::unit_interval: return v > 0 && v <= 1;
    case Range::probability: return v >= 0 && v <= 1;
    case Range::any: return true;
  }
  return false;
}

}  // namespace

Fields::Fields(const toml::table& table, const FieldSource& source, std::string prefix)
    : table_(&table), source_(&source), prefix_(std::move(prefix)) {}

std::string Fields::full_key(std::string_view key) const {
  if (key.empty()) return prefix_;
  return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
}

std::string Fields::where(std::string_view key) const {
  const std::string full = full_key(key);
  if (auto it = source_->overrides.find(full); it != source_->overrides.end()) {
    return fmt::format("{} ({})", source_->file, it->second);
  }
  const toml::node* node = key.empty() ? table_ : table_->get(key);
  const toml::source_region& region = node ? node->source() : table_->source();
  if (region.begin.line == 0) return source_->file;
  return fmt::format("{}:{}:{}", source_->file, region.begin.line, region.begin.column);
}

void Fields::fail(std::string_view key, const std::string& what) const {
  throw FieldError(fmt::format("{}: {} {}", where(key), full_key(key), what));
}

const toml::node* Fields::find(std::string_view key) {
  read_.emplace_back(key);
  return table_->get(key);
}

namespace {

// What is wrong with `v` as a number of `range` ("must be ..."), or nullopt: the one rule of a profile's numbers
// (Fields::optional_number) and of a sweep's values set in place (number_acceptable).
std::optional<std::string> number_problem(double v, Range range) {
  if (!std::isfinite(v)) return "must be a finite number (got " + show(v) + ")";
  if (std::abs(v) > kMaxMagnitude) return fmt::format("must be at most {:g} in magnitude (got {})", kMaxMagnitude, v);
  if (v != 0 && !std::isnormal(v)) return fmt::format("must be 0 or a normal number (got {}, a denormal)", v);
  if ((range == Range::positive || range == Range::unit_interval) && v > 0 && v < kMinPositive) {
    return fmt::format("must be at least {:g} (got {})", kMinPositive, v);
  }
  if (!in_range(v, range)) return "must be " + range_text(range) + " (got " + show(v) + ")";
  return std::nullopt;
}

}  // namespace

std::optional<double> Fields::optional_number(std::string_view key, Range range) {
  const toml::node* n = find(key);
  if (!n) return std::nullopt;
  double v = 0;
  if (auto i = n->as_integer()) {
    v = static_cast<double>(i->get());
  } else if (auto f = n->as_floating_point()) {
    v = f->get();
  } else {
    fail(key, "must be a number, not " + type_name(*n));
  }
  if (const std::optional<std::string> problem = number_problem(v, range)) fail(key, *problem);
  return v;
}

bool number_acceptable(double v, Range range) { return !number_problem(v, range); }

double Fields::number(std::string_view key, Range range) {
  auto v = optional_number(key, range);
  if (!v) missing(key);
  return *v;
}

double Fields::number_or(std::string_view key, Range range, double fallback) {
  return optional_number(key, range).value_or(fallback);
}

std::optional<std::uint32_t> Fields::optional_count(std::string_view key, CountRange range) {
  const toml::node* n = find(key);
  if (!n) return std::nullopt;
  auto i = n->as_integer();
  if (auto f = n->as_floating_point()) fail(key, "must be a whole number (got " + show(f->get()) + ")");
  if (!i) fail(key, "must be a whole number, not " + type_name(*n));
  const std::int64_t v = i->get();
  if (v < std::int64_t{range.min}) fail(key, fmt::format("must be at least {} (got {})", range.min, v));
  if (v > std::int64_t{range.max}) fail(key, fmt::format("must be at most {} (got {})", range.max, v));
  return static_cast<std::uint32_t>(v);
}

std::uint32_t Fields::count(std::string_view key, CountRange range) {
  auto v = optional_count(key, range);
  if (!v) missing(key);
  return *v;
}

std::optional<std::string> Fields::optional_string(std::string_view key) {
  const toml::node* n = find(key);
  if (!n) return std::nullopt;
  auto s = n->as_string();
  if (!s) fail(key, "must be a string, not " + type_name(*n));
  return s->get();
}

std::string Fields::string(std::string_view key) {
  auto v = optional_string(key);
  if (!v) missing(key);
  return *v;
}

std::optional<bool> Fields::optional_boolean(std::string_view key) {
  const toml::node* n = find(key);
  if (!n) return std::nullopt;
  auto b = n->as_boolean();
  if (!b) fail(key, "must be true or false, not " + type_name(*n));
  return b->get();
}

bool Fields::boolean_or(std::string_view key, bool fallback) { return optional_boolean(key).value_or(fallback); }

bool Fields::boolean(std::string_view key) {
  if (!table_->get(key)) missing(key);
  return boolean_or(key, false);
}

std::vector<std::string> Fields::strings(std::string_view key) {
  std::optional<std::vector<std::string>> v = optional_strings(key);
  if (!v) missing(key);
  return std::move(*v);
}

std::optional<std::vector<std::string>> Fields::optional_strings(std::string_view key) {
  const toml::node* n = find(key);
  if (!n) return std::nullopt;
  auto a = n->as_array();
  if (!a) fail(key, "must be an array of strings, not " + type_name(*n));
  std::vector<std::string> out;
  for (const toml::node& e : *a) {
    auto s = e.as_string();
    if (!s) fail(key, "must be an array of strings, but holds " + type_name(e));
    out.push_back(s->get());
  }
  return out;
}

std::optional<std::string> Fields::optional_choice(std::string_view key, const std::vector<std::string>& choices) {
  auto v = optional_string(key);
  if (!v) return std::nullopt;
  for (const std::string& c : choices) {
    if (c == *v) return v;
  }
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
  fail(key, fmt::format("must be one of {} (got \"{}\"){}", list, clipped(*v), util::did_you_mean(*v, choices)));
}

std::string Fields::choice(std::string_view key, const std::vector<std::string>& choices) {
  auto v = optional_choice(key, choices);
  if (!v) missing(key);
  return *v;
}

std::optional<Fields> Fields::table(std::string_view key) {
  const toml::node* n = find(key);
  if (!n) return std::nullopt;
  auto t = n->as_table();
  if (!t) fail(key, "must be a table, not " + type_name(*n));
  return Fields(*t, *source_, full_key(key));
}

std::vector<Fields> Fields::tables(std::string_view key) {
  const toml::node* n = find(key);
  std::vector<Fields> out;
  if (!n) return out;
  auto a = n->as_array();
  if (!a) fail(key, "must be an array of tables ([[" + std::string(key) + "]]), not " + type_name(*n));
  for (std::size_t i = 0; i < a->size(); ++i) {
    auto t = (*a)[i].as_table();
    if (!t) fail(key, "must be an array of tables, but holds " + type_name((*a)[i]));
    out.emplace_back(*t, *source_, fmt::format("{}[{}]", full_key(key), i));
  }
  return out;
}

std::vector<std::string> Fields::remaining_keys() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : *table_) {
    if (std::find(read_.begin(), read_.end(), std::string(k.str())) == read_.end()) out.emplace_back(k.str());
  }
  return out;
}

void Fields::missing(std::string_view key) const {
  // A misspelt key is the likelier story than a forgotten one: report the look-alike first.
  // Keys already read are valid, whatever they look like.
  const std::vector<std::string> wanted{std::string(key)};
  for (const std::string& k : remaining_keys()) {
    if (util::nearest(k, wanted)) {
      throw FieldError(fmt::format("{}: unknown key {}; did you mean {}?", where(k), full_key(clipped(k)), full_key(key)));
    }
  }
  throw FieldError(fmt::format("{}: missing required key {}", where({}), full_key(key)));
}

void Fields::finish() const {
  for (const auto& [k, v] : *table_) {
    if (std::find(read_.begin(), read_.end(), std::string(k.str())) != read_.end()) continue;
    std::vector<std::string> known;
    for (const std::string& r : read_) known.push_back(full_key(r));
    throw FieldError(fmt::format("{}: unknown key {}{}", where(k.str()), full_key(clipped(k.str())),
                                 util::did_you_mean(full_key(k.str()), known)));
  }
}

void apply_override(toml::table& root, std::string_view key, std::string_view value, const std::string& original) {
  if (static_cast<std::size_t>(std::count(key.begin(), key.end(), '.')) >= kMaxTomlDepth) {
    throw FieldError(fmt::format("{}: the key has more than {} levels", original, kMaxTomlDepth));
  }
  toml::table* table = &root;
  std::string_view rest = key;
  for (auto dot = rest.find('.'); dot != std::string_view::npos; dot = rest.find('.')) {
    const std::string segment(rest.substr(0, dot));
    rest.remove_prefix(dot + 1);
    if (segment.empty()) throw FieldError(original + ": empty key segment");
    toml::node* next = table->get(segment);
    if (!next) next = &table->insert_or_assign(segment, toml::table{}).first->second;
    if (!next->is_table()) throw FieldError(original + ": " + segment + " is not a table");
    table = next->as_table();
  }
  if (rest.empty()) throw FieldError(original + ": empty key");
  if (std::optional<toml::table> parsed = parse_value(value)) {
    parsed->get("v")->visit([&](auto&& node) { table->insert_or_assign(std::string(rest), node); });
  } else {
    table->insert_or_assign(std::string(rest), std::string(value));
  }
}

std::optional<double> override_number(std::string_view value) {
  // A plain decimal (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?) reads the same in TOML and from_chars;
  // anything else (hex, underscores, inf, text) goes through the TOML parser.
  std::size_t i = value.starts_with('-') ? 1 : 0;
  const std::size_t int_start = i;
  while (i < value.size() && value[i] >= '0' && value[i] <= '9') ++i;
  const std::size_t int_digits = i - int_start;
  bool plain = int_digits > 0 && int_digits <= 15 && (int_digits == 1 || value[int_start] != '0');
  bool integer = true;
  auto digits = [&] {
    const std::size_t from = i;
    while (i < value.size() && value[i] >= '0' && value[i] <= '9') ++i;
    return i > from;
  };
  if (plain && i < value.size() && value[i] == '.') {
    ++i;
    plain = digits();
    integer = false;
  }
  if (plain && i < value.size() && (value[i] == 'e' || value[i] == 'E')) {
    ++i;
    if (i < value.size() && (value[i] == '+' || value[i] == '-')) ++i;
    plain = digits();
    integer = false;
  }
  if (plain && i == value.size()) {  // out of range (1e400) goes to the TOML parser too
    const char* end = value.data() + value.size();
    if (integer) {
      std::int64_t n = 0;
      if (std::from_chars(value.data(), end, n).ec == std::errc()) return static_cast<double>(n);
    } else {
      double v = 0;
      if (std::from_chars(value.data(), end, v).ec == std::errc()) return v;
    }
  }
  const std::optional<toml::table> parsed = parse_value(value);
  if (!parsed) return std::nullopt;
  const toml::node* n = parsed->get("v");
  if (auto i64 = n->as_integer()) return static_cast<double>(i64->get());
  if (auto f = n->as_floating_point()) return f->get();
  return std::nullopt;
}

}  // namespace edgeplan::io
