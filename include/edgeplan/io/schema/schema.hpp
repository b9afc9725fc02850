// One schema table per profile kind: each key a profile may hold is one Row {key, type, range, unit conversion
// (set/get), checks against keys read before it}, grouped in Sections in the order the loader reads them. The
// loader (read_schema), --set and --sweep on a loaded struct (apply_value, parse_fast), the JSON echo of the
// inputs (echo) and the TOML writers (write_rows) all read the same rows, so a new profile key is one row
// (and one line of docs/profiles.md, which docs_test checks against schema_keys). The tables themselves live
// in src/io/schema/<kind>.cpp; the kinds are listed in io/schema/kinds.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "edgeplan/io/fields.hpp"
#include "edgeplan/io/report.hpp"
#include "edgeplan/io/toml_text.hpp"

namespace edgeplan::io::schema {

enum class Type {
  number,   // a TOML integer or float in `range`
  count,    // a whole number in `counts`
  boolean,  // true or false
  string,   // any string
  choice,   // one of `choices()`
  strings,  // an array of strings
};

// A value in the profile's own unit and type: number -> double, count -> int64, boolean -> bool,
// string and choice -> string, strings -> vector.
using Value = std::variant<double, std::int64_t, bool, std::string, std::vector<std::string>>;

template <class Spec>
struct Row {
  std::string_view key;    // below its section: "tflops" in [prefill]
  Type type = Type::number;
  bool required = false;   // missing from a present table: the loader's "missing required key"
  Range range = Range::any;                           // number
  CountRange counts{};                                // count
  std::vector<std::string> (*choices)() = nullptr;    // choice
  // Stores a value read from the profile: converts it from the profile's unit (GB/s, GiB, ms) to the member's.
  void (*set)(Spec&, const Value&) = nullptr;
  // The value back in the profile's unit; nullopt when the struct does not hold it (an absent section).
  std::optional<Value> (*get)(const Spec&) = nullptr;
  // A check against keys read before this one, made before `set`: the error text after the full key, or nullopt.
  // Also what consistent() asks of a loaded struct, except of a strings row, whose check is of its own items.
  std::optional<std::string> (*check)(const Spec&, const Value&) = nullptr;
  bool echo = true;                          // repeated in the JSON inputs (docs/json.md)
  bool (*written)(const Spec&) = nullptr;    // TOML writers write the key when this holds (nullptr: always)
  bool integral = false;                     // a number written as a TOML integer when whole (params)
  // Whether apply_value and sweeps may set it on a loaded struct: false when the loader derives another key's
  // default from it (prefill.efficiency), which a loaded struct cannot tell from a stated value.
  bool settable = true;
  // A row of a table of named entries (Section::entries) has these in place of set and get: they take the
  // entry's name ("gpu" in [units.gpu]).
  void (*set_in)(Spec&, std::string_view entry, const Value&) = nullptr;
  std::optional<Value> (*get_in)(const Spec&, std::string_view entry) = nullptr;
  // What the JSON echo gives where the struct derives a value the profile does not state (a unit's
  // bandwidth_gbps from its bandwidth_efficiency); nullptr: get_in.
  std::optional<Value> (*echo_in)(const Spec&, std::string_view entry) = nullptr;
};

// A section that is a table of named entries ([units.gpu], [formats.Q4_K_M]): each entry holds the section's
// rows, whose set_in and get_in take the entry's name.
template <class Spec>
struct Entries {
  std::string_view placeholder;                      // the name in docs and schema_keys: "U" in "units.U.ops"
  std::string (*refuse)(std::string_view name) = nullptr;  // why no entry may have this name ("" when one may)
  void (*open)(Spec&, std::string_view name) = nullptr;    // an entry is present: before its keys
  std::vector<std::string> (*names)(const Spec&) = nullptr;  // the entries a loaded struct holds, in order
  // Exactly one of these two keys in each entry; `one_of_note` follows "needs exactly one of A and B".
  std::pair<std::string_view, std::string_view> one_of{};
  std::string_view one_of_note{};
  // A check across an entry's keys after they are read: the key it is about ("" for the entry) and the error
  // text, or nullopt.
  std::optional<std::pair<std::string_view, std::string>> (*check)(const Spec&, std::string_view name) = nullptr;
  // Whether every entry of a loaded struct passes `check`: what consistent() asks, per sweep combination.
  bool (*consistent)(const Spec&) = nullptr;
};

// Stores a value through a row; `entry` names the entry of a table of named entries ("" otherwise).
template <class Spec>
void store(const Row<Spec>& r, Spec& spec, std::string_view entry, const Value& v) {
  r.set ? r.set(spec, v) : r.set_in(spec, entry, v);
}
// A row's value in a loaded struct (see Row::get).
template <class Spec>
std::optional<Value> value_of(const Row<Spec>& r, const Spec& spec, std::string_view entry) {
  return r.get ? r.get(spec) : r.get_in(spec, entry);
}

// A full key's row and, for a row of a table of named entries, the entry's name.
template <class Spec>
struct Key {
  const Row<Spec>* row = nullptr;
  std::string entry;
  void set(Spec& spec, const Value& v) const { store(*row, spec, entry, v); }
  std::optional<Value> get(const Spec& spec) const { return value_of(*row, spec, entry); }
};

template <class Spec>
struct Section {
  std::string_view name;                  // "prefill"; "" for keys at the top of the profile
  std::vector<Row<Spec>> rows;            // in the order the loader reads them
  void (*open)(Spec&) = nullptr;          // the table is present: before its keys (emplaces an optional)
  bool (*present)(const Spec&) = nullptr;  // whether a loaded struct has the section (nullptr: always)
  void (*after)(Fields&, Spec&) = nullptr;  // after the section, present or not; Fields of the profile's top
  void (*echo_custom)(const Spec&, Node&) = nullptr;  // JSON of what code derives, after the rows
  // Keys the section no longer takes, each with the error text naming what replaced it (read before the rows).
  std::vector<std::pair<std::string_view, std::string_view>> retired{};
  std::optional<Entries<Spec>> entries{};  // a table of named entries: `rows` are each entry's
};

// For rows that the loader accepts and nothing stores (`description`, `source`): the setter and getter.
template <class Spec>
void ignore(Spec&, const Value&) {}
template <class Spec>
std::optional<Value> none(const Spec&) { return std::nullopt; }

template <class Spec>
struct Schema {
  std::string_view profile;  // "device": the first segment of --set keys and of every full key
  std::vector<Section<Spec>> sections;
  bool (*also_consistent)(const Spec&) = nullptr;  // checks of `after` hooks that rows do not make
};

// Reads a whole profile into `spec` (the caller finishes `f`).
template <class Spec>
void read_schema(const Schema<Spec>& schema, Fields& f, Spec& spec);

// The row of a key below the profile ("prefill.tflops", "units.gpu.int8_tops"); nullopt when no row has it.
template <class Spec>
std::optional<Key<Spec>> find_key(const Schema<Spec>& schema, std::string_view key);

// The value of `key` ("prefill.tflops") in a loaded struct, in the profile's unit; nullopt when no row has the
// key or the struct lacks its section. (Row::get assumes the section is there.)
template <class Spec>
std::optional<Value> held(const Schema<Spec>& schema, std::string_view key, const Spec& spec);

// Applies `--set PROFILE.KEY=VALUE` to a loaded struct as the loader would read it: the same type and range
// checks, checks against the struct's other values, unit conversion, member. The error is the loader's word
// for word (`source` as the loader had it, plus this override). False, with `spec` unchanged, when KEY has no
// settable row, its section is absent from the struct, or the result fails a check across keys (the loader would name
// another key's line): reload the profile with the override instead.
template <class Spec>
Result<bool> apply_value(const Schema<Spec>& schema, Spec& spec, std::string_view key, std::string_view value,
                         const std::string& original, const FieldSource& source);

// The value a --set VALUE gives a number or count row, without error text: nullopt when the loader would refuse
// it alone (checks against other keys aside). For sweeps, which read each value once and set it many times.
template <class Spec>
std::optional<Value> parse_fast(const Row<Spec>& row, std::string_view value);

// Whether a loaded struct passes every row's check and the schema's also_consistent: what sweeps ask after
// setting values with parse_fast and Row::set.
template <class Spec>
bool consistent(const Schema<Spec>& schema, const Spec& spec);

// Reads the rows of one table into `spec` in order (for the entries of arrays of tables).
template <class Spec>
void read_rows(const std::vector<Row<Spec>>& rows, Fields& f, Spec& spec);

// The rows' values as JSON objects by section, in row order (echo rows only), added to `j`.
template <class Spec>
void echo(const Schema<Spec>& schema, const Spec& spec, Node& j);

// The values of the rows of `section` that hold one and are written, as `key = value` lines; comments by key.
template <class Spec>
void write_rows(const Section<Spec>& section, const Spec& spec, TomlText& out,
                std::span<const std::pair<std::string_view, std::string_view>> comments = {});

// Every key of the profile, dotted below the profile ("prefill.tflops", "units.U.ops": an entry's placeholder).
template <class Spec>
std::vector<std::string> schema_keys(const Schema<Spec>& schema);

// The section named `name` ("" for the top).
template <class Spec>
const Section<Spec>& section(const Schema<Spec>& schema, std::string_view name);

// Accessors for rows: a double in the profile's unit.
inline double number(const Value& v) { return std::get<double>(v); }
inline std::uint32_t count(const Value& v) { return static_cast<std::uint32_t>(std::get<std::int64_t>(v)); }
inline const std::string& text(const Value& v) { return std::get<std::string>(v); }

}  // namespace edgeplan::io::schema
