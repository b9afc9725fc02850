// The schema engine (io/schema/schema.hpp): reading, applying, echoing and writing profile keys by their rows.
#include "edgeplan/io/schema/schema.hpp"

#include <algorithm>
#include <cmath>

#include "edgeplan/io/schema/kinds.hpp"

namespace edgeplan::io::schema {
namespace {

template <class Spec>
std::optional<Value> read_value(const Row<Spec>& r, Fields& f) {
  switch (r.type) {
    case Type::number:
      if (r.required) return f.number(r.key, r.range);
      if (auto v = f.optional_number(r.key, r.range)) return *v;
      return std::nullopt;
    case Type::count:
      if (r.required) return std::int64_t{f.count(r.key, r.counts)};
      if (auto v = f.optional_count(r.key, r.counts)) return std::int64_t{*v};
      return std::nullopt;
    case Type::boolean:
      if (r.required) return f.boolean(r.key);
      if (auto v = f.optional_boolean(r.key)) return *v;
      return std::nullopt;
    case Type::string:
      if (r.required) return f.string(r.key);
      if (auto v = f.optional_string(r.key)) return *v;
      return std::nullopt;
    case Type::choice:
      if (r.required) return f.choice(r.key, r.choices());
      if (auto v = f.optional_choice(r.key, r.choices())) return *v;
      return std::nullopt;
    case Type::strings:
      if (r.required) return f.strings(r.key);
      if (auto v = f.optional_strings(r.key)) return *v;
      return std::nullopt;
  }
  return std::nullopt;
}

template <class Spec>
bool present(const Section<Spec>& s, const Spec& spec) {
  return !s.present || s.present(spec);
}

Node to_json(const Value& v) {
  return std::visit([](const auto& x) { return Node(x); }, v);
}

// The section of a full key and its row (with the entry's name in a table of named entries).
template <class Spec>
struct Located {
  const Section<Spec>* section = nullptr;
  Key<Spec> key;
};

// Where `key` ("prefill.tflops", "units.gpu.int8_tops") is; no row when no row has it.
template <class Spec>
Located<Spec> locate(const Schema<Spec>& schema, std::string_view key) {
  const auto dot = key.find('.');
  const std::string_view name = dot == std::string_view::npos ? std::string_view() : key.substr(0, dot);
  const std::string_view below = dot == std::string_view::npos ? key : key.substr(dot + 1);
  for (const Section<Spec>& s : schema.sections) {
    if (s.name != name) continue;
    std::string_view entry;
    std::string_view leaf = below;
    if (s.entries) {
      const auto at = below.find('.');
      if (at == std::string_view::npos) return {};
      entry = below.substr(0, at);
      leaf = below.substr(at + 1);
    }
    for (const Row<Spec>& r : s.rows) {
      if (r.key == leaf) return {&s, {&r, std::string(entry)}};
    }
  }
  return {};
}

// Whether a loaded struct holds the entry `entry` of `s` (any struct, when `s` is not a table of named entries).
template <class Spec>
bool holds_entry(const Section<Spec>& s, const Spec& spec, std::string_view entry) {
  if (!s.entries) return true;
  const std::vector<std::string> names = s.entries->names(spec);
  return std::find(names.begin(), names.end(), entry) != names.end();
}

// Reads one row's key of table `f` into `spec` (in entry `entry` of a table of named entries); false when absent.
template <class Spec>
bool read_row(const Row<Spec>& r, Fields& f, Spec& spec, std::string_view entry) {
  const std::optional<Value> v = read_value(r, f);
  if (!v) return false;
  if (r.check) {
    if (auto what = r.check(spec, *v)) f.fail(r.key, *what);
  }
  store(r, spec, entry, *v);
  return true;
}

// Reads every entry of the table of named entries `t` (section `s`): its name, its rows, its checks.
template <class Spec>
void read_entries(const Section<Spec>& s, Fields& t, Spec& spec) {
  const Entries<Spec>& e = *s.entries;
  for (const std::string& name : t.remaining_keys()) {
    if (const std::string why = e.refuse(name); !why.empty()) t.fail(name, why);
    std::optional<Fields> entry = t.table(name);
    e.open(spec, name);
    bool first = false, second = false;
    for (const Row<Spec>& r : s.rows) {
      if (!read_row(r, *entry, spec, name)) continue;
      first = first || r.key == e.one_of.first;
      second = second || r.key == e.one_of.second;
    }
    if (!e.one_of.first.empty() && first == second) {
      entry->fail({}, "needs exactly one of " + std::string(e.one_of.first) + " and " + std::string(e.one_of.second) +
                          std::string(e.one_of_note));
    }
    if (e.check) {
      if (auto what = e.check(spec, name)) entry->fail(what->first, what->second);
    }
    entry->finish();
  }
}

// Whether a row's check is one consistent() makes: a list's check is of its own items (Row::check).
template <class Spec>
bool checks_across(const Row<Spec>& r) {
  return r.check && r.type != Type::strings;
}

// Whether the rows of one entry (or of a plain section, entry "") pass their checks in a loaded struct.
template <class Spec>
bool rows_consistent(const Section<Spec>& s, const Spec& spec, std::string_view entry) {
  for (const Row<Spec>& r : s.rows) {
    if (!checks_across(r)) continue;
    if (const std::optional<Value> v = value_of(r, spec, entry); v && r.check(spec, *v)) return false;
  }
  return true;
}

// The echoed rows of one entry (or of a plain section, entry "") as a JSON object.
template <class Spec>
Node echo_rows(const Section<Spec>& s, const Spec& spec, std::string_view entry) {
  Node part = Node::object();
  for (const Row<Spec>& r : s.rows) {
    if (!r.echo) continue;
    if (const std::optional<Value> v = r.echo_in ? r.echo_in(spec, entry) : value_of(r, spec, entry)) {
      part[std::string(r.key)] = to_json(*v);
    }
  }
  return part;
}

// The written rows of one entry (or of a plain section, entry "") as `key = value` lines below the table `path`
// (opened before the first line; none for the top of the profile).
template <class Spec>
void write_table(const Section<Spec>& section, const Spec& spec, std::string_view entry, std::vector<std::string> path,
                 TomlText& out, std::span<const std::pair<std::string_view, std::string_view>> comments) {
  bool opened = path.empty();
  for (const Row<Spec>& r : section.rows) {
    const std::optional<Value> v = value_of(r, spec, entry);
    if (!v || (r.written && !r.written(spec))) continue;
    if (!opened) out.table(path);
    opened = true;
    std::string_view comment;
    for (const auto& [key, text] : comments) {
      if (key == r.key) comment = text;
    }
    std::visit([&](const auto& x) {
      using T = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<T, double>) {
        if (r.integral && x == std::floor(x)) {
          out.set(r.key, static_cast<std::int64_t>(x), comment);
        } else {
          out.set(r.key, x, comment);
        }
      } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
        toml::array a;
        for (const std::string& e : x) a.push_back(e);
        out.set(r.key, a, comment);
      } else if constexpr (std::is_same_v<T, std::string>) {
        out.set(r.key, std::string_view(x), comment);
      } else {
        out.set(r.key, x, comment);
      }
    }, *v);
  }
}

