// Sustained-load throttling of a device and the time one request takes on it. Heat is counted in seconds
// of sustained load: it grows by one per busy second, is capped at the onset (where the SoC throttles), and
// drains by onset_s / cooldown_s per idle second. Two models of a request's run, from the heat it starts at:
//   chapter:  when heat + the unthrottled run time exceeds onset_s, the whole decode runs at derate x speed
//             (reference chapter section 7, routing.py: 79.12 s unthrottled -> 112.88 s);
//   physical: full speed until the heat reaches onset_s, derate x speed for the rest of the run
//             (phones keep 59-79% of peak under sustained load: docs/accuracy.md, "Sources").
// Documented in docs/model.md, section "route".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace edgeplan {

enum class ThermalModel { chapter, physical };
const char* to_string(ThermalModel m);

struct ThermalSpec {
  ThermalModel model = ThermalModel::physical;
  double onset_s = 0;     // busy seconds from cold until the SoC throttles, > 0
  double derate = 1;      // speed factor once throttled, (0, 1]
  double cooldown_s = 0;  // idle seconds to drain the heat from onset_s back to cold, > 0
  std::string source;     // where the throttling was measured (publication, runtime, model); may be empty
};

// Full-speed device rates for one model.
struct DeviceRates {
  double prefill_tok_per_s = 0;
  double decode_tok_per_s = 0;
};

// One request run on the device, starting with `heat_s` of accumulated heat.
struct DeviceRun {
  double prefill_s = 0;      // wall time of the prefill
  double decode_s = 0;       // wall time of the decode
  double total_s = 0;        // prefill_s + decode_s
  double unthrottled_s = 0;  // the same run at full speed throughout
  double throttled_s = 0;    // wall time spent at the derated speed
  double heat_start_s = 0;   // heat when the run starts
  double heat_end_s = 0;     // heat when it ends
  double full_speed_prefill_s = 0;  // the prefill at full speed
  // How the run progresses, for tokens_done: the model, the derate, and (physical) the elapsed time after
  // which the run is derated (infinite without a thermal spec).
  ThermalModel model = ThermalModel::physical;
  double derate = 1;
  double full_speed_until_s = 0;
  bool throttled() const { return throttled_s > 0; }
};

// Runs `input_tok` of prefill then `output_tok` of decode. Without a thermal spec nothing throttles.
DeviceRun run_on_device(const DeviceRates& rates, const std::optional<ThermalSpec>& thermal, double heat_s,
                        double input_tok, double output_tok);

// Heat left after `idle_s` idle seconds (never below 0). Without a thermal spec heat stays 0.
double cool_down(const std::optional<ThermalSpec>& thermal, double heat_s, double idle_s);

// Output tokens the run has produced `elapsed_s` seconds after it started (whole tokens, at most output_tok).
std::uint64_t tokens_done(const DeviceRun& run, const DeviceRates& rates, double output_tok, double elapsed_s);

}  // namespace edgeplan
