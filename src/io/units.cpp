// The device profile's compute units ([units.npu], [units.gpu], [units.cpu]) and [link], for `place`.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "edgeplan/core/place.hpp"
#include "edgeplan/util/units.hpp"
#include "edgeplan/io/profiles.hpp"
#include "edgeplan/util/names.hpp"

namespace edgeplan::io {
namespace {

ComputeUnit read_unit(Fields& f, double dram_bytes_per_s) {
  ComputeUnit u;
  const std::vector<std::string> kinds = names_of(op_kinds());
  const std::vector<std::string> ops = f.strings("ops");
  if (ops.empty()) f.fail("ops", "must list at least one op kind (" + fmt::format("{}", fmt::join(kinds, ", ")) + ")");
  for (const std::string& name : ops) {
    const auto kind = find_op_kind(name);
    if (!kind) {
      f.fail("ops", fmt::format("holds \"{}\", which is not an op kind; expected {}{}", name, fmt::join(kinds, ", "),
                                util::did_you_mean(name, kinds)));
    }
    if (supports(u, *kind)) f.fail("ops", fmt::format("lists \"{}\" twice", name));
    u.ops.push_back(*kind);
  }
  if (auto tops = f.optional_number("int8_tops", Range::positive)) u.int8_ops_per_s = *tops * 1e12;
  if (auto tflops = f.optional_number("fp16_tflops", Range::positive)) u.fp16_flops_per_s = *tflops * 1e12;
  if (supports(u, OpKind::matmul) && (!u.int8_ops_per_s || !u.fp16_flops_per_s)) {
    f.fail({}, "runs matmul and needs both int8_tops and fp16_tflops");
  }
  const auto gbps = f.optional_number("bandwidth_gbps", Range::positive);
  const auto efficiency = f.optional_number("bandwidth_efficiency", Range::unit_interval);
  if (gbps.has_value() == efficiency.has_value()) {
    f.fail({}, "needs exactly one of bandwidth_gbps and bandwidth_efficiency (a fraction of the device's bandwidth_gbps)");
  }
  u.bandwidth_bytes_per_s = gbps ? *gbps * units::kGBps : *efficiency * dram_bytes_per_s;
  return u;
}

}  // namespace

void read_device_units(Fields& f, DeviceSpec& d) {
  if (auto section = f.table("units")) {
    const std::vector<std::string> kinds = names_of(unit_kinds());
    for (const std::string& name : section->remaining_keys()) {
      const auto kind = find_unit_kind(name);
      if (!kind) section->fail(name, "is not a compute unit; expected npu, gpu or cpu" + util::did_you_mean(name, kinds));
      auto unit = section->table(name);
      d.units.emplace(*kind, read_unit(*unit, d.bandwidth_bytes_per_s));
      unit->finish();
    }
    section->finish();
  }
  if (auto link = f.table("link")) {
    UnitLink l;
    l.bandwidth_bytes_per_s = link->number("bandwidth_gbps", Range::positive) * units::kGBps;
    l.latency_s = link->number_or("latency_us", Range::non_negative, 0) / units::kUsPerS;
    link->finish();
    d.link = l;
  }
  if (d.units.size() > 1 && !d.link) {
    f.fail({}, fmt::format("has {} compute units and needs a [link] section (bandwidth_gbps, optional latency_us) "
                           "for the transfers between them", d.units.size()));
  }
}

}  // namespace edgeplan::io
