#include "edgeplan/core/power.hpp"

#include "edgeplan/util/units.hpp"

namespace edgeplan {

double energy_j(const PowerSpec& p, double prefill_s, double decode_s, double idle_s) {
  return prefill_s * p.prefill_w + decode_s * p.decode_w + idle_s * p.idle_w;
}

std::optional<double> battery_share(const PowerSpec& p, double energy_j) {
  if (!p.battery_wh) return std::nullopt;
  return energy_j / (*p.battery_wh * units::kJPerWh);
}

}  // namespace edgeplan
