// The device profile's schema (docs/profiles.md, "Device"): one row per key, with its unit conversion. The
// compute units ([units.npu], ...) are a table of named entries, each with the rows of a unit.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "edgeplan/util/units.hpp"
#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/util/names.hpp"

namespace edgeplan::io::schema {
namespace {

using D = DeviceSpec;
using DR = Row<D>;

// A required number of the optional section `section` ([thermal], [power]), stored as given in `member`.
template <auto section, auto member>
DR section_number(std::string_view key, Range range) {
  return DR{.key = key, .required = true, .range = range,
           .set = [](D& d, const Value& v) { (*(d.*section)).*member = number(v); },
           .get = [](const D& d) -> std::optional<Value> { return (*(d.*section)).*member; }};
}

// The optional `source` of the section ([thermal], [power]): where its figures were measured.
template <auto section, auto member>
DR section_source() {
  return DR{.key = "source", .type = Type::string,
           .set = [](D& d, const Value& v) { (*(d.*section)).*member = text(v); },
           .get = [](const D& d) -> std::optional<Value> {
             if (((*(d.*section)).*member).empty()) return std::nullopt;
             return (*(d.*section)).*member;
           }};
}

// The schema keys of the rated weight types, kPrefillTypes lower-cased with a suffix, in its order: [prefill]'s
// per-type efficiencies ("q4_0_efficiency") and [decode]'s one-token rates ("q4_0_gflops").
using TypeKeys = std::array<std::string, kPrefillTypes.size()>;
TypeKeys type_keys(std::string_view suffix) {
  TypeKeys keys;
  for (std::size_t i = 0; i < kPrefillTypes.size(); ++i) {
    for (const char c : kPrefillTypes[i]) keys[i] += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    keys[i] += suffix;
  }
  return keys;
}
const TypeKeys& prefill_type_keys() {
  static const TypeKeys keys = type_keys("_efficiency");
  return keys;
}
const TypeKeys& decode_type_keys() {
  static const TypeKeys keys = type_keys("_gflops");
  return keys;
}

// The optional figure of weight type kPrefillTypes[I] in the per-type array `member` of the optional section
// `section`, given in units of *kUnit: [prefill]'s efficiency overriding quantized_efficiency (core/prefill.hpp),
// [decode]'s one-token rate in GFLOPS (core/device.hpp, DecodeRates). (The unit is a pointer: clang 14 takes no
// floating-point template argument.)
constexpr double kAsGiven = 1;
template <auto section, auto member, const double* kUnit, std::size_t I>
DR type_row(std::string_view key, Range range) {
  return DR{.key = key, .range = range,
           .set = [](D& d, const Value& v) { ((*(d.*section)).*member)[I] = number(v) * *kUnit; },
           .get = [](const D& d) -> std::optional<Value> {
             if (const auto& e = ((*(d.*section)).*member)[I]) return *e / *kUnit;
             return std::nullopt;
           }};
}

template <auto section, auto member, const double* kUnit, std::size_t... I>
std::vector<DR> type_rows(const TypeKeys& keys, Range range,
                          std::index_sequence<I...>) {
  return {type_row<section, member, kUnit, I>(keys[I], range)...};
}

}  // namespace

std::string_view prefill_type_key(std::size_t i) { return prefill_type_keys().at(i); }
std::string_view decode_type_key(std::size_t i) { return decode_type_keys().at(i); }

namespace {

// A [decode] table gives at least one rate (an empty one would change nothing, silently).
bool decode_complete(const D& d) {
  return !d.decode || std::any_of(d.decode->type_flops.begin(), d.decode->type_flops.end(),
                                  [](const std::optional<double>& r) { return r.has_value(); });
}

void need_decode_rate(Fields& f, D& d) {
  if (!decode_complete(d)) {
    f.fail("decode", fmt::format("needs at least one one-token matmul rate ({})", fmt::join(decode_type_keys(), ", ")));
  }
}

// The unit of entry `name` ([units.gpu]) in a struct that holds it.
ComputeUnit& unit(D& d, std::string_view name) { return d.units.at(*find_unit_kind(name)); }
const ComputeUnit& unit(const D& d, std::string_view name) { return d.units.at(*find_unit_kind(name)); }

// A unit's optional rate in TOPS or TFLOPS (member in op/s).
template <auto member>
DR unit_rate(std::string_view key) {
  return DR{.key = key, .range = Range::positive,
            .set_in = [](D& d, std::string_view name, const Value& v) { unit(d, name).*member = number(v) * units::kTera; },
            .get_in = [](const D& d, std::string_view name) -> std::optional<Value> {
              if (const auto& rate = unit(d, name).*member) return *rate / units::kTera;
              return std::nullopt;
            }};
}

// The check of a unit's ops: op kinds, each once, at least one.
std::optional<std::string> op_list(const D&, const Value& v) {
  const std::vector<std::string> kinds = names_of(op_kinds());
  const auto& ops = std::get<std::vector<std::string>>(v);
  if (ops.empty()) return fmt::format("must list at least one op kind ({})", fmt::join(kinds, ", "));
  for (auto it = ops.begin(); it != ops.end(); ++it) {
    if (!find_op_kind(*it)) {
      return fmt::format("holds \"{}\", which is not an op kind; expected {}{}", *it, fmt::join(kinds, ", "),
                         util::did_you_mean(*it, kinds));
    }
    if (std::find(ops.begin(), it, *it) != it) return fmt::format("lists \"{}\" twice", *it);
  }
  return std::nullopt;
}

// The rows of one compute unit ([units.npu], ...): the loader's order is the JSON echo's.
std::vector<DR> unit_rows() {
  return {
      unit_rate<&ComputeUnit::int8_ops_per_s>("int8_tops"),
      unit_rate<&ComputeUnit::fp16_flops_per_s>("fp16_tflops"),
      DR{.key = "bandwidth_gbps", .range = Range::positive,
         .set_in = [](D& d, std::string_view name, const Value& v) {
           ComputeUnit& u = unit(d, name);
           u.bandwidth_fraction.reset();
           u.bandwidth_bytes_per_s = number(v) * units::kGBps;
         },
         .get_in = [](const D& d, std::string_view name) -> std::optional<Value> {
           const ComputeUnit& u = unit(d, name);
           if (u.bandwidth_fraction) return std::nullopt;
           return u.bandwidth_bytes_per_s / units::kGBps;
         },
         // Echoed also when given as a fraction: the bandwidth the unit then has.
         .echo_in = [](const D& d, std::string_view name) -> std::optional<Value> {
           return unit(d, name).bandwidth_bytes_per_s / units::kGBps;
         }},
      DR{.key = "bandwidth_efficiency", .range = Range::unit_interval, .echo = false,
         .set_in = [](D& d, std::string_view name, const Value& v) {  // follows the device's bandwidth_gbps
           ComputeUnit& u = unit(d, name);
           u.bandwidth_fraction = number(v);
           u.bandwidth_bytes_per_s = number(v) * d.bandwidth_bytes_per_s;
         },
         .get_in = [](const D& d, std::string_view name) -> std::optional<Value> {
           if (const auto& f = unit(d, name).bandwidth_fraction) return *f;
           return std::nullopt;
         }},
      DR{.key = "ops", .type = Type::strings, .required = true, .check = op_list,
         .set_in = [](D& d, std::string_view name, const Value& v) {
           ComputeUnit& u = unit(d, name);
           u.ops.clear();
           for (const std::string& op : std::get<std::vector<std::string>>(v)) u.ops.push_back(*find_op_kind(op));
         },
         .get_in = [](const D& d, std::string_view name) -> std::optional<Value> {
           std::vector<std::string> ops;
           for (OpKind k : unit(d, name).ops) ops.emplace_back(to_string(k));
           return ops;
         }},
  };
}

// A unit that runs matmul states both its rates.
bool matmul_rated(const ComputeUnit& u) {
  return !supports(u, OpKind::matmul) || (u.int8_ops_per_s && u.fp16_flops_per_s);
}

Entries<D> unit_entries() {
  return {.placeholder = "U",
          .refuse = [](std::string_view name) -> std::string {
            if (find_unit_kind(name)) return {};
            return "is not a compute unit; expected npu, gpu or cpu" + util::did_you_mean(name, names_of(unit_kinds()));
          },
          .open = [](D& d, std::string_view name) { d.units.emplace(*find_unit_kind(name), ComputeUnit{}); },
          .names = [](const D& d) {
            std::vector<std::string> out;
            for (const auto& [kind, u] : d.units) out.emplace_back(to_string(kind));
            return out;
          },
          .one_of = {"bandwidth_gbps", "bandwidth_efficiency"},
          .one_of_note = " (a fraction of the device's bandwidth_gbps)",
          .check = [](const D& d, std::string_view name) -> std::optional<std::pair<std::string_view, std::string>> {
            if (!matmul_rated(unit(d, name))) {
              return std::pair<std::string_view, std::string>{{}, "runs matmul and needs both int8_tops and fp16_tflops"};
            }
            return std::nullopt;
          },
          .consistent = [](const D& d) {
            return std::all_of(d.units.begin(), d.units.end(), [](const auto& u) { return matmul_rated(u.second); });
          }};
}

// A fitted profile names its runtime and runs; a carried one its runtime and the profile it came from.
bool provenance_complete(const D& d) {
  if (!d.provenance) return true;
  const Provenance& p = *d.provenance;
  if (p.method == Calibration::fitted) return !p.runtime.empty() && p.measurements > 0;
  if (p.method == Calibration::carried) return !p.runtime.empty() && !p.from.empty();
  return true;
}

void need_provenance_keys(Fields& f, D& d) {
  if (provenance_complete(d)) return;
  f.fail("provenance", d.provenance->method == Calibration::fitted
                           ? "with method \"fitted\" needs runtime and measurements"
                           : "with method \"carried\" needs runtime and from (the fitted profile carried over)");
}

void need_link(Fields& f, D& d) {
  if (d.units.size() > 1 && !d.link) {
    f.fail({}, fmt::format("has {} compute units and needs a [link] section (bandwidth_gbps, optional latency_us) "
                           "for the transfers between them", d.units.size()));
  }
}

// A [storage] gives its read rate or names the storage class that gives it.
void need_read_rate(Fields& f, D& d) {
  if (d.storage && d.storage->read_bytes_per_s == 0 && d.storage->storage_class.empty()) {
    f.fail("storage", "needs read_gbps (the storage's sequential read rate) or class (a storage class of "
                      "profiles/storage/, e.g. \"ufs-4.0\", which gives it)");
  }
}

std::optional<std::string> reserved_below_memory(const D& d, const Value& v) {
  if (number(v) * units::kGiB < d.memory_bytes) return std::nullopt;
  return fmt::format("({} GiB) must be less than device.memory_gib ({} GiB)", number(v), d.memory_bytes / units::kGiB);
}

// Read, `v` is the count; on a loaded struct, the number get() gives (0 when a page_kib set after it left no
// whole number of pages).
std::optional<std::string> readahead_in_pages(const D& d, const Value& v) {
  const auto page_kib = static_cast<std::int64_t>(d.storage->page_bytes / units::kKiB);
  const std::int64_t kib = std::holds_alternative<double>(v) ? static_cast<std::int64_t>(number(v)) : std::get<std::int64_t>(v);
  if (kib > 0 && kib % page_kib == 0) return std::nullopt;
  return fmt::format("({}) must be a whole number of pages (device.storage.page_kib is {})", kib, page_kib);
}

// The check of a device's runtime classes: at least one, each once (that each is a runtime class profile is
// checked where one is taken, with the search path).
std::optional<std::string> runtime_list(const D&, const Value& v) {
  const auto& names = std::get<std::vector<std::string>>(v);
  if (names.empty()) return std::string("must name at least one runtime class (profiles/runtimes/)");
  for (auto it = names.begin(); it != names.end(); ++it) {
    if (std::find(names.begin(), it, *it) != it) return fmt::format("lists \"{}\" twice", *it);
  }
  return std::nullopt;
}

Schema<D> make_device() {
  Schema<D> s{"device", {}};
  s.sections.push_back({"", {
      DR{.key = "description", .type = Type::string, .set = [](D&, const Value&) {},
        .get = [](const D&) -> std::optional<Value> { return std::nullopt; }, .echo = false},
      DR{.key = "memory_gib", .required = true, .range = Range::positive,
        .set = [](D& d, const Value& v) { d.memory_bytes = number(v) * units::kGiB; },
        .get = [](const D& d) -> std::optional<Value> { return d.memory_bytes / units::kGiB; }},
      DR{.key = "reserved_gib", .required = true, .range = Range::non_negative,
        .set = [](D& d, const Value& v) { d.reserved_bytes = number(v) * units::kGiB; },
        .get = [](const D& d) -> std::optional<Value> { return d.reserved_bytes / units::kGiB; },
        .check = reserved_below_memory},
      DR{.key = "bandwidth_gbps", .required = true, .range = Range::positive,
        .set = [](D& d, const Value& v) {  // units given as a fraction of it follow (read after it)
          d.bandwidth_bytes_per_s = number(v) * units::kGBps;
          for (auto& [kind, u] : d.units) {
            if (u.bandwidth_fraction) u.bandwidth_bytes_per_s = *u.bandwidth_fraction * d.bandwidth_bytes_per_s;
          }
        },
        .get = [](const D& d) -> std::optional<Value> { return d.bandwidth_bytes_per_s / units::kGBps; }},
      DR{.key = "utilization", .required = true, .range = Range::unit_interval,
        .set = [](D& d, const Value& v) { d.utilization = number(v); },
        .get = [](const D& d) -> std::optional<Value> { return d.utilization; }},
      DR{.key = "per_token_overhead_ms", .required = true, .range = Range::non_negative,
        .set = [](D& d, const Value& v) { d.per_token_overhead_s = number(v) / units::kMsPerS; },
        .get = [](const D& d) -> std::optional<Value> { return d.per_token_overhead_s * units::kMsPerS; }},
      DR{.key = "runtimes", .type = Type::strings,
        .set = [](D& d, const Value& v) { d.runtimes = std::get<std::vector<std::string>>(v); },
        .get = [](const D& d) -> std::optional<Value> {
          if (d.runtimes.empty()) return std::nullopt;
          return d.runtimes;
        },
        .check = runtime_list},
  }});
  s.sections.push_back({"prefill", {
      DR{.key = "tflops", .required = true, .range = Range::positive,
        .set = [](D& d, const Value& v) { d.prefill->peak_flops = number(v) * units::kTera; },
        .get = [](const D& d) -> std::optional<Value> { return d.prefill->peak_flops / units::kTera; }},
      // quantized_efficiency defaults to efficiency: setting efficiency sets both, a quantized_efficiency read
      // after it overrides.
      DR{.key = "efficiency", .required = true, .range = Range::unit_interval,
        .set = [](D& d, const Value& v) { d.prefill->efficiency = d.prefill->quantized_efficiency = number(v); },
        .get = [](const D& d) -> std::optional<Value> { return d.prefill->efficiency; }, .settable = false},
      DR{.key = "quantized_efficiency", .range = Range::unit_interval,
        .set = [](D& d, const Value& v) { d.prefill->quantized_efficiency = number(v); },
        .get = [](const D& d) -> std::optional<Value> { return d.prefill->quantized_efficiency; },
        .written = [](const D& d) { return d.prefill->quantized_efficiency != d.prefill->efficiency; }},
      DR{.key = "attention_efficiency", .range = Range::unit_interval,
        .set = [](D& d, const Value& v) { d.prefill->attention_efficiency = number(v); },
        .get = [](const D& d) -> std::optional<Value> {
          if (d.prefill->attention_efficiency) return *d.prefill->attention_efficiency;
          return std::nullopt;
        }},
  }, [](D& d) { d.prefill.emplace(); }, [](const D& d) { return d.prefill.has_value(); }});
  for (DR& row : type_rows<&D::prefill, &PrefillSpec::type_efficiency, &kAsGiven>(
           prefill_type_keys(), Range::unit_interval, std::make_index_sequence<kPrefillTypes.size()>{})) {
    s.sections.back().rows.push_back(std::move(row));
  }
  s.sections.push_back({"decode", type_rows<&D::decode, &DecodeRates::type_flops, &units::kGiga>(
                                     decode_type_keys(), Range::positive, std::make_index_sequence<kPrefillTypes.size()>{}),
                        [](D& d) { d.decode.emplace(); }, [](const D& d) { return d.decode.has_value(); },
                        need_decode_rate});
  s.sections.back().rows.push_back(
      DR{.key = "attention_gflops", .range = Range::positive,
         .set = [](D& d, const Value& v) { d.decode->attention_flops = number(v) * units::kGiga; },
         .get = [](const D& d) -> std::optional<Value> {
           if (d.decode->attention_flops) return *d.decode->attention_flops / units::kGiga;
           return std::nullopt;
         }});
  s.sections.push_back({"kv_cache", {
      DR{.key = "pad_tokens", .type = Type::count, .counts = {1, limits::kContextTokens},
        .set = [](D& d, const Value& v) { d.kv_cache.pad_tokens = count(v); },
        .get = [](const D& d) -> std::optional<Value> { return std::int64_t{d.kv_cache.pad_tokens}; }},
      DR{.key = "ubatch_tokens", .type = Type::count, .counts = {1, limits::kPromptTokens},
        .set = [](D& d, const Value& v) { d.kv_cache.ubatch_tokens = count(v); },
        .get = [](const D& d) -> std::optional<Value> { return std::int64_t{d.kv_cache.ubatch_tokens}; }},
  }});
  s.sections.push_back({"runtime", {
      DR{.key = "buffers", .type = Type::choice, .choices = [] { return std::vector<std::string>{"llama.cpp", "none"}; },
        .set = [](D& d, const Value& v) { d.runtime.buffers = std::get<std::string>(v) == "llama.cpp"; },
        .get = [](const D& d) -> std::optional<Value> { return std::string(d.runtime.buffers ? "llama.cpp" : "none"); }},
      DR{.key = "repack", .type = Type::choice, .choices = [] { return repack_isa_names(); },
        .set = [](D& d, const Value& v) { d.runtime.repack = *find_repack_isa(std::get<std::string>(v)); },
        .get = [](const D& d) -> std::optional<Value> { return std::string(to_string(d.runtime.repack)); }},
  }});
  s.sections.push_back({.name = "units", .rows = unit_rows(), .entries = unit_entries()});
  s.sections.push_back({"link", {
      DR{.key = "bandwidth_gbps", .required = true, .range = Range::positive,
        .set = [](D& d, const Value& v) { d.link->bandwidth_bytes_per_s = number(v) * units::kGBps; },
        .get = [](const D& d) -> std::optional<Value> { return d.link->bandwidth_bytes_per_s / units::kGBps; }},
      DR{.key = "latency_us", .range = Range::non_negative,
        .set = [](D& d, const Value& v) { d.link->latency_s = number(v) / units::kUsPerS; },
        .get = [](const D& d) -> std::optional<Value> { return d.link->latency_s * units::kUsPerS; }},
  }, [](D& d) { d.link.emplace(); }, [](const D& d) { return d.link.has_value(); }, need_link});
  // page_kib and readahead_kib are echoed as numbers (docs/json.md), as they were before the schema.
  s.sections.push_back({"storage", {
      DR{.key = "class", .type = Type::string,
        .set = [](D& d, const Value& v) { d.storage->storage_class = text(v); },
        .get = [](const D& d) -> std::optional<Value> {
          if (d.storage->storage_class.empty()) return std::nullopt;
          return d.storage->storage_class;
        }},
      DR{.key = "read_gbps", .range = Range::positive,
        .set = [](D& d, const Value& v) { d.storage->read_bytes_per_s = number(v) * units::kGBps; },
        .get = [](const D& d) -> std::optional<Value> {
          if (d.storage->read_bytes_per_s == 0) return std::nullopt;  // its class's, not yet taken
          return d.storage->read_bytes_per_s / units::kGBps;
        }},
      DR{.key = "page_kib", .type = Type::count, .required = true, .counts = {1, limits::kPageKiB},
        .set = [](D& d, const Value& v) {
          // Keeps the readahead in bytes; none left (0 pages) when it is not a whole number of the new pages.
          const double readahead_bytes = static_cast<double>(d.storage->readahead_pages) * d.storage->page_bytes;
          d.storage->page_bytes = count(v) * units::kKiB;
          const double pages = readahead_bytes / d.storage->page_bytes;
          d.storage->readahead_pages = pages == std::floor(pages) ? static_cast<std::uint64_t>(pages) : 0;
        },
        .get = [](const D& d) -> std::optional<Value> { return d.storage->page_bytes / units::kKiB; }},
      DR{.key = "page_fault_us", .required = true, .range = Range::non_negative,
        .set = [](D& d, const Value& v) { d.storage->page_fault_s = number(v) / units::kUsPerS; },
        .get = [](const D& d) -> std::optional<Value> { return d.storage->page_fault_s * units::kUsPerS; }},
      DR{.key = "readahead_kib", .type = Type::count, .required = true, .counts = {1, limits::kPageKiB},
        .set = [](D& d, const Value& v) {
          d.storage->readahead_pages = static_cast<std::uint64_t>(count(v) * units::kKiB / d.storage->page_bytes);
        },
        .get = [](const D& d) -> std::optional<Value> {
          return static_cast<double>(d.storage->readahead_pages) * d.storage->page_bytes / units::kKiB;
        },
        .check = readahead_in_pages},
  }, [](D& d) { d.storage.emplace(); }, [](const D& d) { return d.storage.has_value(); }, need_read_rate});
  s.sections.push_back({"lora", {
      DR{.key = "swap_fixed_us", .required = true, .range = Range::non_negative,
        .set = [](D& d, const Value& v) { d.lora->swap_fixed_s = number(v) / units::kUsPerS; },
        .get = [](const D& d) -> std::optional<Value> { return d.lora->swap_fixed_s * units::kUsPerS; }},
  }, [](D& d) { d.lora.emplace(); }, [](const D& d) { return d.lora.has_value(); }});
  s.sections.push_back({"thermal", {
      DR{.key = "model", .type = Type::choice, .choices = [] { return std::vector<std::string>{"chapter", "physical"}; },
        .set = [](D& d, const Value& v) { d.thermal->model = text(v) == "chapter" ? ThermalModel::chapter : ThermalModel::physical; },
        .get = [](const D& d) -> std::optional<Value> { return std::string(to_string(d.thermal->model)); }},
      section_number<&D::thermal, &ThermalSpec::onset_s>("onset_s", Range::positive),
      section_number<&D::thermal, &ThermalSpec::derate>("derate", Range::unit_interval),
      section_number<&D::thermal, &ThermalSpec::cooldown_s>("cooldown_s", Range::positive),
      section_source<&D::thermal, &ThermalSpec::source>(),
  }, [](D& d) { d.thermal.emplace(); }, [](const D& d) { return d.thermal.has_value(); }});
  s.sections.push_back({.name = "power", .rows = {
      section_number<&D::power, &PowerSpec::prefill_w>("prefill_w", Range::positive),
      section_number<&D::power, &PowerSpec::decode_w>("decode_w", Range::positive),
      section_number<&D::power, &PowerSpec::idle_w>("idle_w", Range::non_negative),
      DR{.key = "battery_wh", .range = Range::positive,
        .set = [](D& d, const Value& v) { d.power->battery_wh = number(v); },
        .get = [](const D& d) -> std::optional<Value> {
          if (!d.power->battery_wh) return std::nullopt;
          return *d.power->battery_wh;
        }},
      section_source<&D::power, &PowerSpec::source>(),
  }, .open = [](D& d) { d.power.emplace(); }, .present = [](const D& d) { return d.power.has_value(); },
     .retired = {{"active_w", "is no longer read: [power] takes prefill_w and decode_w (watts while prefilling and "
                              "decoding) in its place, beside idle_w and an optional battery_wh"}}});
  s.sections.push_back({"provenance", {
      DR{.key = "method", .type = Type::choice, .required = true,
        .choices = [] { return std::vector<std::string>{"reference", "fitted", "carried", "datasheet", "measured"}; },
        .set = [](D& d, const Value& v) {
          const std::string& m = text(v);
          d.provenance->method = m == "reference" ? Calibration::reference
                                 : m == "fitted"  ? Calibration::fitted
                                 : m == "carried" ? Calibration::carried
                                 : m == "measured" ? Calibration::measured
                                                  : Calibration::datasheet;
        },
        .get = [](const D& d) -> std::optional<Value> { return std::string(to_string(d.provenance->method)); }},
      DR{.key = "runtime", .type = Type::string,
        .set = [](D& d, const Value& v) { d.provenance->runtime = text(v); },
        .get = [](const D& d) -> std::optional<Value> {
          if (d.provenance->runtime.empty()) return std::nullopt;
          return d.provenance->runtime;
        }},
      DR{.key = "measurements", .type = Type::count, .counts = {1, 1000000},
        .set = [](D& d, const Value& v) { d.provenance->measurements = static_cast<std::uint32_t>(count(v)); },
        .get = [](const D& d) -> std::optional<Value> {
          if (d.provenance->measurements == 0) return std::nullopt;
          return std::int64_t{d.provenance->measurements};
        }},
      DR{.key = "residual_percent", .range = Range::non_negative,
        .set = [](D& d, const Value& v) { d.provenance->residual_percent = number(v); },
        .get = [](const D& d) -> std::optional<Value> {
          if (d.provenance->method != Calibration::fitted) return std::nullopt;
          return d.provenance->residual_percent;
        }},
      DR{.key = "from", .type = Type::string,
        .set = [](D& d, const Value& v) { d.provenance->from = text(v); },
        .get = [](const D& d) -> std::optional<Value> {
          if (d.provenance->from.empty()) return std::nullopt;
          return d.provenance->from;
        }},
      DR{.key = "kernels", .type = Type::string,
        .set = [](D& d, const Value& v) { d.provenance->kernels = text(v); },
        .get = [](const D& d) -> std::optional<Value> {
          if (d.provenance->kernels.empty()) return std::nullopt;
          return d.provenance->kernels;
        }},
  }, [](D& d) { d.provenance.emplace(); }, [](const D& d) { return d.provenance.has_value(); }, need_provenance_keys});
  s.also_consistent = [](const D& d) { return provenance_complete(d) && decode_complete(d); };
  return s;
}

}  // namespace

const Schema<DeviceSpec>& device_schema() {
  static const Schema<DeviceSpec> s = make_device();
  return s;
}

}  // namespace edgeplan::io::schema
