// What report, check and fit share in the cli layer: report's options and page (check evaluates its
// requirements on the page's results), the loaders of route's clouds and request mixes (cmd_route.cpp), the
// charts report shares with place and decode (the placement timeline, the roofline), and the plan file of
// `edgeplan check` (cmd_check.cpp), whose reader is declared here so the fuzz harness reads plans from memory.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "edgeplan/core/place.hpp"
#include "edgeplan/core/plan.hpp"
#include "edgeplan/core/route.hpp"
#include "edgeplan/core/spec.hpp"
#include "edgeplan/io/profiles.hpp"
#include "edgeplan/io/require.hpp"

namespace edgeplan::cli {

struct ReportOptions {
  std::string device, model, quant, kv_type = "f16", spec, cloud = "llama-70b-api",
                              requests = "typical-mix", runtime_name;
  std::uint64_t context = 4096, prompt = 512;
  std::uint32_t rank = 16;
  RuntimeFlags runtime;  // --ubatch, --flash-attn, --parallel, --no-mmap (runtime_name is --runtime)
};

// How a roofline prefill estimate (PrefillSource::roofline) was obtained, for notes: the unit, its fitted
// utilization and what it was fitted to (plan.cpp).
std::string roofline_basis(const PrefillEstimate& e);

// The same as JSON, for results.prefill_basis: {"source": "prefill"} or {"source": "units", "unit", "utilization",
// "fitted_runs", "runtime", "loo_error_percent"}.
io::Node prefill_basis_json(const PrefillEstimate& e);

// The device's [provenance] for results.provenance ({"method", and "runtime", "measurements", "residual_percent",
// "from" where given}; null without the section).
io::Node provenance_json(const DeviceSpec& d);
// Whether tables mark the device's figures "*": a profile that is not fitted (datasheet, carried, none), the
// chapter's reference excepted.
bool marks_uncalibrated(const DeviceSpec& d);
// The note under a table that marks figures: what "*" means for this device.
std::string uncalibrated_note(const DeviceSpec& d);
// The header line naming the device's runtime, how its speed was obtained and the range its class's error gives.
std::string runtime_line(const DeviceSpec& d);
// The runtime mismatch of a llama.cpp GGUF model on a device fitted to another runtime, or "" (results and note).
std::string runtime_mismatch(const DeviceSpec& d, const ModelSpec& m);

// Where the device's storage reads at its DRAM rate or faster, what that assumption is ("" otherwise; the chapter's
// reference phone reads its flash at 68 GB/s): stream's header and report's cold load print it (cmd_stream.cpp).
std::string storage_assumption(const DeviceSpec& d);
// Where the storage's read rate is its class's, which class and its range ("storage class ufs-4.0: 2.5-4.2 GB/s"),
// else "" (cmd_stream.cpp).
std::string storage_class_line(const StorageSpec& s);

// Speculation parameters of --spec alpha=A,gamma=G,cost=C (plan.cpp).
SpecParams parse_spec(const std::string& text);

// The report page of one pair (core/plan.hpp, computed once); its charts only when ctx.charts().
io::Report report(const ReportOptions& o, const Context& ctx);

// The layer's placement as a timeline chart (place, report): a lane per unit and one for the link, each op after
// the transfers charged to it, so the last bar ends at the layer's total; `ops` are the ops `placed` places
// (cmd_place.cpp).
void add_place_timeline(std::span<const Op> ops, const Placement& placed, io::Report& r);

// The roofline chart (decode, report; core/roofline.hpp): operational intensity against FLOP/s, log-log, with the
// device's bandwidth roof and compute roofs (its [units] peaks, else its [prefill] peak, else none, as the title
// says) and a point for decode and one for prefill of each format plan (prefill where it has an estimate), at
// `context_tokens` and a prompt of `prompt_tokens` costing `prompt_flops` (plan.cpp).
void add_roofline_chart(const DeviceSpec& device, const ModelSpec& m, std::span<const FormatPlan> formats,
                        std::uint64_t context_tokens, std::uint64_t prompt_tokens, double prompt_flops, io::Report& r);

// The clouds of a comma-separated list of cloud profiles, recorded in r.inputs["clouds"]; a usage error names
// a profile listed twice.
std::vector<CloudSpec> load_clouds(const std::string& names, const Context& ctx, io::Report& r);
// The requests of a requests profile or a .csv / .jsonl file, recorded in r.inputs["requests"].
std::vector<RouteRequest> load_request_list(const std::string& arg, const Context& ctx, io::Report& r);

struct CheckEntry {
  std::string device, model, quant, kv_type;
  std::optional<std::uint32_t> context;  // tokens
  std::vector<io::Requirement> requirements;
};

// The entries of a plan's text; a UsageError names file, line and key.
std::vector<CheckEntry> load_plan(const io::ProfileText& text, const std::vector<io::Override>& overrides);

}  // namespace edgeplan::cli
