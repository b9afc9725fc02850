// edgeplan route: device versus private and public cloud, per request or over a trace (core/route.hpp).
#include <algorithm>
#include <fstream>
#include <utility>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/plan.hpp"
#include "edgeplan/core/plan.hpp"
#include "edgeplan/core/power.hpp"
#include "edgeplan/core/route.hpp"
#include "edgeplan/io/input_file.hpp"
#include "edgeplan/io/route.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::cli {
namespace {

struct RouteOptions {
  std::string device, model, quant, clouds, requests, trace, runtime;
  io::OutputPath trace_out;
  std::optional<double> prefill_tok_s, decode_tok_s, escalate_after_s;  // given on the command line or not
  double cloud_ratio = 3;
  bool skip_bad_lines = false;
};

double positive(Opt option, double v) {
  if (v <= 0) throw UsageError(fmt::format("{} must be greater than 0 (got {})", option_row(option).name, v));
  return v;
}

// The device's full-speed rates: measured ones given on the command line, else derived from the profiles.
DeviceRates resolve_rates(const RouteOptions& o, const Context& ctx, const DeviceSpec& device, io::Report& r,
                          std::vector<std::string>& sources) {
  DeviceRates rates;
  const bool measured_prefill = o.prefill_tok_s.has_value(), measured_decode = o.decode_tok_s.has_value();
  std::optional<ModelSpec> model;
  if (!measured_prefill || !measured_decode) {
    if (o.model.empty()) {
      throw UsageError(fmt::format("--model is needed to derive the device's {} rate (or give {})",
                                   measured_decode ? "prefill" : "decode",
                                   measured_decode ? "--prefill-tok-per-s" : "--decode-tok-per-s"));
    }
    model = ctx.model(o.model, r.inputs);
  } else if (!o.model.empty()) {
    throw UsageError("--model is not used when both --prefill-tok-per-s and --decode-tok-per-s are given");
  }
  if (measured_prefill) {
    rates.prefill_tok_per_s = positive(Opt::prefill_tok_per_s, *o.prefill_tok_s);
    sources.push_back(fmt::format("prefill {:.1f} tok/s (measured, --prefill-tok-per-s)", rates.prefill_tok_per_s));
  } else {
    const std::vector<TypedWeights> matmuls =
        matmul_weights(*model, need_format(quant_or_file_format(o.quant, *model)));
    const auto estimate = derived_prefill_rate(device, *model, matmuls);
    if (!estimate) throw UsageError(fmt::format("device '{}': {}: give --prefill-tok-per-s", device.name, estimate.error().message));
    rates.prefill_tok_per_s = estimate->tok_per_s;
    sources.push_back(device.prefill
                          ? fmt::format("prefill {:.1f} tok/s (compute-bound at a {}-token prompt: {:.2f} TFLOPS x {:.2f})",
                                        rates.prefill_tok_per_s, kRatePromptTokens, device.prefill->peak_flops / units::kTera,
                                        prefill_efficiency(*device.prefill, matmuls))
                          : fmt::format("prefill {:.1f} tok/s ({}, at a {}-token prompt)", rates.prefill_tok_per_s,
                                        roofline_basis(*estimate), kRatePromptTokens));
  }
  if (measured_decode) {
    if (!o.quant.empty()) throw UsageError("--quant is not used when --decode-tok-per-s is given");
    rates.decode_tok_per_s = positive(Opt::decode_tok_per_s, *o.decode_tok_s);
    sources.push_back(fmt::format("decode {:.1f} tok/s (measured, --decode-tok-per-s)", rates.decode_tok_per_s));
  } else {
    const FileType* ft = &need_format(quant_or_file_format(o.quant, *model));
    const WeightSize weights = unwrap(weight_size(*model, *ft));
    rates.decode_tok_per_s = derived_decode_rate(device, weights);
    sources.push_back(fmt::format("decode {:.1f} tok/s ({} weights, bandwidth-bound decode)", rates.decode_tok_per_s, ft->name));
    r.inputs["quant"] = ft->name;
  }
  r.inputs["prefill_tok_per_s"] = rates.prefill_tok_per_s;
  r.inputs["decode_tok_per_s"] = rates.decode_tok_per_s;
  return rates;
}

}  // namespace

