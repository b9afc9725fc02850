// A device as the planners see it: the memory an app may use and the DRAM bandwidth it decodes from.
// Later mechanisms add their own sections (compute units, storage, thermal) beside these fields.
#pragma once

#include <optional>
#include <string>

#include "edgeplan/core/thermal.hpp"

namespace edgeplan {

// Power draw and battery, for energy per request (route).
struct PowerSpec {
  double active_w = 0;    // while running a request
  double idle_w = 0;      // while idle
  double battery_wh = 0;  // battery capacity
};

struct DeviceSpec {
  std::string name;
  double memory_bytes = 0;          // memory the OS lets one app use for the model (not RAM on the box)
  double reserved_bytes = 0;        // part of that kept for the app, runtime and OS
  double bandwidth_bytes_per_s = 0; // peak DRAM bandwidth
  double utilization = 1;           // achievable fraction of peak bandwidth in decode, (0, 1]
  double per_token_overhead_s = 0;  // fixed cost per decoded token (launches, sync); 0 on the reference
  std::optional<double> prefill_flop_per_s;  // achieved FLOP/s in prefill ([prefill]); prefill tok/s = it / (2 x params)
  std::optional<ThermalSpec> thermal;        // sustained-load throttling ([thermal])
  std::optional<PowerSpec> power;            // power draw and battery ([power])
};

}  // namespace edgeplan
