// Routing requests between the device and private / public clouds, one request at a time or over a trace.
//   device time = input / prefill rate + output / decode rate, derated by thermal.hpp;
//   cloud time  = round trip + time to first token + output / cloud decode rate;
//   cloud cost  = input x price per input token + output x price per output token.
// Rules, in order: confidential data never leaves the device; a request no cloud may take stays on the
// device; a request goes to its best allowed cloud when the device misses the latency target (SLO) and
// the cloud is faster, or when the cloud is `cloud_ratio` times faster than the device; otherwise it
// stays on the device. Mid-way escalation starts on the device and continues in the cloud after a set
// time. The trace simulator serves requests in arrival order on a discrete-event clock: the device runs
// one request at a time (waiting counts toward latency and the decision), heats while busy and cools
// while idle; a request's queue is the device requests not done when it arrives. Source: reference chapter
// section 7 (routing.py, clock.py); docs/model.md, section "route".
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/core/device.hpp"
#include "edgeplan/core/power.hpp"
#include "edgeplan/util/result.hpp"
#include "edgeplan/core/thermal.hpp"

namespace edgeplan {


// Privacy tiers, from least to most sensitive.
enum class Privacy { public_data, internal, confidential };
const char* to_string(Privacy p);  // "public", "internal", "confidential"
std::optional<Privacy> parse_privacy(std::string_view text);
const std::vector<std::string>& privacy_names();

struct CloudSpec {
  std::string name;
  double rtt_s = 0;             // network round trip
  double ttft_s = 0;            // time to first token once the request arrives (queueing and prefill)
  double decode_tok_per_s = 0;  // output rate after the first token
  Privacy accepts = Privacy::public_data;  // most sensitive tier it may receive: internal or public
  double usd_per_m_input_tok = 0;
  double usd_per_m_output_tok = 0;
};

const char* cloud_kind(const CloudSpec& c);  // "private_cloud" (takes internal data) or "public_cloud"
bool cloud_accepts(const CloudSpec& c, Privacy p);
double cloud_time_s(const CloudSpec& c, double output_tok);
double cloud_cost_usd(const CloudSpec& c, double input_tok, double output_tok);

struct RouteRequest {
  std::string name;
  Privacy privacy = Privacy::public_data;
  double input_tok = 0;
  double output_tok = 0;
  double slo_s = 0;      // latency target
  double arrival_s = 0;  // arrival time in a trace
};

struct RoutePolicy {
  double cloud_ratio = 3;  // the cloud is "much faster" when device time >= cloud_ratio x cloud time
};

enum class RouteReason { confidential, no_cloud, device_misses_slo, cloud_not_faster, cloud_much_faster, device_meets_slo };
// The reason in words; `throttled` adds "(throttled)" when the device missed its target while throttled.
std::string reason_text(RouteReason r, Privacy p, bool throttled);

struct RouteDecision {
  int cloud = -1;       // index of the chosen cloud; -1 is the device
  int best_cloud = -1;  // the allowed cloud that was weighed (-1 when no cloud may take the request)
  RouteReason reason = RouteReason::device_meets_slo;
  double latency_s = 0; // at the chosen destination
  bool slo_met = true;
  bool on_device() const { return cloud < 0; }
};

// The allowed cloud to weigh: of those meeting the SLO the cheapest (then the fastest, then the first);
// when none meets it, the fastest. -1 when no cloud accepts the request's privacy tier.
int best_cloud(std::span<const CloudSpec> clouds, const RouteRequest& r);

// Applies the rules to a request whose device latency (waiting included) is device_s.
RouteDecision decide(const RouteRequest& r, double device_s, std::span<const CloudSpec> clouds, const RoutePolicy& p);

// Mid-way escalation: the request runs on the device for after_s seconds, then the cloud generates the
// tokens still missing (its time to first token covers prefilling the prompt plus what the device wrote).
struct Escalation {
  bool escalated = false;         // false when the device finishes within after_s
  std::uint64_t device_tokens = 0;// output tokens produced on the device
  double total_s = 0;             // device part + cloud part
};
Escalation escalate(const DeviceRun& run, const DeviceRates& rates, const RouteRequest& r, const CloudSpec& cloud,
                    double after_s);

// A pseudo clock that only moves forward, standing in for the OS timer in the simulation.
class SimClock {
 public:
  double now_s() const { return now_s_; }
  // Moves to t_s; false (and no move) when t_s is earlier than now.
  bool advance_to(double t_s);

