// edgeplan report: one page for a device and model, from the pair's plan (core/plan.hpp): every figure is
// computed by the same core functions the single commands call, once, so each is the one that command prints.
#include <algorithm>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "cli/plan.hpp"
#include "edgeplan/core/runtime_class.hpp"
#include "edgeplan/io/fixed.hpp"
#include "edgeplan/core/limits.hpp"
#include "edgeplan/core/plan.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::cli {
namespace {

// The decode formats shown: the chosen one first, then the usual comparison points.
std::vector<const FileType*> formats_for(const FileType& chosen) {
  std::vector<const FileType*> out{&chosen};
  for (const char* f : {"Q4_K_M", "Q8_0", "F16"}) {
    if (chosen.name != f) out.push_back(&need_format(f));
  }
  return out;
}

io::Node optional_json(const std::optional<double>& v) { return v ? io::Node(*v) : io::Node(); }

}  // namespace

namespace {

// The pair a page is for and its plan's options: the profiles loaded (recorded in r.inputs) and the options
// checked.
struct PageInputs {
  DeviceSpec device;
  ModelSpec model;
  PlanInputs plan;
};

PageInputs page_inputs(const ReportOptions& o, const Context& ctx, io::Report& r) {
  PageInputs page;
  page.device = ctx.device(o.device, r.inputs, o.runtime_name);
  page.model = ctx.model(o.model, r.inputs);
  PlanInputs& in = page.plan;
  const FileType& format = need_format(quant_or_file_format(o.quant, page.model));
  r.inputs["quant"] = std::string(format.name);
  r.notes = requantize_note(page.model, format);
  r.inputs["context_tokens"] = o.context;
  in.formats = formats_for(format);
  in.kv_type = need_kv_type(o.kv_type, page.model);
  r.inputs["kv_type"] = in.kv_type.name();
  in.context_tokens = o.context;
  in.prompt_tokens = o.prompt;
  if (!o.spec.empty()) in.spec = parse_spec(o.spec);
  if (o.rank == 0) throw UsageError("--rank must be at least 1");
  in.lora_rank = o.rank;
  in.runtime = runtime_options(o.runtime, page.device);
  io::Report route_inputs;  // the clouds and requests are recorded by route, not on this page
  in.clouds = load_clouds(o.cloud, ctx, route_inputs);
  in.requests = load_request_list(o.requests, ctx, route_inputs);
  return page;
}

// The parts of a pair's plan that can make the page fail (page_plan): the LoRA adapters of a device with [lora]
// and the placement on a device with an NPU; the formats are always planned.
PlanParts failing_parts(const DeviceSpec& device) {
  return {.kv = false, .load = false, .lora = device.lora.has_value(), .place = device.units.contains(UnitKind::npu),
          .route = false};
}

// The plan of a pair as the page needs it, from the model's figures (model_figures): a device with [lora] whose
// adapters cannot be planned, or with an NPU whose placement fails, is an error rather than a "--" line. With
// `parts`, only those (a sweep's check pass asks for failing_parts).
Result<PlanResult> page_plan(const DeviceSpec& device, const ModelSpec& model, const PlanInputs& in,
                             const ModelFigures& figures, const PlanParts& parts = {}) {
  Result<PlanResult> plan = edgeplan::plan(device, model, in, figures, parts);
  if (!plan) return plan;
  if (!plan->lora && device.lora) return plan->lora.error();
  if (!plan->place && device.units.contains(UnitKind::npu)) return plan->place.error();
  return plan;
}

// The figures table of a pair's plan, each row starting with `prefix`. A sweep makes it for every combination,
// so its texts are built from parts (io/fixed.hpp) and each cell is moved into its row.
void figures(const ReportOptions& o, const DeviceSpec& device, const ModelSpec& model, const PlanInputs& in,
             const PlanResult& plan, const std::vector<io::Cell>& prefix, Rows& rows) {
  const auto line = [&](std::string figure, std::string value, std::string note = "") {
    std::vector<io::Cell>& row = start_row(rows, prefix, 3);
    row.emplace_back(std::move(figure));
    row.emplace_back(std::move(value));
    row.emplace_back(std::move(note));
  };
  using io::Fixed, io::Grouped, io::text;
  const std::string_view quant = plan.chosen().format->name;
  const std::uint64_t context = o.context;
  const std::uint32_t parallel = in.runtime.parallel;
  const std::string kv_type = in.kv_type.name();
  // Weights and decode.
  for (const FormatPlan& f : plan.formats) {
    std::string fits = f.memory.fits ? parallel == 1 ? text("fits with ", context, " tokens of ", kv_type, " KV")
                                                     : text("fits with ", parallel, " x ", context, " tokens of ", kv_type, " KV")
                                     : std::string("does not fit");
    line(text("weights ", f.format->name), text(Fixed{f.weights.bytes / units::kGB, 2}, " GB"), std::move(fits));
  }
  const FormatPlan& mine = plan.chosen();
  const std::string_view mark = marks_uncalibrated(device) ? " *" : "";
  // The range of a figure under the device's runtime class ("; range 16.7-19.0"), or "".
  const auto range = [&](const std::optional<ErrorBand>& band, double v, bool time, int decimals) -> std::string {
    if (!band) return "";
    const Interval i = time ? time_interval(v, *band) : rate_interval(v, *band);
    return text("; range ", Fixed{i.low, decimals}, "-", Fixed{i.high, decimals});
  };
  const std::optional<ErrorBand> decode_band =
      device.errors ? std::optional(device.errors->decode) : std::optional<ErrorBand>();
  const std::optional<ErrorBand> prefill_band = device.errors ? device.errors->prefill : std::optional<ErrorBand>();
  line("decode", text(Fixed{mine.decode.tok_per_s, 2}, " tok/s", mark),
       text(quant, " at context ", context, range(decode_band, mine.decode.tok_per_s, false, 2)));
  if (mine.spec_tok_per_s) {
    line("decode with speculation", text(Fixed{*mine.spec_tok_per_s, 2}, " tok/s"),
         text(Fixed{*plan.spec_speedup, 2}, "x (", o.spec, ")"));
  }
  if (mine.prefill) {
    line("prefill", text(Fixed{mine.prefill->tok_per_s, 1}, " tok/s", mark),
         text(o.prompt, "-token prompt", range(prefill_band, mine.prefill->tok_per_s, false, 1)));
    line("time to first token", text(Fixed{*mine.ttft_s, 2}, " s"),
         text("prefill + one decode step", range(prefill_band, *mine.ttft_s, true, 2)));
  } else {
    line("prefill", "--", mine.prefill.error().message);
  }

  // llama.cpp's buffers, where the device counts them.
  if (device.runtime.buffers) {
    const RuntimeBuffers& b = mine.runtime.buffers;
    line("compute buffer", text(Fixed{b.compute_bytes / units::kMiB, 2}, " MiB"),
         text("llama.cpp, ubatch ", device.kv_cache.ubatch_tokens, ", flash attention ", b.flash_attn ? "on" : "off"));
    line("output buffer", text(Fixed{b.output_bytes / units::kMiB, 2}, " MiB"),
         text("logits of ", parallel, " sequence", parallel == 1 ? "" : "s"));
    line("repack buffer", text(Fixed{b.repack_bytes / units::kMiB, 2}, " MiB"),
         text("repack ISA ", to_string(device.runtime.repack),
              in.runtime.mmap ? "" : ", in place of the weights it holds (--no-mmap)"));
    if (device.runtime.repack == RepackIsa::x86_amx) {
      line("AMX buffer", text(Fixed{b.amx_bytes / units::kMiB, 2}, " MiB"),
           in.runtime.mmap ? text("beside the mapped file; ", Fixed{b.unmapped_bytes / units::kMiB, 2},
                                  " MiB of moved weights not mapped")
                           : std::string("in place of the weights it holds (--no-mmap)"));
    }
  }
  // KV cache.
  line("KV budget", text(Fixed{plan.kv_budget_bytes / units::kGiB, 2}, " GiB"),
       device.runtime.buffers ? "memory - reserved - weights - buffers" : "memory - reserved - weights");
  if (model.context_tokens) {
    line("trained context", text(Grouped{*model.context_tokens}, " tokens"),
         beyond_trained(model, o.context) ? text("context ", context, " is beyond it: the model does not support it")
                                          : text("context ", context, " is within it"));
  }
  for (const KvTypePlan& k : plan.kv) {
    line(text("max context ", k.type.name()), text(Grouped{k.max_context}, " tokens"),
         k.memory_max_context > k.max_context
             ? text(Fixed{k.bytes_per_token, 0}, " B/token; the trained context (memory allows ",
                    Grouped{k.memory_max_context}, ")")
             : text(Fixed{k.bytes_per_token, 0}, " B/token"));
  }

  // Cold load from storage.
  if (plan.load) {
    std::string note = "whole file read (mlock)";
    for (const std::string& part : {storage_assumption(device), storage_class_line(*device.storage)}) {
      if (!part.empty()) note += "; " + part;
    }
    if (const auto& r = plan.load->total_range) note += text("; range ", Fixed{r->low, 2}, "-", Fixed{r->high, 2});
    line("cold load", text(Fixed{plan.load->total_s, 2}, " s"), std::move(note));
  } else {
    line("cold load", "--", plan.load.error().message);
  }

  // LoRA adapters.
  if (plan.lora) {
    line("LoRA adapters resident", text(plan.lora->result.resident_adapters),
         text("rank ", o.rank, ", ", Fixed{plan.lora->adapter.adapter_bytes / units::kMiB, 1}, " MiB each, swap ",
              Fixed{plan.lora->result.swap_s * units::kUsPerS, 0}, " us"));
  } else {
    line("LoRA adapters resident", "--", plan.lora.error().message);
  }

  // Operator fallbacks on the NPU.
  if (device.units.contains(UnitKind::npu)) {
    const PlacePlan& place = *plan.place;
    line("NPU fallbacks", text(place.fallbacks), text("transfer tax ", Fixed{place.tax_percent, 1}, "% of a layer"));
  } else {
    line("NPU fallbacks", "--", "device profile has no [units.npu]: no NPU with a published peak rate (int8_tops)");
  }

  // Share of a request mix that stays on the device.
  if (plan.route) {
    line("requests on device", text(plan.route->to_device, " of ", plan.route->requests),
         text("mix ", o.requests, ", cloud ", o.cloud));
  } else {
    line("requests on device", "--", plan.route.error().message);
  }
  // Energy of a request the device keeps, with [power] (a device without it has no row, as before the section).
  if (device.power) {
    if (plan.route && plan.route->energy_per_request_j) {
      line("energy per request", text(Fixed{*plan.route->energy_per_request_j, 1}, " J"),
           text("mean of the ", plan.route->to_device, " on the device, prefill and decode",
                device.power->source.empty() ? "" : "; measured: ", device.power->source));
    } else {
      line("energy per request", "--",
           plan.route ? "no request of the mix stays on the device" : plan.route.error().message);
    }
  }
}

// The page's results and notes (the figures table holds the rows; a sweep prints only those).
void page_results(const ReportOptions& o, const DeviceSpec& device, const ModelSpec& model, const PlanInputs& in,
                  const PlanResult& plan, io::Report& report) {
  io::Node& results = report.results;
  const FormatPlan& mine = plan.chosen();
  results["fits"] = mine.memory.fits;
  results["weights_bytes"] = io::Node::count(mine.weights.bytes);
  runtime_results(mine.runtime.buffers, in.runtime, device, results);
  results["decode_tok_per_s"] = mine.decode.tok_per_s;
  // The range of each speed under the device's runtime class (core/runtime_class.hpp); null without one.
  for (const char* key : {"decode_tok_per_s_low", "decode_tok_per_s_high", "prefill_tok_per_s_low",
                          "prefill_tok_per_s_high", "ttft_s_low", "ttft_s_high"}) {
    results[key] = io::Node();
  }
  if (device.errors) {
    const Interval d = rate_interval(mine.decode.tok_per_s, device.errors->decode);
    results["decode_tok_per_s_low"] = d.low;
    results["decode_tok_per_s_high"] = d.high;
    if (mine.prefill && device.errors->prefill) {
      const Interval p = rate_interval(mine.prefill->tok_per_s, *device.errors->prefill);
      const Interval t = time_interval(*mine.ttft_s, *device.errors->prefill);
      results["prefill_tok_per_s_low"] = p.low;
      results["prefill_tok_per_s_high"] = p.high;
      results["ttft_s_low"] = t.low;
      results["ttft_s_high"] = t.high;
    }
  }
  results["spec_tok_per_s"] = optional_json(mine.spec_tok_per_s);
  results["prefill_tok_per_s"] = mine.prefill ? io::Node(mine.prefill->tok_per_s) : io::Node();
  results["ttft_s"] = optional_json(mine.ttft_s);
  results["prefill_source"] = mine.prefill ? io::Node(to_string(mine.prefill->source)) : io::Node();
  results["prefill_basis"] = mine.prefill ? prefill_basis_json(*mine.prefill) : io::Node();
  results["calibrated"] = calibrated(device.provenance);
  results["provenance"] = provenance_json(device);
  const std::string mismatch = runtime_mismatch(device, model);
  results["runtime_mismatch"] = mismatch.empty() ? io::Node() : io::Node(mismatch);
  results["kv_budget_bytes"] = io::Node::count(plan.kv_budget_bytes);
  for (const KvTypePlan& k : plan.kv) {
    if (k.type == in.kv_type) results["max_context"] = io::Node::count(k.max_context);
  }
  results["trained_context"] = model.context_tokens ? io::Node(*model.context_tokens) : io::Node();
  results["beyond_trained"] = beyond_trained(model, o.context);
  results["load_s"] = plan.load ? io::Node(plan.load->total_s) : io::Node(nullptr);
  const std::optional<Interval> load_range = plan.load ? plan.load->total_range : std::nullopt;
  results["load_s_low"] = load_range ? io::Node(load_range->low) : io::Node(nullptr);
  results["load_s_high"] = load_range ? io::Node(load_range->high) : io::Node(nullptr);
  results["lora_resident_adapters"] = plan.lora ? io::Node(plan.lora->result.resident_adapters) : io::Node(nullptr);
  const bool npu = device.units.contains(UnitKind::npu);
  results["npu_fallbacks"] = npu ? io::Node(plan.place->fallbacks) : io::Node(nullptr);
  results["npu_tax_percent"] = npu ? io::Node(plan.place->tax_percent) : io::Node(nullptr);
  results["device_share"] =
      plan.route ? io::Node(static_cast<double>(plan.route->to_device) / static_cast<double>(plan.route->requests))
                 : io::Node(nullptr);
  if (device.power) {
    results["energy_per_request_j"] = plan.route && plan.route->energy_per_request_j
                                          ? io::Node(*plan.route->energy_per_request_j)
                                          : io::Node(nullptr);
  }

  // How far to trust the figures, then which prefill estimate the page shows, when the device gives two.
  std::vector<std::string>& notes = report.notes;
  notes.push_back(runtime_line(device));
  if (marks_uncalibrated(device)) notes.push_back(uncalibrated_note(device));
  if (!mismatch.empty()) notes.push_back(mismatch);
  if (mine.prefill && mine.prefill->source == PrefillSource::profile && plan.place && plan.place->prefill) {
    notes.push_back(fmt::format(
        "prefill, TTFT and routing use the device's [prefill] rate ({:.1f} tok/s), the runtime's end-to-end figure; "
        "`place` prints the per-op roofline of its [units] ({:.0f} tok/s, {}), an ideal with no runtime overheads",
        mine.prefill->tok_per_s, plan.place->prefill->tok_per_s, to_string(in.place_policy)));
  } else if (mine.prefill && mine.prefill->source == PrefillSource::roofline) {
    notes.push_back(fmt::format(FMT_COMPILE("prefill: {}, since the profile has no [prefill]"), roofline_basis(*mine.prefill)));
  }
}

// The page's pictures: the memory of the chosen format at the context (reserved, weights, llama.cpp's buffers, the
// KV cache of every sequence, what is left), decode tok/s of each format at chart_contexts of the larger of the
// trained context and the one asked for, with the context asked for marked, the chosen format's roofline, the
// layer's placement on the device's units (where it has them) and where the request mix goes.
void charts(const ReportOptions& o, const PageInputs& in, const ModelFigures& derived, const PlanResult& plan,
            io::Report& r) {
  const FormatPlan& mine = plan.chosen();
  io::Table memory{"memory", {{"part", "part"}, io::counted({"memory (GiB)", "bytes", 2, false, units::kGiB})}, {}};
  memory.add({std::string("reserved"), in.device.reserved_bytes});
  memory.add({fmt::format("weights {}", mine.format->name), mine.weights.bytes});
  if (mine.runtime.buffers.added_bytes > 0) memory.add({std::string("llama.cpp buffers"), mine.runtime.buffers.added_bytes});
  // Every sequence's cache, so that the parts add up to the device's memory at any --parallel.
  const std::uint32_t parallel = in.plan.runtime.parallel;
  const double caches = sequences_cache_bytes(in.model, in.plan.kv_type, o.context, in.device.kv_cache, parallel);
  memory.add({fmt::format("KV cache {} at {}{}", in.plan.kv_type.name(), o.context,
                          parallel == 1 ? "" : fmt::format(" x {} sequences", parallel)), caches});
  if (mine.runtime.budget_bytes - caches > 0) memory.add({std::string("free"), mine.runtime.budget_bytes - caches});
  r.chart_tables.push_back(std::move(memory));
  io::Chart stack{fmt::format("memory at context {}", o.context), "memory", "bar", "bytes", "", "", "part"};
  stack.stack = true;
  stack.rules.push_back({'x', in.device.memory_bytes, fmt::format("memory {:.2f} GiB", in.device.memory_bytes / units::kGiB)});
  r.charts.push_back(std::move(stack));

  // Under a runtime class, each rate's range too (core/runtime_class.hpp), drawn as a band.
  const bool ranged = in.device.errors.has_value();
  io::Table speed{"decode", {{"context (tokens)", "context", 0, true}, {"format", "format"}, {"tok/s", "tok_per_s", 2}}, {}};
  if (ranged) speed.columns.insert(speed.columns.end(), {{"tok/s low", "tok_per_s_low", 2}, {"tok/s high", "tok_per_s_high", 2}});
  DecodePlanInputs at{&in.model, in.plan.formats, derived.sizes, in.plan.kv_type, 0, in.plan.spec, in.plan.prompt_tokens,
                      derived.prompt_flops, derived.token_flops, in.plan.runtime};
  const std::uint64_t reach = std::max<std::uint64_t>(in.model.context_tokens.value_or(0), o.context);
  for (std::uint64_t c : chart_contexts(reach)) {
    at.context_tokens = c;
    for (const FormatPlan& f : unwrap(plan_decode(in.device, at))) {
      std::vector<io::Cell> row{static_cast<std::int64_t>(c), std::string(f.format->name), f.decode.tok_per_s};
      if (ranged) {
        const Interval i = rate_interval(f.decode.tok_per_s, in.device.errors->decode);
        row.insert(row.end(), {i.low, i.high});
      }
      speed.add(std::move(row));
    }
  }
  r.chart_tables.push_back(std::move(speed));
  io::Chart lines{"decode tok/s against context, per format", "decode", "line", "context", "tok_per_s", "", "format"};
  lines.x_log = 2;
  if (ranged) {
    lines.y_low = "tok_per_s_low";
    lines.y_high = "tok_per_s_high";
  }
  lines.rules.push_back({'x', static_cast<double>(o.context), fmt::format("context {}", with_thousands(o.context))});
  if (in.model.context_tokens) {
    lines.rules.push_back({'x', static_cast<double>(*in.model.context_tokens),
                           fmt::format("trained {}", with_thousands(*in.model.context_tokens))});
  }
  r.charts.push_back(std::move(lines));
  add_roofline_chart(in.device, in.model, std::span(&mine, 1), o.context, o.prompt, derived.prompt_flops, r);
  if (plan.place) add_place_timeline(plan.place->graph.ops, plan.place->layer, r);
  if (plan.route) {
    io::Table share{"routing", {{"destination", "destination"}, {"requests", "requests", 0, true},
                                {"requests %", "request_share", 1, false, 0.01}}, {}};
    const RouteShare& route = *plan.route;
    for (std::size_t i = 0; i < route.destinations.size(); ++i) {
      share.add({i == 0 ? std::string("device") : in.plan.clouds[i - 1].name,
                 static_cast<std::int64_t>(route.destinations[i]),
                 static_cast<double>(route.destinations[i]) / static_cast<double>(route.requests)});
    }
    r.chart_tables.push_back(std::move(share));
    r.charts.push_back({fmt::format("where the {} requests of {} go", route.requests, o.requests), "routing", "bar",
                        "destination", "request_share"});
  }
}

}  // namespace

