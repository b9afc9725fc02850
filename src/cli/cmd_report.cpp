// edgeplan report: one page for a device and model, from the pair's plan (core/plan.hpp): every figure is
// computed by the same core functions the single commands call, once, so each is the one that command prints.
#include <algorithm>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "cli/plan.hpp"
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
  page.device = ctx.device(o.device, r.inputs);
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

// A swept device with the page's --ubatch.
DeviceSpec with_runtime(const ReportOptions& o, const DeviceSpec& d) {
  DeviceSpec out = d;
  runtime_options(o.runtime, out);
  return out;
}

// The plan of a pair as the page needs it, from the model's figures (model_figures): a device with [lora] whose
// adapters cannot be planned, or with an NPU whose placement fails, is an error rather than a "--" line.
Result<PlanResult> page_plan(const DeviceSpec& device, const ModelSpec& model, const PlanInputs& in,
                             const ModelFigures& figures) {
  Result<PlanResult> plan = edgeplan::plan(device, model, in, figures);
  if (!plan) return plan;
  if (!plan->lora && device.lora) return plan->lora.error();
  if (!plan->place && device.units.contains(UnitKind::npu)) return plan->place.error();
  return plan;
}

// The figures table of a pair's plan, each row starting with `prefix`; with `report`, the results and notes too.
void figures(const ReportOptions& o, const DeviceSpec& device, const ModelSpec& model, const PlanInputs& in,
             const PlanResult& plan, const std::vector<io::Cell>& prefix, Rows& rows, io::Report* report) {
  const auto line = [&](std::string figure, std::string value, std::string note = "") {
    std::vector<io::Cell>& row = start_row(rows, prefix, 3);
    row.insert(row.end(), {std::move(figure), std::move(value), std::move(note)});
  };
  const auto result = [&](const char* key, io::Node value) {
    if (report) report->results[key] = std::move(value);
  };
  const std::string quant(plan.chosen().format->name);
  const std::string context = std::to_string(o.context);
  const std::uint32_t parallel = in.runtime.parallel;
  const std::string sequences = parallel == 1 ? "" : fmt::format(FMT_COMPILE("{} x "), parallel);
  // Weights and decode.
  for (const FormatPlan& f : plan.formats) {
    line(fmt::format(FMT_COMPILE("weights {}"), f.format->name),
         fmt::format(FMT_COMPILE("{:.2f} GB"), f.weights.bytes / units::kGB),
         f.memory.fits ? fmt::format(FMT_COMPILE("fits with {}{} tokens of {} KV"), sequences, context, in.kv_type.name())
                       : "does not fit");
  }
  const FormatPlan& mine = plan.chosen();
  result("fits", mine.memory.fits);
  result("weights_bytes", mine.weights.bytes);
  if (report) runtime_results(mine.runtime.buffers, in.runtime, device, report->results);
  result("decode_tok_per_s", mine.decode.tok_per_s);
  const std::string mark = marks_uncalibrated(device) ? " *" : "";
  line("decode", fmt::format(FMT_COMPILE("{:.2f} tok/s{}"), mine.decode.tok_per_s, mark),
       fmt::format(FMT_COMPILE("{} at context {}"), quant, context));
  result("spec_tok_per_s", optional_json(mine.spec_tok_per_s));
  if (mine.spec_tok_per_s) {
    line("decode with speculation", fmt::format(FMT_COMPILE("{:.2f} tok/s"), *mine.spec_tok_per_s),
         fmt::format(FMT_COMPILE("{:.2f}x ({})"), *plan.spec_speedup, o.spec));
  }
  result("prefill_tok_per_s", mine.prefill ? io::Node(mine.prefill->tok_per_s) : io::Node());
  result("ttft_s", optional_json(mine.ttft_s));
  result("prefill_source", mine.prefill ? io::Node(to_string(mine.prefill->source)) : io::Node());
  result("prefill_basis", mine.prefill ? prefill_basis_json(*mine.prefill) : io::Node());
  result("calibrated", calibrated(device.provenance));
  result("provenance", provenance_json(device));
  const std::string mismatch = runtime_mismatch(device, model);
  result("runtime_mismatch", mismatch.empty() ? io::Node() : io::Node(mismatch));
  if (mine.prefill) {
    line("prefill", fmt::format(FMT_COMPILE("{:.1f} tok/s{}"), mine.prefill->tok_per_s, mark),
         fmt::format(FMT_COMPILE("{}-token prompt"), o.prompt));
    line("time to first token", fmt::format(FMT_COMPILE("{:.2f} s"), *mine.ttft_s), "prefill + one decode step");
  } else {
    line("prefill", "--", mine.prefill.error().message);
  }

  // KV cache.
  result("kv_budget_bytes", plan.kv_budget_bytes);
  for (const KvTypePlan& k : plan.kv) {
    if (k.type == in.kv_type) result("max_context", k.max_context);
  }
  // llama.cpp's buffers, where the device counts them.
  if (device.runtime.buffers) {
    const RuntimeBuffers& b = mine.runtime.buffers;
    line("compute buffer", fmt::format(FMT_COMPILE("{:.2f} MiB"), b.compute_bytes / units::kMiB),
         fmt::format(FMT_COMPILE("llama.cpp, ubatch {}, flash attention {}"), device.kv_cache.ubatch_tokens,
                     b.flash_attn ? "on" : "off"));
    line("output buffer", fmt::format(FMT_COMPILE("{:.2f} MiB"), b.output_bytes / units::kMiB),
         fmt::format(FMT_COMPILE("logits of {} sequence{}"), parallel, parallel == 1 ? "" : "s"));
    line("repack buffer", fmt::format(FMT_COMPILE("{:.2f} MiB"), b.repack_bytes / units::kMiB),
         fmt::format(FMT_COMPILE("repack ISA {}{}"), to_string(device.runtime.repack),
                     in.runtime.mmap ? "" : ", in place of the weights it holds (--no-mmap)"));
    if (device.runtime.repack == RepackIsa::x86_amx) {
      line("AMX buffer", fmt::format(FMT_COMPILE("{:.2f} MiB"), b.amx_bytes / units::kMiB),
           in.runtime.mmap ? fmt::format(FMT_COMPILE("beside the mapped file; {:.2f} MiB of moved weights not mapped"),
                                         b.unmapped_bytes / units::kMiB)
                           : std::string("in place of the weights it holds (--no-mmap)"));
    }
  }
  line("KV budget", fmt::format(FMT_COMPILE("{:.2f} GiB"), plan.kv_budget_bytes / units::kGiB),
       device.runtime.buffers ? "memory - reserved - weights - buffers" : "memory - reserved - weights");
  result("trained_context", model.context_tokens ? io::Node(*model.context_tokens) : io::Node());
  result("beyond_trained", beyond_trained(model, o.context));
  if (model.context_tokens) {
    line("trained context", with_thousands(*model.context_tokens) + " tokens",
         beyond_trained(model, o.context)
             ? fmt::format(FMT_COMPILE("context {} is beyond it: the model does not support it"), context)
             : fmt::format(FMT_COMPILE("context {} is within it"), context));
  }
  for (const KvTypePlan& k : plan.kv) {
    line(fmt::format(FMT_COMPILE("max context {}"), k.type.name()), with_thousands(k.max_context) + " tokens",
         fmt::format(FMT_COMPILE("{:.0f} B/token"), k.bytes_per_token));
  }

  // Cold load from storage.
  if (plan.load) {
    result("load_s", plan.load->total_s);
    const std::string assumption = storage_assumption(device);
    line("cold load", fmt::format(FMT_COMPILE("{:.2f} s"), plan.load->total_s),
         assumption.empty() ? "whole file read (mlock)" : "whole file read (mlock); " + assumption);
  } else {
    result("load_s", nullptr);
    line("cold load", "--", plan.load.error().message);
  }

  // LoRA adapters.
  if (plan.lora) {
    result("lora_resident_adapters", plan.lora->result.resident_adapters);
    line("LoRA adapters resident", std::to_string(plan.lora->result.resident_adapters),
         fmt::format(FMT_COMPILE("rank {}, {:.1f} MiB each, swap {:.0f} us"), o.rank,
                     plan.lora->adapter.adapter_bytes / units::kMiB,
                     plan.lora->result.swap_s * units::kUsPerS));
  } else {
    result("lora_resident_adapters", nullptr);
    line("LoRA adapters resident", "--", plan.lora.error().message);
  }

  // Operator fallbacks on the NPU.
  if (device.units.contains(UnitKind::npu)) {
    const PlacePlan& place = *plan.place;
    result("npu_fallbacks", place.fallbacks);
    result("npu_tax_percent", place.tax_percent);
    line("NPU fallbacks", std::to_string(place.fallbacks),
         fmt::format(FMT_COMPILE("transfer tax {:.1f}% of a layer"), place.tax_percent));
  } else {
    result("npu_fallbacks", nullptr);
    result("npu_tax_percent", nullptr);
    line("NPU fallbacks", "--", "device profile has no [units.npu]: no NPU with a published peak rate (int8_tops)");
  }

  // Share of a request mix that stays on the device.
  if (plan.route) {
    result("device_share", static_cast<double>(plan.route->to_device) / static_cast<double>(plan.route->requests));
    line("requests on device", fmt::format(FMT_COMPILE("{} of {}"), plan.route->to_device, plan.route->requests),
         fmt::format(FMT_COMPILE("mix {}, cloud {}"), o.requests, o.cloud));
  } else {
    result("device_share", nullptr);
    line("requests on device", "--", plan.route.error().message);
  }
  // Energy of a request the device keeps, with [power] (a device without it has no row, as before the section).
  if (device.power) {
    const std::string measured = device.power->source.empty() ? "" : "; measured: " + device.power->source;
    if (plan.route && plan.route->energy_per_request_j) {
      result("energy_per_request_j", *plan.route->energy_per_request_j);
      line("energy per request", fmt::format(FMT_COMPILE("{:.1f} J"), *plan.route->energy_per_request_j),
           fmt::format(FMT_COMPILE("mean of the {} on the device, prefill and decode{}"), plan.route->to_device, measured));
    } else {
      result("energy_per_request_j", nullptr);
      line("energy per request", "--",
           plan.route ? "no request of the mix stays on the device" : plan.route.error().message);
    }
  }

  // How far to trust the figures, then which prefill estimate the page shows, when the device gives two.
  if (!report) return;
  std::vector<std::string>& notes = report->notes;
  if (!mark.empty()) notes.push_back(uncalibrated_note(device));
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
  io::Table memory{"memory", {{"part", "part"}, {"memory (GiB)", "bytes", 2, false, units::kGiB}}, {}};
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

  io::Table speed{"decode", {{"context (tokens)", "context", 0, true}, {"format", "format"}, {"tok/s", "tok_per_s", 2}}, {}};
  DecodePlanInputs at{&in.model, in.plan.formats, derived.sizes, in.plan.kv_type, 0, in.plan.spec, in.plan.prompt_tokens,
                      derived.prompt_flops, derived.token_flops, in.plan.runtime};
  const std::uint64_t reach = std::max<std::uint64_t>(in.model.context_tokens.value_or(0), o.context);
  for (std::uint64_t c : chart_contexts(reach)) {
    at.context_tokens = c;
    for (const FormatPlan& f : unwrap(plan_decode(in.device, at))) {
      speed.add({static_cast<std::int64_t>(c), std::string(f.format->name), f.decode.tok_per_s});
    }
  }
  r.chart_tables.push_back(std::move(speed));
  io::Chart lines{"decode tok/s against context, per format", "decode", "line", "context", "tok_per_s", "", "format"};
  lines.x_log = 2;
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
  figures(o, in.device, in.model, in.plan, plan, {}, t.rows, &r);
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
            const DeviceSpec device = with_runtime(*o, d);
            figures(*o, device, m, in->plan, unwrap(page_plan(device, m, in->plan, *f)), prefix, rows, nullptr);
          },
          [o, in, figures_of](const DeviceSpec& d, const ModelSpec& m, std::uint64_t model_id) {
            const ModelFigures* f = figures_of(m, model_id);
            return f && page_plan(with_runtime(*o, d), m, in->plan, *f).ok();
          }};
    };
    return out;
  };
  return Runner([o](const Context& ctx) { return report(*o, ctx); }, structs);
}

}  // namespace edgeplan::cli
