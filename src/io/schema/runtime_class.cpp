// The schema of a runtime class profile (docs/profiles.md, "Runtime class"): what `calibrate --class` fits and
// writes, and what a device that names the class in `runtimes` takes its speed from (core/runtime_class.hpp).
#include <utility>

#include <fmt/format.h>

#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/util/names.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::io::schema {
namespace {

using C = RuntimeClass;
using CR = Row<C>;

// The rows of an error band, [decode_error] or [prefill_error]: `band` gives the band of a class that has it.
template <ErrorBand& (*band)(C&), const ErrorBand& (*seen)(const C&)>
std::vector<CR> band_rows() {
  return {
      CR{.key = "low", .required = true, .range = Range::any, .set = [](C& c, const Value& v) { band(c).low = number(v); },
         .get = [](const C& c) -> std::optional<Value> { return seen(c).low; }},
      CR{.key = "high", .required = true, .range = Range::any,
         .set = [](C& c, const Value& v) { band(c).high = number(v); },
         .get = [](const C& c) -> std::optional<Value> { return seen(c).high; }},
      CR{.key = "figures", .type = Type::count, .required = true, .counts = {0, 1000000},
         .set = [](C& c, const Value& v) { band(c).figures = static_cast<std::uint32_t>(count(v)); },
         .get = [](const C& c) -> std::optional<Value> { return std::int64_t{seen(c).figures}; }},
      CR{.key = "median_abs", .required = true, .range = Range::non_negative,
         .set = [](C& c, const Value& v) { band(c).median_abs = number(v); },
         .get = [](const C& c) -> std::optional<Value> { return seen(c).median_abs; }},
      CR{.key = "max_abs", .required = true, .range = Range::non_negative,
         .set = [](C& c, const Value& v) { band(c).max_abs = number(v); },
         .get = [](const C& c) -> std::optional<Value> { return seen(c).max_abs; }},
  };
}

ErrorBand& decode_band(C& c) { return c.decode_error; }
const ErrorBand& decode_seen(const C& c) { return c.decode_error; }
ErrorBand& prefill_band(C& c) { return *c.prefill_error; }
const ErrorBand& prefill_seen(const C& c) { return *c.prefill_error; }

// An optional efficiency of the class, stored as given.
template <std::optional<double> C::*member>
CR efficiency(std::string_view key) {
  return CR{.key = key, .range = Range::unit_interval, .set = [](C& c, const Value& v) { c.*member = number(v); },
            .get = [](const C& c) -> std::optional<Value> {
              if (!(c.*member)) return std::nullopt;
              return *(c.*member);
            }};
}

// A quantized base type's own efficiency, under the device's [prefill] key for it (q4_0_efficiency).
template <std::size_t I>
CR type_efficiency() {
  return CR{.key = prefill_type_key(I), .range = Range::unit_interval,
            .set = [](C& c, const Value& v) { c.type_efficiency[I] = number(v); },
            .get = [](const C& c) -> std::optional<Value> {
              if (!c.type_efficiency[I]) return std::nullopt;
              return *c.type_efficiency[I];
            }};
}

template <std::size_t... I>
std::vector<CR> type_efficiencies(std::index_sequence<I...>) {
  return {type_efficiency<I>()...};
}

Schema<C> make_runtime_class() {
  Schema<C> s{"runtime", {}};
  s.sections.push_back({"", {
      CR{.key = "description", .type = Type::string, .set = ignore<C>, .get = none<C>, .echo = false},
      CR{.key = "runtime", .type = Type::string, .required = true, .set = [](C& c, const Value& v) { c.runtime = text(v); },
         .get = [](const C& c) -> std::optional<Value> { return c.runtime; }},
      CR{.key = "unit", .type = Type::choice, .required = true, .choices = [] { return names_of(unit_kinds()); },
         .set = [](C& c, const Value& v) { c.unit = *find_unit_kind(text(v)); },
         .get = [](const C& c) -> std::optional<Value> { return std::string(to_string(c.unit)); }},
      CR{.key = "utilization", .required = true, .range = Range::unit_interval,
         .set = [](C& c, const Value& v) { c.utilization = number(v); },
         .get = [](const C& c) -> std::optional<Value> { return c.utilization; }},
      CR{.key = "per_token_overhead_ms", .required = true, .range = Range::non_negative,
         .set = [](C& c, const Value& v) { c.per_token_overhead_s = number(v) / units::kMsPerS; },
         .get = [](const C& c) -> std::optional<Value> { return c.per_token_overhead_s * units::kMsPerS; }},
      efficiency<&C::prefill_efficiency>("prefill_efficiency"),
      efficiency<&C::quantized_efficiency>("quantized_efficiency"),
  }});
  for (CR& row : type_efficiencies(std::make_index_sequence<kPrefillTypes.size()>{})) {
    s.sections.back().rows.push_back(std::move(row));
  }
  s.sections.back().rows.insert(s.sections.back().rows.end(), std::initializer_list<CR>{
      CR{.key = "measurements", .type = Type::count, .required = true, .counts = {1, 1000000},
         .set = [](C& c, const Value& v) { c.measurements = static_cast<std::uint32_t>(count(v)); },
         .get = [](const C& c) -> std::optional<Value> { return std::int64_t{c.measurements}; }},
      CR{.key = "fitted_on", .type = Type::strings, .required = true,
         .set = [](C& c, const Value& v) { c.fitted_on = std::get<std::vector<std::string>>(v); },
         .get = [](const C& c) -> std::optional<Value> { return c.fitted_on; }},
  });
  s.sections.push_back({"decode_error", band_rows<decode_band, decode_seen>()});
  s.sections.push_back({"prefill_error", band_rows<prefill_band, prefill_seen>(),
                        [](C& c) { c.prefill_error.emplace(); }, [](const C& c) { return c.prefill_error.has_value(); },
                        [](Fields& f, C& c) {
                          if (c.prefill_error.has_value() != c.prefill_efficiency.has_value()) {
                            f.fail("prefill_error", "goes with prefill_efficiency: both or neither");
                          }
                        }});
  return s;
}

}  // namespace

const Schema<RuntimeClass>& runtime_class_schema() {
  static const Schema<RuntimeClass> s = make_runtime_class();
  return s;
}

}  // namespace edgeplan::io::schema
