// Strict reading of one TOML table into typed values: every key read is checked for type and range,
// every key not read is an error with the nearest valid key suggested, and every message names the file,
// line, column and full key (or the --set override that supplied the value). Profile loaders (device,
// model, cloud, ...) are written against this class; it throws FieldError, which the loaders' public
// functions turn into an edgeplan::Error.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "edgeplan/core/limits.hpp"

namespace edgeplan::io {

struct FieldError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The largest magnitude any profile number may have: far above every real figure (profiles state bytes as
// GiB, rates as GB/s and TFLOPS), and small enough that unit conversions and the planners' products of
// such numbers stay finite.
inline constexpr double kMaxMagnitude = 1e15;
// The smallest value of a number that must be greater than 0 (a rate, a size, an efficiency: what planners divide
// by), for the same reason the other way: a bandwidth of 1e-320 GB/s (a denormal) made decode's time infinite and
// its rate NaN. Far below every real figure (profiles state time in ms and us, prices per million tokens). Other
// numbers may be 0 or any normal double (a fit's residual of 5e-14 %).
inline constexpr double kMinPositive = 1e-12;

// Allowed values of a number.
enum class Range {
  any,            // any finite number
  positive,       // > 0
  non_negative,   // >= 0
  unit_interval,  // (0, 1]
  probability,    // [0, 1]
};

// Where the values come from: the file as shown to the user, and the --set overrides by full key.
struct FieldSource {
  std::string file;                           // "profiles/devices/phone8g.toml" or "builtin:devices/..."
  std::map<std::string, std::string> overrides;  // "device.bandwidth_gbps" -> "--set device.bandwidth_gbps=120"
};

class Fields {
 public:
  // `prefix` is the full key of this table ("device", "device.storage", "device.units.npu").
  Fields(const toml::table& table, const FieldSource& source, std::string prefix);

  double number(std::string_view key, Range range);
  std::optional<double> optional_number(std::string_view key, Range range);
  double number_or(std::string_view key, Range range, double fallback);
  // A whole number in `range` (core/limits.hpp), refused outside it before it is narrowed.
  std::uint32_t count(std::string_view key, CountRange range);
  std::optional<std::uint32_t> optional_count(std::string_view key, CountRange range);
  std::string string(std::string_view key);
  std::optional<std::string> optional_string(std::string_view key);
  bool boolean(std::string_view key);
  bool boolean_or(std::string_view key, bool fallback);
  std::optional<bool> optional_boolean(std::string_view key);
  std::vector<std::string> strings(std::string_view key);  // array of strings
  std::optional<std::vector<std::string>> optional_strings(std::string_view key);
  // One of `choices`; the error lists them and suggests the nearest.
  std::string choice(std::string_view key, const std::vector<std::string>& choices);
  std::optional<std::string> optional_choice(std::string_view key, const std::vector<std::string>& choices);
  // A sub-table, or nullopt when absent. The returned Fields must be finished like this one.
  std::optional<Fields> table(std::string_view key);
  // An array of tables ([[key]]), one Fields per element with the full key "prefix.key[i]"; empty when absent.
  // Each returned Fields must be finished like this one.
  std::vector<Fields> tables(std::string_view key);
  // The keys of this table not yet read, for tables of named entries ([formats.Q4_K_M], ...).
  std::vector<std::string> remaining_keys() const;

  // Fails on the first key that was never read, suggesting the nearest key that was.
  void finish() const;

  // An error at this table's key `key` (or at the table itself when key is empty).
  [[noreturn]] void fail(std::string_view key, const std::string& what) const;
  std::string full_key(std::string_view key) const;

 private:
  const toml::node* find(std::string_view key);
  [[noreturn]] void missing(std::string_view key) const;
  std::string where(std::string_view key) const;

  const toml::table* table_;
  const FieldSource* source_;
  std::string prefix_;
  std::vector<std::string> read_;
};

// Whether Fields::number accepts v for `range`: finite, at most kMaxMagnitude in magnitude, 0 or normal, a positive
// one at least kMinPositive, in range.
bool number_acceptable(double v, Range range);

// The number a --set VALUE gives when it is a TOML integer or float (as Fields::number reads it); nullopt when
// it is anything else (text, a boolean, an array). What sweeps use to set a number without reparsing a profile.
std::optional<double> override_number(std::string_view value);

// Applies one `--set KEY=VALUE` to the table of the profile named by KEY's first segment. VALUE is read as
// a TOML value (120, 0.5, true, "text", [..]); a bare word that is not TOML is taken as a string.
// Intermediate tables are created. Throws FieldError on a malformed assignment.
void apply_override(toml::table& root, std::string_view key_without_profile, std::string_view value,
                    const std::string& original);

}  // namespace edgeplan::io