// A TOML integer written without a fraction or exponent (after an optional sign): 12, 0x1F, 1_000.
bool integer_text(std::string_view v) {
  if (v.starts_with('-') || v.starts_with('+')) v.remove_prefix(1);
  if (v.starts_with("0x") || v.starts_with("0o") || v.starts_with("0b")) return true;
  return !v.empty() && v.find_first_of(".eEinf") == std::string_view::npos;
}

}  // namespace

template <class Spec>
void read_rows(const std::vector<Row<Spec>>& rows, Fields& f, Spec& spec) {
  for (const Row<Spec>& r : rows) read_row(r, f, spec, {});
}

// Fails on the first key of `t` that its section no longer takes, with the text naming what replaced it.
template <class Spec>
void fail_retired(const Section<Spec>& s, const Fields& t) {
  if (s.retired.empty()) return;
  const std::vector<std::string> keys = t.remaining_keys();
  for (const auto& [key, replaced_by] : s.retired) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) t.fail(key, std::string(replaced_by));
  }
}

template <class Spec>
void read_schema(const Schema<Spec>& schema, Fields& f, Spec& spec) {
  for (const Section<Spec>& s : schema.sections) {
    if (s.name.empty()) {
      read_rows(s.rows, f, spec);
    } else if (!s.rows.empty()) {
      if (auto t = f.table(s.name)) {
        if (s.entries) {
          read_entries(s, *t, spec);
        } else {
          if (s.open) s.open(spec);
          fail_retired(s, *t);
          read_rows(s.rows, *t, spec);
        }
        t->finish();
      }
    }
    if (s.after) s.after(f, spec);
  }
}