std::vector<CloudSpec> load_clouds(const std::string& names, const Context& ctx, io::Report& r) {
  std::vector<CloudSpec> clouds;
  io::Node list = io::Node::array();
  for (const std::string& name : split_list(names, "--cloud")) {
    const io::ProfileText text = ctx.find("clouds", name);
    CloudSpec c = unwrap(io::load_cloud(text, ctx.overrides()));
    for (const CloudSpec& seen : clouds) {
      if (seen.name == c.name) throw UsageError(fmt::format("--cloud: '{}' is listed twice", c.name));
    }
    io::Node j = {{"name", c.name}, {"source", text.display}};
    j.update(io::to_json(c));
    list.push_back(std::move(j));
    clouds.push_back(std::move(c));
  }
  r.inputs["clouds"] = std::move(list);
  return clouds;
}

namespace {

std::ifstream open_records(const std::string& path, const std::string& option) {
  auto file = io::open_input(path);
  if (!file) throw UsageError(fmt::format("{} {}: cannot read the file: {}", option, path, file.error().message));
  return std::move(file->stream);
}

}  // namespace

std::vector<RouteRequest> load_request_list(const std::string& arg, const Context& ctx, io::Report& r) {
  if (const auto format = io::record_format(arg)) {
    std::ifstream in = open_records(arg, "--requests");
    io::RecordReader reader(in, arg, *format, false, false);
    std::vector<RouteRequest> out;
    RouteRequest req;
    while (unwrap(reader.next(req))) out.push_back(req);
    if (out.empty()) throw UsageError(arg + ": no requests");
    r.inputs["requests"] = {{"source", arg}};
    return out;
  }
  const io::ProfileText text = ctx.find("requests", arg);
  r.inputs["requests"] = {{"name", text.name}, {"source", text.display}};
  return unwrap(io::load_requests(text));
}

