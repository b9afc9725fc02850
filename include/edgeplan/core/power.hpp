// Energy a device spends: power per phase times the time spent in it, the power taken as constant within a
// phase (prefill is compute-bound and decode memory-bound, so they draw differently):
//   energy = prefill_s x prefill_w + decode_s x decode_w + idle_s x idle_w
//   battery share = energy / (battery_wh x 3600 J/Wh)
// Source: energy as power integrated over time; the per-phase watts come from published measurements
// (profiles/devices, docs/profiles.md "Thermal and power"). Documented in docs/model.md, section "route".
#pragma once

#include <optional>

#include "edgeplan/core/device.hpp"

namespace edgeplan {

// Joules for prefill_s seconds of prefill, decode_s of decode and idle_s idle, at the profile's watts.
double energy_j(const PowerSpec& p, double prefill_s, double decode_s, double idle_s);

// The fraction of a full battery that energy_j takes; nullopt when the profile gives no battery.
std::optional<double> battery_share(const PowerSpec& p, double energy_j);

}  // namespace edgeplan