template <class Spec>
std::optional<Key<Spec>> find_key(const Schema<Spec>& schema, std::string_view key) {
  Located<Spec> at = locate(schema, key);
  if (!at.key.row) return std::nullopt;
  return std::move(at.key);
}

template <class Spec>
std::optional<Value> held(const Schema<Spec>& schema, std::string_view key, const Spec& spec) {
  const Located<Spec> at = locate(schema, key);
  if (!at.key.row || !present(*at.section, spec) || !holds_entry(*at.section, spec, at.key.entry)) return std::nullopt;
  return at.key.get(spec);
}

template <class Spec>
bool consistent(const Schema<Spec>& schema, const Spec& spec) {
  for (const Section<Spec>& s : schema.sections) {
    if (!present(s, spec)) continue;
    if (!s.entries) {
      if (!rows_consistent(s, spec, {})) return false;
      continue;
    }
    if (s.entries->consistent && !s.entries->consistent(spec)) return false;
    if (std::none_of(s.rows.begin(), s.rows.end(), checks_across<Spec>)) continue;  // names no entry (sweeps)
    for (const std::string& name : s.entries->names(spec)) {
      if (!rows_consistent(s, spec, name)) return false;
    }
  }
  return !schema.also_consistent || schema.also_consistent(spec);
}

template <class Spec>
Result<bool> apply_value(const Schema<Spec>& schema, Spec& spec, std::string_view key, std::string_view value,
                         const std::string& original, const FieldSource& source) {
  const Located<Spec> at = locate(schema, key);
  const Section<Spec>* section = at.section;
  const Row<Spec>* row = at.key.row;
  if (!row || !row->settable || !present(*section, spec) || !holds_entry(*section, spec, at.key.entry)) return false;
  if (section->entries) {  // the loader refuses an entry stating both of its one_of keys
    const auto& [first, second] = section->entries->one_of;
    const std::string_view other = row->key == first ? second : row->key == second ? first : std::string_view();
    for (const Row<Spec>& r : section->rows) {
      if (!other.empty() && r.key == other && value_of(r, spec, at.key.entry)) return false;
    }
  }
  FieldSource here = source;
  here.overrides[std::string(schema.profile) + "." + std::string(key)] = original;
  Spec changed = spec;
  try {
    toml::table root;
    apply_override(root, key, value, original);
    Fields top(root, here, std::string(schema.profile));
    std::optional<Fields> table = section->name.empty() ? std::optional<Fields>(top) : top.table(section->name);
    if (section->entries) table = table->table(at.key.entry);
    read_row(*row, *table, changed, at.key.entry);
  } catch (const FieldError& e) {
    return Error{e.what()};
  }
  if (!consistent(schema, changed)) return false;
  spec = std::move(changed);
  return true;
}

