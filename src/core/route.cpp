#include "edgeplan/core/route.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace edgeplan {

const char* to_string(Privacy p) {
  switch (p) {
    case Privacy::public_data: return "public";
    case Privacy::internal: return "internal";
    case Privacy::confidential: return "confidential";
  }
  return "";
}

const std::vector<std::string>& privacy_names() {
  static const std::vector<std::string> names{"confidential", "internal", "public"};
  return names;
}

std::optional<Privacy> parse_privacy(std::string_view text) {
  if (text == "public") return Privacy::public_data;
  if (text == "internal") return Privacy::internal;
  if (text == "confidential") return Privacy::confidential;
  return std::nullopt;
}

const char* cloud_kind(const CloudSpec& c) {
  return c.accepts == Privacy::internal ? "private_cloud" : "public_cloud";
}

bool cloud_accepts(const CloudSpec& c, Privacy p) { return p != Privacy::confidential && p <= c.accepts; }

double cloud_time_s(const CloudSpec& c, double output_tok) { return c.rtt_s + c.ttft_s + output_tok / c.decode_tok_per_s; }

double cloud_cost_usd(const CloudSpec& c, double input_tok, double output_tok) {
  return (input_tok * c.usd_per_m_input_tok + output_tok * c.usd_per_m_output_tok) / 1e6;
}

std::string reason_text(RouteReason r, Privacy p, bool throttled) {
  switch (r) {
    case RouteReason::confidential: return "confidential: must stay on device";
    case RouteReason::no_cloud: return std::string("no cloud accepts ") + to_string(p) + " data";
    case RouteReason::device_misses_slo:
      return throttled ? "device misses its latency target (throttled)" : "device misses its latency target";
    case RouteReason::cloud_not_faster: return "device misses its latency target, no cloud is faster";
    case RouteReason::cloud_much_faster: return "cloud much faster";
    case RouteReason::device_meets_slo: return "device meets its latency target";
  }
  return "";
}

int best_cloud(std::span<const CloudSpec> clouds, const RouteRequest& r) {
  int best = -1;
  bool best_meets = false;
  double best_cost = 0, best_time = 0;
  for (std::size_t i = 0; i < clouds.size(); ++i) {
    if (!cloud_accepts(clouds[i], r.privacy)) continue;
    const double time = cloud_time_s(clouds[i], r.output_tok);
    const double cost = cloud_cost_usd(clouds[i], r.input_tok, r.output_tok);
    const bool meets = time <= r.slo_s;
    bool better = best < 0;
    if (!better && meets != best_meets) better = meets;
    if (!better && meets == best_meets) {
      better = meets ? (cost < best_cost || (cost == best_cost && time < best_time)) : time < best_time;
    }
    if (better) {
      best = static_cast<int>(i);
      best_meets = meets;
      best_cost = cost;
      best_time = time;
    }
  }
  return best;
}

RouteDecision decide(const RouteRequest& r, double device_s, std::span<const CloudSpec> clouds, const RoutePolicy& p) {
  RouteDecision d;
  d.latency_s = device_s;
  const auto to_cloud = [&](RouteReason reason) {
    d.cloud = d.best_cloud;
    d.reason = reason;
    d.latency_s = cloud_time_s(clouds[static_cast<std::size_t>(d.cloud)], r.output_tok);
  };
  if (r.privacy == Privacy::confidential) {
    d.reason = RouteReason::confidential;
  } else if ((d.best_cloud = best_cloud(clouds, r)) < 0) {
    d.reason = RouteReason::no_cloud;
  } else {
    const double cloud_s = cloud_time_s(clouds[static_cast<std::size_t>(d.best_cloud)], r.output_tok);
    if (device_s > r.slo_s) {
      if (cloud_s < device_s) {
        to_cloud(RouteReason::device_misses_slo);
      } else {
        d.reason = RouteReason::cloud_not_faster;
      }
    } else if (device_s >= p.cloud_ratio * cloud_s) {
      to_cloud(RouteReason::cloud_much_faster);
    } else {
      d.reason = RouteReason::device_meets_slo;
    }
  }
  d.slo_met = d.latency_s <= r.slo_s;
  return d;
}

Escalation escalate(const DeviceRun& run, const DeviceRates& rates, const RouteRequest& r, const CloudSpec& cloud,
                    double after_s) {
  Escalation e;
  if (run.total_s <= after_s) {
    e.device_tokens = static_cast<std::uint64_t>(r.output_tok);
    e.total_s = run.total_s;
    return e;
  }
  e.escalated = true;
  e.device_tokens = tokens_done(run, rates, r.output_tok, after_s);
  e.total_s = after_s + cloud_time_s(cloud, r.output_tok - static_cast<double>(e.device_tokens));
  return e;
}