io::Report report(const ReportOptions& o, const Context& ctx) {
  io::Report r;
  r.command = "report";
  const PageInputs in = page_inputs(o, ctx, r);
  const ModelFigures derived = unwrap(model_figures(in.model, in.plan));
  const PlanResult plan = unwrap(page_plan(in.device, in.model, in.plan, derived));
  io::Table t{"figures", {{"figure", "figure"}, {"value", "value"}, {"note", "note"}}, {}};
  figures(o, in.device, in.model, in.plan, plan, {}, t.rows);
  page_results(o, in.device, in.model, in.plan, plan, r);
  r.tables.push_back(std::move(t));
  if (ctx.charts()) charts(o, in, derived, plan, r);
  r.title = fmt::format("report: {} ({}) on {}", in.model.name, plan.chosen().format->name, in.device.name);
  return r;
}

Runner setup_report(Options& opts) {
  auto o = std::make_shared<ReportOptions>();
  opts.add(Opt::device, o->device).required();
  opts.add(Opt::model, o->model).required();
  opts.add(Opt::quant, o->quant, "Weight format the figures are for (default: a GGUF model's own format, else Q4_K_M)");
  opts.add(Opt::context, o->context, "Context the decode rate and fit are taken at (takes k and M: 8k)").show_default();
  opts.add(Opt::kv_type, o->kv_type, kv_type_help("KV-cache type")).show_default();
  opts.add(Opt::runtime, o->runtime_name, runtime_help());
  opts.add(Opt::prompt, o->prompt, "Prompt tokens for prefill and time to first token (takes k and M: 2k)")
      .show_default()
      .range(1, limits::kPromptTokens);
  opts.add(Opt::spec, o->spec);
  opts.add(Opt::rank, o->rank, "LoRA rank for the resident-adapter count").show_default();
  opts.add(Opt::cloud, o->cloud, "Cloud(s) for the request-mix share, comma-separated").show_default();
  opts.add(Opt::requests, o->requests, "Request mix: a requests profile or file").show_default();
  add_runtime_options(opts, o->runtime);
  auto structs = [o](const Context& ctx) {
    io::Report loaded;
    auto in = std::make_shared<const PageInputs>(page_inputs(*o, ctx, loaded));
    // The loaded model's figures (nullptr when its weight sizes cannot be derived: a sweep over model numbers may
    // still make models whose sizes can).
    Result<ModelFigures> loaded_model = model_figures(in->model, in->plan);
    auto loaded_figures = loaded_model ? std::make_shared<const ModelFigures>(std::move(*loaded_model)) : nullptr;
    StructRows out{in->device, in->model, {}};
    out.worker = [o, in, loaded_figures] {
      auto derived = std::make_shared<ModelCache<ModelFigures>>(loaded_figures);
      auto figures_of = [in, derived](const ModelSpec& m, std::uint64_t model_id) {
        return derived->get(m, model_id, [&](const ModelSpec& model) -> std::optional<ModelFigures> {
          Result<ModelFigures> f = model_figures(model, in->plan);
          return f ? std::optional(std::move(*f)) : std::nullopt;
        });
      };
      return StructRows::Worker{
          [o, in, figures_of](const DeviceSpec& d, const ModelSpec& m, std::uint64_t model_id,
                              const std::vector<io::Cell>& prefix, Rows& rows) {
            const ModelFigures* f = figures_of(m, model_id);
            if (!f) throw UsageError("report: a swept model was not checked (a bug)");
            DeviceSpec copy;
            const DeviceSpec& device = with_ubatch(o->runtime, d, copy);
            // Checked by `evaluable` below: the plan alone, without checking it again.
            figures(*o, device, m, in->plan, unwrap(edgeplan::plan(device, m, in->plan, *f)), prefix, rows);
          },
          [o, in, figures_of](const DeviceSpec& d, const ModelSpec& m, std::uint64_t model_id) {
            const ModelFigures* f = figures_of(m, model_id);
            if (!f) return false;
            DeviceSpec copy;
            const DeviceSpec& device = with_ubatch(o->runtime, d, copy);
            return page_plan(device, m, in->plan, *f, failing_parts(device)).ok();
          }};
    };
    return out;
  };
  return Runner([o](const Context& ctx) { return report(*o, ctx); }, structs);
}

}  // namespace edgeplan::cli