namespace {

// " (measured: SOURCE)" for a section that says where its figures come from; empty otherwise.
std::string measured_note(const std::string& source) {
  return source.empty() ? std::string() : " (measured: " + source + ")";
}

// Lines shared by both views: the device, its thermal behaviour, its power, the clouds and the rules.
void describe(io::Report& r, const DeviceSpec& device, const std::vector<std::string>& sources,
              const std::vector<CloudSpec>& clouds, const RoutePolicy& policy) {
  r.header.push_back(fmt::format("device {}: {}, {}", device.name, sources[0], sources[1]));
  r.header.push_back(runtime_line(device));
  if (const auto& t = device.thermal) {
    r.header.push_back(fmt::format("thermal ({} model): {:.2f}x speed after {:g} s of sustained load, {:g} s to cool{}",
                                   to_string(t->model), t->derate, t->onset_s, t->cooldown_s, measured_note(t->source)));
  } else {
    r.header.push_back(
        "thermal: the device profile has no [thermal] section (sustained-load onset, derated speed and cool-down), so "
        "it never throttles");
  }
  if (const auto& p = device.power) {
    r.header.push_back(fmt::format("power: {:g} W prefilling, {:g} W decoding, {:g} W idle{}{}", p->prefill_w, p->decode_w,
                                   p->idle_w, p->battery_wh ? fmt::format(", battery {:g} Wh", *p->battery_wh)
                                                            : std::string(", no battery (mains)"),
                                   measured_note(p->source)));
  } else {
    r.header.push_back("power: the device profile has no [power] section (watts while prefilling, decoding and idle), so no energy per request");
  }
  for (const CloudSpec& c : clouds) {
    r.header.push_back(fmt::format("cloud {} ({}, takes {} data): rtt {:g} s + ttft {:g} s + output at {:g} tok/s; "
                                   "${:g} / ${:g} per M input / output tokens",
                                   c.name, cloud_kind(c), to_string(c.accepts), c.rtt_s, c.ttft_s, c.decode_tok_per_s,
                                   c.usd_per_m_input_tok, c.usd_per_m_output_tok));
  }
  r.header.push_back(fmt::format("rules: confidential stays on the device; a request goes to its cheapest allowed cloud "
                                 "when the device misses its SLO, or when the cloud is {:g}x faster",
                                 policy.cloud_ratio));
}

void route_requests(const RouteOptions& o, const std::vector<RouteRequest>& requests, const DeviceSpec& device,
                    const DeviceRates& rates, const std::vector<CloudSpec>& clouds, const RoutePolicy& policy,
                    io::Report& r) {
  const bool escalation = o.escalate_after_s.has_value();
  if (escalation) r.inputs["escalate_after_s"] = positive(Opt::escalate_after, *o.escalate_after_s);
  io::Table t{"requests", {{"request", "request"}, {"privacy", "privacy"}, {"in tok", "input_tok", 0},
                           {"out tok", "output_tok", 0}, {"SLO (s)", "slo_s", 0}, {"device (s)", "device_s"},
                           {"unthrottled (s)", "device_unthrottled_s"}}, {}};
  t.columns.insert(t.columns.end(), {{"decision", "decision"}, {"cloud", "cloud"}, {"reason", "reason"},
                                     {"SLO met", "slo_met"}});
  if (escalation) {
    t.columns.push_back({fmt::format("escalate@{:g}s (s)", *o.escalate_after_s), "escalated_s"});
    t.columns.push_back({"tok on device", "escalated_device_tokens", 0});
  }
  if (device.power) t.columns.push_back({"device (J)", "device_energy_j", 1});
  if (device.power && device.power->battery_wh) {
    t.columns.push_back({"battery (%)", "device_battery_share", 3, false, 0.01});
  }
  // Per cloud: a row per request and cloud, keyed by the cloud's name (null where it may not take the request).
  io::Table times{"cloud_times", {{"request", "request"}, {"cloud", "cloud"}, {"time (s)", "time_s"}}, {}};
  std::uint64_t to_device = 0, misses = 0, flagged = 0;
  double cost = 0;
  for (const RouteRequest& q : requests) {
    const DeviceRun run = run_on_device(rates, device.thermal, 0, q.input_tok, q.output_tok);
    const RouteDecision d = decide(q, run.total_s, clouds, policy);
    std::vector<io::Cell> row{q.name, std::string(to_string(q.privacy)), static_cast<std::int64_t>(q.input_tok),
                              static_cast<std::int64_t>(q.output_tok), q.slo_s, run.total_s, run.unthrottled_s};
    for (const CloudSpec& c : clouds) {
      times.add({q.name, c.name, cloud_accepts(c, q.privacy) ? io::Cell{cloud_time_s(c, q.output_tok)} : io::Cell{}});
    }
    const CloudSpec* chosen = d.on_device() ? nullptr : &clouds[static_cast<std::size_t>(d.cloud)];
    row.emplace_back(std::string(chosen ? cloud_kind(*chosen) : "device"));
    row.push_back(chosen ? io::Cell{chosen->name} : io::Cell{});
    row.emplace_back(reason_text(d.reason, q.privacy, run.throttled()));
    row.emplace_back(d.slo_met);
    if (escalation) {
      if (q.privacy != Privacy::confidential && d.best_cloud >= 0) {
        const CloudSpec& c = clouds[static_cast<std::size_t>(d.best_cloud)];
        const Escalation e = escalate(run, rates, q, c, *o.escalate_after_s);
        row.emplace_back(e.total_s);
        row.emplace_back(static_cast<std::int64_t>(e.device_tokens));
        if (e.escalated) {
          r.notes.push_back(fmt::format("{}: escalated to {} after {:g} s with {} of {} tokens written: {:.2f} s "
                                        "(device alone {:.2f} s, {} alone {:.2f} s)",
                                        q.name, c.name, *o.escalate_after_s, e.device_tokens, q.output_tok, e.total_s,
                                        run.total_s, c.name, cloud_time_s(c, q.output_tok)));
        }
      } else {
        row.insert(row.end(), {io::Cell{}, io::Cell{}});
      }
    }
    if (device.power) {
      const double joules = energy_j(*device.power, run.prefill_s, run.decode_s, 0);
      row.emplace_back(joules);
      if (const auto share = battery_share(*device.power, joules)) row.emplace_back(*share);
    }
    if (run.throttled()) {
      r.notes.push_back(fmt::format("{}: {:.2f} s unthrottled; throttled ({} model, {:.2f}x) it takes {:.2f} s on the device",
                                    q.name, run.unthrottled_s, to_string(run.model), run.derate, run.total_s));
    }
    if (d.on_device()) ++to_device;
    if (chosen) cost += cloud_cost_usd(*chosen, q.input_tok, q.output_tok);
    if (!d.slo_met) ++misses;
    if (!d.slo_met && q.privacy == Privacy::confidential) {
      ++flagged;
      r.notes.push_back(fmt::format("flagged: {} is confidential and misses its {:g} s SLO on the device ({:.2f} s)",
                                    q.name, q.slo_s, run.total_s));
    }
    t.add(std::move(row));
  }
  r.results["request_count"] = requests.size();
  r.results["to_device"] = to_device;
  r.results["to_cloud"] = requests.size() - to_device;
  r.results["slo_misses"] = misses;
  r.results["flagged"] = flagged;
  r.results["cloud_cost_usd"] = cost;
  r.tables.push_back(std::move(t));
  r.tables.push_back(std::move(times));
}

// A trace's timeline as route draws it, down-sampled: the arrivals in kBins bins of one width, the width doubling
// (each two bins made one) whenever an arrival falls past the last, so a trace of any length is at most kBins
// instants. Per bin: the requests each destination served, the longest queue for the device an arrival found, the
// longest wait for the device, and the share of the device's run time spent derated (its thermal state).
class TraceTimeline {
 public:
  static constexpr std::size_t kBins = 256;

