#include "edgeplan/core/thermal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace edgeplan {

const char* to_string(ThermalModel m) { return m == ThermalModel::chapter ? "chapter" : "physical"; }

DeviceRun run_on_device(const DeviceRates& rates, const std::optional<ThermalSpec>& thermal, double heat_s,
                        double input_tok, double output_tok) {
  DeviceRun run;
  const double prefill_work_s = input_tok / rates.prefill_tok_per_s;
  const double decode_work_s = output_tok / rates.decode_tok_per_s;
  run.full_speed_prefill_s = prefill_work_s;
  run.unthrottled_s = prefill_work_s + decode_work_s;
  run.prefill_s = prefill_work_s;
  run.decode_s = decode_work_s;
  run.full_speed_until_s = std::numeric_limits<double>::infinity();
  if (!thermal) {
    run.total_s = run.unthrottled_s;
    return run;
  }
  run.model = thermal->model;
  run.derate = thermal->derate;
  run.heat_start_s = heat_s;
  if (thermal->model == ThermalModel::chapter) {
    if (heat_s + run.unthrottled_s > thermal->onset_s) {
      run.decode_s = decode_work_s / thermal->derate;
      run.throttled_s = run.decode_s;
    }
  } else {
    const double full_s = std::max(0.0, thermal->onset_s - heat_s);
    run.full_speed_until_s = full_s;
    const auto wall = [&](double work_s) { return work_s <= full_s ? work_s : full_s + (work_s - full_s) / thermal->derate; };
    run.prefill_s = wall(prefill_work_s);
    run.decode_s = wall(run.unthrottled_s) - run.prefill_s;
    run.throttled_s = std::max(0.0, wall(run.unthrottled_s) - full_s);
  }
  run.total_s = run.prefill_s + run.decode_s;
  run.heat_end_s = std::min(thermal->onset_s, heat_s + run.total_s);
  return run;
}

double cool_down(const std::optional<ThermalSpec>& thermal, double heat_s, double idle_s) {
  if (!thermal) return 0;
  return std::max(0.0, heat_s - idle_s * thermal->onset_s / thermal->cooldown_s);
}

std::uint64_t tokens_done(const DeviceRun& run, const DeviceRates& rates, double output_tok, double elapsed_s) {
  if (elapsed_s >= run.total_s) return static_cast<std::uint64_t>(output_tok);
  // Work done by elapsed_s, in seconds of full-speed running.
  double work_s = elapsed_s;
  if (run.model == ThermalModel::chapter) {
    if (elapsed_s > run.prefill_s && run.throttled()) work_s = run.prefill_s + (elapsed_s - run.prefill_s) * run.derate;
  } else if (elapsed_s > run.full_speed_until_s) {
    work_s = run.full_speed_until_s + (elapsed_s - run.full_speed_until_s) * run.derate;
  }
  const double decoded = (work_s - run.full_speed_prefill_s) * rates.decode_tok_per_s;
  if (decoded <= 0) return 0;
  // A relative tolerance keeps an exact whole number of tokens from rounding down to one less.
  return static_cast<std::uint64_t>(std::min(output_tok, std::floor(decoded * (1 + 1e-12))));
}

}  // namespace edgeplan