bool SimClock::advance_to(double t_s) {
  if (t_s < now_s_) return false;
  now_s_ = t_s;
  return true;
}

std::optional<double> percentile(std::vector<double>& values, double pct) {
  if (values.empty()) return std::nullopt;
  const double rank = std::ceil(pct / 100 * static_cast<double>(values.size()));
  const std::size_t index = static_cast<std::size_t>(std::clamp(rank, 1.0, static_cast<double>(values.size()))) - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index), values.end());
  return values[index];
}

TraceSimulator::TraceSimulator(DeviceRates rates, std::optional<ThermalSpec> thermal, std::optional<PowerSpec> power,
                               std::vector<CloudSpec> clouds, RoutePolicy policy)
    : rates_(rates), thermal_(std::move(thermal)), power_(power), clouds_(std::move(clouds)), policy_(policy),
      tallies_(clouds_.size() + 1) {}

Result<TraceOutcome> TraceSimulator::serve(const RouteRequest& r) {
  if (!clock_.advance_to(r.arrival_s)) {
    return Error{"is before the previous request's arrival (a trace must be in time order)"};
  }
  if (!first_arrival_s_) first_arrival_s_ = r.arrival_s;
  TraceOutcome o;
  while (!queue_done_s_.empty() && queue_done_s_.front() <= r.arrival_s) queue_done_s_.pop_front();
  o.queue_requests = queue_done_s_.size();
  const double start_s = std::max(r.arrival_s, device_free_s_);
  const double heat_s = cool_down(thermal_, heat_s_, start_s - device_free_s_);
  o.wait_s = start_s - r.arrival_s;
  o.run = run_on_device(rates_, thermal_, heat_s, r.input_tok, r.output_tok);
  o.decision = decide(r, o.wait_s + o.run.total_s, clouds_, policy_);
  if (o.decision.on_device()) {
    device_free_s_ = start_s + o.run.total_s;
    queue_done_s_.push_back(device_free_s_);
    heat_s_ = o.run.heat_end_s;
    busy_s_ += o.run.total_s;
    throttled_s_ += o.run.throttled_s;
    prefill_s_ += o.run.prefill_s;
    decode_s_ += o.run.decode_s;
    if (power_) o.energy_j = energy_j(*power_, o.run.prefill_s, o.run.decode_s, 0);
    if (r.privacy == Privacy::confidential && !o.decision.slo_met) ++confidential_misses_;
  } else {
    o.wait_s = 0;
    o.cost_usd = cloud_cost_usd(clouds_[static_cast<std::size_t>(o.decision.cloud)], r.input_tok, r.output_tok);
  }
  last_done_s_ = std::max(last_done_s_, r.arrival_s + o.decision.latency_s);
  Tally& t = tallies_[static_cast<std::size_t>(o.decision.cloud + 1)];
  ++t.requests;
  t.tokens += r.input_tok + r.output_tok;
  t.cost_usd += o.cost_usd;
  if (!o.decision.slo_met) ++t.slo_misses;
  t.latencies_s.push_back(o.decision.latency_s);
  return o;
}

TraceSummary TraceSimulator::summary() {
  TraceSummary s;
  for (std::size_t i = 0; i < tallies_.size(); ++i) {
    Tally& t = tallies_[i];
    DestinationSummary d;
    d.name = i == 0 ? "device" : clouds_[i - 1].name;
    d.kind = i == 0 ? "device" : cloud_kind(clouds_[i - 1]);
    d.requests = t.requests;
    d.tokens = t.tokens;
    d.slo_misses = t.slo_misses;
    d.cost_usd = t.cost_usd;
    d.p50_s = percentile(t.latencies_s, 50);
    d.p95_s = percentile(t.latencies_s, 95);
    d.p99_s = percentile(t.latencies_s, 99);
    s.requests += t.requests;
    s.tokens += t.tokens;
    s.slo_misses += t.slo_misses;
    s.cost_usd += t.cost_usd;
    s.destinations.push_back(std::move(d));
  }
  s.confidential_slo_misses = confidential_misses_;
  s.span_s = first_arrival_s_ ? last_done_s_ - *first_arrival_s_ : 0;
  s.device_busy_s = busy_s_;
  s.busy_fraction = s.span_s > 0 ? busy_s_ / s.span_s : 0;
  s.throttled_s = throttled_s_;
  if (power_) {
    s.device_energy_j = energy_j(*power_, prefill_s_, decode_s_, s.span_s - busy_s_);
    s.battery_share = battery_share(*power_, *s.device_energy_j);
    if (tallies_[0].requests > 0) {
      s.energy_per_request_j = energy_j(*power_, prefill_s_, decode_s_, 0) / static_cast<double>(tallies_[0].requests);
    }
  }
  return s;
}

}  // namespace edgeplan