  explicit TraceTimeline(std::size_t destinations) : bins_(kBins, Bin{std::vector<std::uint64_t>(destinations)}) {}

  void add(double arrival_s, const TraceOutcome& out) {
    while (arrival_s >= width_s_ * kBins) merge();
    const auto at = std::min(kBins - 1, static_cast<std::size_t>(arrival_s / width_s_));
    used_ = std::max(used_, at + 1);
    Bin& b = bins_[at];
    b.queue_requests = std::max(b.queue_requests, out.queue_requests);
    const bool device = out.decision.on_device();
    ++b.requests[device ? 0 : 1 + static_cast<std::size_t>(out.decision.cloud)];
    if (!device) return;
    b.wait_s = std::max(b.wait_s, out.wait_s);
    b.run_s += out.run.total_s;
    b.throttled_s += out.run.throttled_s;
  }

  // The chart tables: requests per destination, the device's queue, and its wait and thermal state, per bin.
  std::vector<io::Table> tables(const std::vector<std::string>& destinations) const {
    io::Table served{"trace_requests", {{"arrival (s)", "arrival_s"}, {"destination", "destination"},
                                        {"requests", "requests", 0, true}}, {}};
    io::Table queue{"trace_queue", {{"arrival (s)", "arrival_s"}, {"longest queue (requests)", "queue_requests", 0, true}},
                    {}};
    io::Table device{"trace_device", {{"arrival (s)", "arrival_s"}, {"longest wait (s)", "wait_s", 3},
                                      {"derated (% of run time)", "derated_share", 1, false, 0.01}}, {}};
    for (std::size_t i = 0; i < used_; ++i) {
      const Bin& b = bins_[i];
      const double start_s = static_cast<double>(i) * width_s_;
      bool arrivals = false;
      for (std::size_t d = 0; d < destinations.size(); ++d) {
        if (b.requests[d] > 0) served.add({start_s, destinations[d], static_cast<std::int64_t>(b.requests[d])});
        arrivals = arrivals || b.requests[d] > 0;
      }
      if (arrivals) queue.add({start_s, static_cast<std::int64_t>(b.queue_requests)});
      if (b.requests[0] > 0) device.add({start_s, b.wait_s, b.run_s > 0 ? b.throttled_s / b.run_s : 0.0});
    }
    std::vector<io::Table> out;
    out.push_back(std::move(served));
    out.push_back(std::move(queue));
    out.push_back(std::move(device));
    return out;
  }
  double width_s() const { return width_s_; }

 private:
  struct Bin {
    std::vector<std::uint64_t> requests;  // per destination: the device, then each cloud
    std::uint64_t queue_requests = 0;     // the longest device queue an arrival found
    double wait_s = 0, run_s = 0, throttled_s = 0;
  };

  void merge() {
    for (std::size_t i = 0; i < kBins; ++i) {
      Bin& to = bins_[i / 2];
      const Bin& from = bins_[i];
      if (i % 2 == 0) {
        to = from;
        continue;
      }
      for (std::size_t d = 0; d < to.requests.size(); ++d) to.requests[d] += from.requests[d];
      to.queue_requests = std::max(to.queue_requests, from.queue_requests);
      to.wait_s = std::max(to.wait_s, from.wait_s);
      to.run_s += from.run_s;
      to.throttled_s += from.throttled_s;
    }
    for (std::size_t i = kBins / 2; i < kBins; ++i) bins_[i] = Bin{std::vector<std::uint64_t>(bins_[i].requests.size())};
    used_ = (used_ + 1) / 2;
    width_s_ *= 2;
  }