 private:
  double now_s_ = 0;
};

// The nearest-rank percentile (pct in (0, 100]) of `values`, which it reorders; nullopt when empty.
std::optional<double> percentile(std::vector<double>& values, double pct);

// One request as the simulator served it.
struct TraceOutcome {
  RouteDecision decision;
  double wait_s = 0;     // queueing for the device (0 in the cloud)
  std::uint64_t queue_requests = 0;  // device requests running or waiting when it arrived (those ahead of it)
  DeviceRun run;         // the device run weighed (served when decision.on_device())
  double cost_usd = 0;   // cloud cost (0 on the device)
  double energy_j = 0;   // device energy of the run (power.hpp) when served on the device and it has [power]
};

struct DestinationSummary {
  std::string name;  // "device" or the cloud's name
  std::string kind;  // "device", "private_cloud", "public_cloud"
  std::uint64_t requests = 0;
  double tokens = 0;  // input + output
  std::uint64_t slo_misses = 0;
  double cost_usd = 0;
  std::optional<double> p50_s, p95_s, p99_s;
};

struct TraceSummary {
  std::uint64_t requests = 0;
  double tokens = 0;
  std::vector<DestinationSummary> destinations;  // the device, then each cloud in the order given
  std::uint64_t slo_misses = 0;
  std::uint64_t confidential_slo_misses = 0;  // confidential requests that missed their SLO on the device
  double span_s = 0;         // first arrival to last completion
  double device_busy_s = 0;
  double busy_fraction = 0;  // device_busy_s / span_s
  double throttled_s = 0;    // device time spent derated
  double cost_usd = 0;
  std::optional<double> device_energy_j;          // power.hpp's energy_j: the device's prefill, decode and idle time
  std::optional<double> energy_per_request_j;     // prefill and decode energy per request served on the device
  std::optional<double> battery_share;            // device_energy_j / battery capacity (with power.battery_wh)
};

class TraceSimulator {
 public:
  TraceSimulator(DeviceRates rates, std::optional<ThermalSpec> thermal, std::optional<PowerSpec> power,
                 std::vector<CloudSpec> clouds, RoutePolicy policy);

  // Serves the next request; an Error when it arrives before the previous one (or before time 0).
  Result<TraceOutcome> serve(const RouteRequest& r);
  // Sorts the latencies it kept; call once, at the end.
  TraceSummary summary();

  const std::vector<CloudSpec>& clouds() const { return clouds_; }

 private:
  struct Tally {
    std::uint64_t requests = 0, slo_misses = 0;
    double tokens = 0, cost_usd = 0;
    std::vector<double> latencies_s;
  };

  DeviceRates rates_;
  std::optional<ThermalSpec> thermal_;
  std::optional<PowerSpec> power_;
  std::vector<CloudSpec> clouds_;
  RoutePolicy policy_;
  SimClock clock_;
  double device_free_s_ = 0;  // when the device finishes its queue
  std::deque<double> queue_done_s_;  // when each device request not done at the last arrival finishes, in order
  double heat_s_ = 0;         // heat at device_free_s_
  std::optional<double> first_arrival_s_;
  double last_done_s_ = 0;
  double busy_s_ = 0, throttled_s_ = 0;
  double prefill_s_ = 0, decode_s_ = 0;  // the device's busy time by phase, for energy
  std::uint64_t confidential_misses_ = 0;
  std::vector<Tally> tallies_;  // [0] the device, [1 + i] cloud i
};

}  // namespace edgeplan
