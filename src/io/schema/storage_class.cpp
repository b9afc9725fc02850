// The schema of a storage class profile (docs/profiles.md, "Storage class"): one kind of storage as devices ship it,
// which a device's [storage] names with `class` (core/stream.hpp, StorageClass).
#include <fmt/format.h>

#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::io::schema {
namespace {

using SC = StorageClass;  // names of their own: a unity build merges this file with the other schemas
using SCR = Row<SC>;

// A read rate of the class in GB/s.
template <double SC::*member>
SCR read_rate(std::string_view key, std::optional<std::string> (*check)(const SC&, const Value&) = nullptr) {
  return SCR{.key = key, .required = true, .range = Range::positive,
            .set = [](SC& c, const Value& v) { c.*member = number(v) * units::kGBps; },
            .get = [](const SC& c) -> std::optional<Value> { return c.*member / units::kGBps; }, .check = check};
}

// The published range holds the typical rate (read before it).
std::optional<std::string> not_above_typical(const SC& c, const Value& v) {
  if (number(v) * units::kGBps <= c.read_bytes_per_s) return std::nullopt;
  return fmt::format("({} GB/s) must be at most read_gbps ({} GB/s): the slowest device of the class reads no faster "
                     "than the typical one", number(v), c.read_bytes_per_s / units::kGBps);
}
std::optional<std::string> not_below_typical(const SC& c, const Value& v) {
  if (number(v) * units::kGBps >= c.read_bytes_per_s) return std::nullopt;
  return fmt::format("({} GB/s) must be at least read_gbps ({} GB/s): the fastest device of the class reads no slower "
                     "than the typical one", number(v), c.read_bytes_per_s / units::kGBps);
}

Schema<SC> make_storage_class() {
  Schema<SC> s{"storage", {}};
  s.sections.push_back({"", {
      SCR{.key = "description", .type = Type::string, .set = ignore<SC>, .get = none<SC>, .echo = false},
      read_rate<&SC::read_bytes_per_s>("read_gbps"),
      read_rate<&SC::read_low_bytes_per_s>("read_gbps_low", not_above_typical),
      read_rate<&SC::read_high_bytes_per_s>("read_gbps_high", not_below_typical),
      SCR{.key = "source", .type = Type::string, .required = true, .set = [](SC& c, const Value& v) { c.source = text(v); },
         .get = [](const SC& c) -> std::optional<Value> { return c.source; }},
  }});
  return s;
}

}  // namespace

const Schema<StorageClass>& storage_class_schema() {
  static const Schema<StorageClass> s = make_storage_class();
  return s;
}

}  // namespace edgeplan::io::schema