  std::vector<Bin> bins_;
  std::size_t used_ = 0;
  double width_s_ = 1.0 / 1024;
};

void route_trace(const RouteOptions& o, const DeviceSpec& device, const DeviceRates& rates,
                 std::vector<CloudSpec> clouds, const RoutePolicy& policy, io::Report& r) {
  const auto format = io::record_format(o.trace);
  if (!format) throw UsageError(fmt::format("--trace {}: expected a .csv or .jsonl file", o.trace));
  std::ifstream in = open_records(o.trace, "--trace");
  std::optional<io::OutputFile> per_request;
  if (!o.trace_out.path.empty()) {
    per_request.emplace(unwrap(io::OutputFile::open(o.trace_out, input_files(r.inputs, {o.trace}))));
    io::write_outcome_header(per_request->stream());
  }
  r.inputs["trace"] = o.trace;
  r.inputs["skip_bad_lines"] = o.skip_bad_lines;
  io::RecordReader reader(in, o.trace, *format, true, o.skip_bad_lines);
  TraceSimulator sim(rates, device.thermal, device.power, std::move(clouds), policy);
  TraceTimeline timeline(1 + sim.clouds().size());
  RouteRequest req;
  while (unwrap(reader.next(req))) {
    auto outcome = sim.serve(req);
    if (!outcome) throw UsageError(fmt::format("{}:{}: arrival_s {} {}", o.trace, reader.line(), req.arrival_s,
                                               outcome.error().message));
    timeline.add(req.arrival_s, *outcome);
    if (per_request) io::write_outcome(per_request->stream(), reader.line(), req, *outcome, sim.clouds());
  }
  const TraceSummary s = sim.summary();
  if (s.requests == 0) throw UsageError(o.trace + ": no requests");

  io::Table t{"destinations", {{"destination", "destination"}, {"kind", "kind"}, {"requests", "requests", 0, true},
                               {"requests %", "request_share", 1, false, 0.01}, {"tokens %", "token_share", 1, false, 0.01},
                               {"p50 (s)", "p50_s"}, {"p95 (s)", "p95_s"}, {"p99 (s)", "p99_s"},
                               {"SLO misses", "slo_misses", 0, true}, {"cost ($)", "cost_usd", 4}}, {}};
  const auto optional_cell = [](const std::optional<double>& v) { return v ? io::Cell{*v} : io::Cell{}; };
  for (const DestinationSummary& d : s.destinations) {
    t.add({d.name, d.kind, static_cast<std::int64_t>(d.requests),
           static_cast<double>(d.requests) / static_cast<double>(s.requests), d.tokens / s.tokens,
           optional_cell(d.p50_s), optional_cell(d.p95_s), optional_cell(d.p99_s),
           static_cast<std::int64_t>(d.slo_misses), d.cost_usd});
  }
  r.tables.push_back(std::move(t));
  std::vector<std::string> destinations{"device"};
  for (const CloudSpec& c : sim.clouds()) destinations.push_back(c.name);
  for (io::Table& table : timeline.tables(destinations)) r.chart_tables.push_back(std::move(table));
  const std::string bins = fmt::format("{:g} s bins", timeline.width_s());
  io::Chart where{fmt::format("where the requests went ({})", bins), "trace_requests", "bar", "arrival_s", "requests", "",
                  "destination"};
  where.stack = true;
  r.charts.push_back(std::move(where));
  r.charts.push_back({fmt::format("longest queue for the device, in requests ({})", bins), "trace_queue", "line",
                      "arrival_s", "queue_requests"});
  r.charts.push_back({fmt::format("longest wait for the device ({})", bins), "trace_device", "line", "arrival_s", "wait_s"});
  r.charts.push_back({fmt::format("device run time derated by heat ({})", bins), "trace_device", "line", "arrival_s",
                      "derated_share"});
  r.results["request_count"] = s.requests;
  r.results["skipped_lines"] = reader.skipped();
  r.results["slo_misses"] = s.slo_misses;
  r.results["confidential_slo_misses"] = s.confidential_slo_misses;
  r.results["span_s"] = s.span_s;
  r.results["device_busy_s"] = s.device_busy_s;
  r.results["busy_fraction"] = s.busy_fraction;
  r.results["throttled_s"] = s.throttled_s;
  r.results["cloud_cost_usd"] = s.cost_usd;
  r.header.push_back(fmt::format("{} requests over {:.2f} s: device busy {:.1f}% of the time, throttled {:.2f} s; "
                                 "SLO misses {}; cloud cost ${:.4f}",
                                 s.requests, s.span_s, s.busy_fraction * 100, s.throttled_s, s.slo_misses, s.cost_usd));
  if (s.device_energy_j) {
    r.results["device_energy_j"] = *s.device_energy_j;
    if (s.battery_share) r.results["battery_share"] = *s.battery_share;
    if (s.energy_per_request_j) r.results["energy_per_request_j"] = *s.energy_per_request_j;
    r.header.push_back(fmt::format("device energy {:.1f} J{}{}", *s.device_energy_j,
                                   s.battery_share ? fmt::format(" ({:.3f}% of the battery)", *s.battery_share * 100)
                                                   : std::string(),
                                   s.energy_per_request_j ? fmt::format(", {:.1f} J per request served on the device",
                                                                        *s.energy_per_request_j)
                                                          : std::string()));
  }
  if (s.confidential_slo_misses > 0) {
    r.notes.push_back(fmt::format("flagged: confidential requests missing their SLO on the device: {}", s.confidential_slo_misses));
  }
  if (reader.skipped() > 0) {
    r.notes.push_back(fmt::format("skipped {} malformed lines (--skip-bad-lines); the first: {}", reader.skipped(),
                                  reader.first_skipped()));
  }
  if (per_request) {
    if (auto error = per_request->commit()) throw UsageError(error->message);
    r.notes.push_back("per-request outcomes written to " + o.trace_out.path);
  }
}

}  // namespace