template <class Spec>
std::optional<Value> parse_fast(const Row<Spec>& row, std::string_view value) {
  const std::optional<double> v = override_number(value);
  if (!v) return std::nullopt;
  if (row.type == Type::number) {
    if (!number_acceptable(*v, row.range)) return std::nullopt;
    return *v;
  }
  if (row.type != Type::count || !integer_text(value) || *v < row.counts.min || *v > row.counts.max) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

template <class Spec>
void echo(const Schema<Spec>& schema, const Spec& spec, Node& j) {
  for (const Section<Spec>& s : schema.sections) {
    if (present(s, spec)) {
      Node part = Node::object();
      if (!s.entries) {
        part = echo_rows(s, spec, {});
      } else {
        for (const std::string& name : s.entries->names(spec)) {
          if (Node entry = echo_rows(s, spec, name); !entry.empty()) part[name] = std::move(entry);
        }
      }
      if (s.name.empty()) {
        for (auto& [k, v] : part.items()) j[k] = std::move(v);
      } else if (!part.empty()) {
        j[std::string(s.name)] = std::move(part);
      }
    }
    if (s.echo_custom) s.echo_custom(spec, j);
  }
}

template <class Spec>
void write_rows(const Section<Spec>& section, const Spec& spec, TomlText& out,
                std::span<const std::pair<std::string_view, std::string_view>> comments) {
  if (!present(section, spec)) return;
  if (!section.entries) {
    std::vector<std::string> path;
    if (!section.name.empty()) path.emplace_back(section.name);
    write_table(section, spec, {}, std::move(path), out, comments);
    return;
  }
  for (const std::string& name : section.entries->names(spec)) {
    write_table(section, spec, name, {std::string(section.name), name}, out, comments);
  }
}

template <class Spec>
std::vector<std::string> schema_keys(const Schema<Spec>& schema) {
  std::vector<std::string> out;
  for (const Section<Spec>& s : schema.sections) {
    std::string prefix = s.name.empty() ? "" : std::string(s.name) + ".";
    if (s.entries) prefix += std::string(s.entries->placeholder) + ".";
    for (const Row<Spec>& r : s.rows) out.push_back(prefix + std::string(r.key));
  }
  return out;
}

template <class Spec>
const Section<Spec>& section(const Schema<Spec>& schema, std::string_view name) {
  return *std::find_if(schema.sections.begin(), schema.sections.end(),
                       [&](const Section<Spec>& s) { return s.name == name; });
}

#define EDGEPLAN_SCHEMA_INSTANTIATE(Spec)                                                                       \
  template void read_rows(const std::vector<Row<Spec>>&, Fields&, Spec&);                                       \
  template void read_schema(const Schema<Spec>&, Fields&, Spec&);                                               \
  template std::optional<Key<Spec>> find_key(const Schema<Spec>&, std::string_view);                           \
  template std::optional<Value> held(const Schema<Spec>&, std::string_view, const Spec&);                   \
  template bool consistent(const Schema<Spec>&, const Spec&);                                                   \
  template Result<bool> apply_value(const Schema<Spec>&, Spec&, std::string_view, std::string_view,            \
                                    const std::string&, const FieldSource&);                                    \
  template std::optional<Value> parse_fast(const Row<Spec>&, std::string_view);                                 \
  template void echo(const Schema<Spec>&, const Spec&, Node&);                                                  \
  template void write_rows(const Section<Spec>&, const Spec&, TomlText&,                                        \
                           std::span<const std::pair<std::string_view, std::string_view>>);                     \
  template std::vector<std::string> schema_keys(const Schema<Spec>&);                                           \
  template const Section<Spec>& section(const Schema<Spec>&, std::string_view);

EDGEPLAN_SCHEMA_INSTANTIATE(DeviceSpec)
EDGEPLAN_SCHEMA_INSTANTIATE(ModelSpec)
EDGEPLAN_SCHEMA_INSTANTIATE(CloudSpec)
EDGEPLAN_SCHEMA_INSTANTIATE(RouteRequest)
EDGEPLAN_SCHEMA_INSTANTIATE(Op)
EDGEPLAN_SCHEMA_INSTANTIATE(RuntimeClass)
EDGEPLAN_SCHEMA_INSTANTIATE(StorageClass)

}  // namespace edgeplan::io::schema