Runner setup_route(Options& opts) {
  auto o = std::make_shared<RouteOptions>();
  opts.add(Opt::device, o->device).required();
  opts.add(Opt::runtime, o->runtime, runtime_help());
  opts.add(Opt::model, o->model, "Model profile (derives the device rates not given explicitly)");
  opts.add(Opt::quant, o->quant, "Weight format for the derived rates (default: a GGUF model's own format, else Q4_K_M)");
  opts.add(Opt::prefill_tok_per_s, o->prefill_tok_s);
  opts.add(Opt::decode_tok_per_s, o->decode_tok_s);
  opts.add(Opt::cloud, o->clouds, "Comma-separated cloud profiles, e.g. ref-private,ref-public").required();
  opts.add(Opt::requests, o->requests);
  opts.add(Opt::trace, o->trace);
  opts.add(Opt::cloud_ratio, o->cloud_ratio).show_default();
  opts.add(Opt::escalate_after, o->escalate_after_s);
  opts.add(Opt::trace_out, o->trace_out);
  opts.add(Opt::skip_bad_lines, o->skip_bad_lines);
  return [o](const Context& ctx) {
    if (o->requests.empty() == o->trace.empty()) throw UsageError("route needs exactly one of --requests and --trace");
    if (!o->trace.empty() && o->escalate_after_s.has_value()) throw UsageError("--escalate-after works with --requests, not --trace");
    if (o->trace.empty() && (!o->trace_out.path.empty() || o->skip_bad_lines)) {
      throw UsageError(fmt::format("{} works with --trace only", o->trace_out.path.empty() ? "--skip-bad-lines" : "--trace-out"));
    }
    if (o->cloud_ratio <= 0) throw UsageError(fmt::format("--cloud-ratio must be greater than 0 (got {})", o->cloud_ratio));
    io::Report r;
    r.command = "route";
    const DeviceSpec device = ctx.device(o->device, r.inputs, o->runtime);
    std::vector<std::string> sources;
    const DeviceRates rates = resolve_rates(*o, ctx, device, r, sources);
    std::vector<CloudSpec> clouds = load_clouds(o->clouds, ctx, r);
    const RoutePolicy policy{o->cloud_ratio};
    r.inputs["cloud_ratio"] = policy.cloud_ratio;
    describe(r, device, sources, clouds, policy);
    if (o->trace.empty()) {
      const std::vector<RouteRequest> requests = load_request_list(o->requests, ctx, r);
      r.title = fmt::format("route: {} requests, {} versus {}", requests.size(), device.name, o->clouds);
      route_requests(*o, requests, device, rates, clouds, policy, r);
    } else {
      r.title = fmt::format("route: trace {}, {} versus {}", o->trace, device.name, o->clouds);
      route_trace(*o, device, rates, std::move(clouds), policy, r);
    }
    return r;
  };
}

}  // namespace edgeplan::cli
