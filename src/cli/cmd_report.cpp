// edgeplan report: one page for a device and model, from the pair's plan (core/plan.hpp): every figure is
// computed by the same core functions the single commands call, once, so each is the one that command prints.
#include <fmt/format.h>

#include "cli/plan.hpp"
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

// One line of the page: a figure, its value as text, a note.
void line(io::Table& t, std::string figure, std::string value, std::string note = "") {
  t.add({std::move(figure), std::move(value), std::move(note)});
}

io::Json optional_json(const std::optional<double>& v) { return v ? io::Json(*v) : io::Json(); }

}  // namespace

io::Report report(const ReportOptions& o, const Context& ctx) {
  io::Report r;
  r.command = "report";
  PlanInputs in;
  in.device = ctx.device(o.device, r.inputs);
  in.model = ctx.model(o.model, r.inputs);
  const DeviceSpec& device = in.device;
  const FileType& format = need_format(o.quant);
  const std::string quant(format.name);
  const std::string context = std::to_string(o.context);
  r.inputs["quant"] = quant;
  r.inputs["context_tokens"] = o.context;
  in.formats = formats_for(format);
  in.kv_type = need_kv_type(o.kv_type, in.model);
  r.inputs["kv_type"] = in.kv_type.name();
  in.context_tokens = o.context;
  in.prompt_tokens = o.prompt;
  if (!o.spec.empty()) in.spec = parse_spec(o.spec);
  if (o.rank == 0) throw UsageError("--rank must be at least 1");
  in.lora_rank = o.rank;
  io::Report route_inputs;  // the clouds and requests are recorded by route, not on this page
  in.clouds = load_clouds(o.cloud, ctx, route_inputs);
  in.requests = load_request_list(o.requests, ctx, route_inputs);
  const PlanResult plan = unwrap(edgeplan::plan(in));

  io::Table t{"figures", {{"figure", "figure"}, {"value", "value"}, {"note", "note"}}, {}};
  io::Json& res = r.results;

  // Weights and decode.
  for (const FormatPlan& f : plan.formats) {
    line(t, fmt::format("weights {}", f.format->name), fmt::format("{:.2f} GB", f.weights.bytes / units::kGB),
         f.memory.fits ? fmt::format("fits with {} tokens of {} KV", context, in.kv_type.name()) : "does not fit");
  }
  const FormatPlan& mine = plan.chosen();
  res["fits"] = mine.memory.fits;
  res["weights_bytes"] = mine.weights.bytes;
  res["decode_tok_per_s"] = mine.decode.tok_per_s;
  line(t, "decode", fmt::format("{:.2f} tok/s", mine.decode.tok_per_s), fmt::format("{} at context {}", quant, context));
  res["spec_tok_per_s"] = optional_json(mine.spec_tok_per_s);
  if (mine.spec_tok_per_s) {
    line(t, "decode with speculation", fmt::format("{:.2f} tok/s", *mine.spec_tok_per_s),
         fmt::format("{:.2f}x ({})", *plan.spec_speedup, o.spec));
  }
  res["prefill_tok_per_s"] = mine.prefill ? io::Json(mine.prefill->tok_per_s) : io::Json();
  res["ttft_s"] = optional_json(mine.ttft_s);
  res["prefill_source"] = mine.prefill ? io::Json(to_string(mine.prefill->source)) : io::Json();
  if (mine.prefill) {
    line(t, "prefill", fmt::format("{:.1f} tok/s", mine.prefill->tok_per_s), fmt::format("{}-token prompt", o.prompt));
    line(t, "time to first token", fmt::format("{:.2f} s", *mine.ttft_s), "prefill + one decode step");
  } else {
    line(t, "prefill", "--", mine.prefill.error().message);
  }

  // KV cache.
  res["kv_budget_bytes"] = plan.kv_budget_bytes;
  for (const KvTypePlan& k : plan.kv) {
    if (k.type == in.kv_type) res["max_context"] = k.max_context;
  }
  line(t, "KV budget", fmt::format("{:.2f} GiB", plan.kv_budget_bytes / units::kGiB), "memory - reserved - weights");
  res["trained_context"] = in.model.context_tokens ? io::Json(*in.model.context_tokens) : io::Json();
  res["beyond_trained"] = beyond_trained(in.model, o.context);
  if (in.model.context_tokens) {
    line(t, "trained context", with_thousands(*in.model.context_tokens) + " tokens",
         beyond_trained(in.model, o.context) ? fmt::format("context {} is beyond it: the model does not support it", context)
                                             : fmt::format("context {} is within it", context));
  }
  for (const KvTypePlan& k : plan.kv) {
    line(t, fmt::format("max context {}", k.type.name()), with_thousands(k.max_context) + " tokens",
         fmt::format("{:.0f} B/token", k.bytes_per_token));
  }

  // Cold load from storage.
  if (plan.load) {
    res["load_s"] = plan.load->total_s;
    line(t, "cold load", fmt::format("{:.2f} s", plan.load->total_s), "whole file read (mlock)");
  } else {
    res["load_s"] = nullptr;
    line(t, "cold load", "--", plan.load.error().message);
  }

  // LoRA adapters.
  if (plan.lora) {
    res["lora_resident_adapters"] = plan.lora->result.resident_adapters;
    line(t, "LoRA adapters resident", std::to_string(plan.lora->result.resident_adapters),
         fmt::format("rank {}, {:.1f} MiB each, swap {:.0f} us", o.rank, plan.lora->adapter.adapter_bytes / units::kMiB,
                     plan.lora->result.swap_s * units::kUsPerS));
  } else {
    if (device.lora) throw UsageError(plan.lora.error().message);
    res["lora_resident_adapters"] = nullptr;
    line(t, "LoRA adapters resident", "--", plan.lora.error().message);
  }

  // Operator fallbacks on the NPU.
  if (device.units.contains(UnitKind::npu)) {
    const PlacePlan& place = unwrap(Result<PlacePlan>(plan.place));
    res["npu_fallbacks"] = place.fallbacks;
    res["npu_tax_percent"] = place.tax_percent;
    line(t, "NPU fallbacks", std::to_string(place.fallbacks),
         fmt::format("transfer tax {:.1f}% of a layer", place.tax_percent));
  } else {
    res["npu_fallbacks"] = nullptr;
    res["npu_tax_percent"] = nullptr;
    line(t, "NPU fallbacks", "--", "device profile has no [units.npu]");
  }

  // Share of a request mix that stays on the device.
  if (plan.route) {
    res["device_share"] = static_cast<double>(plan.route->to_device) / static_cast<double>(plan.route->requests);
    line(t, "requests on device", fmt::format("{} of {}", plan.route->to_device, plan.route->requests),
         fmt::format("mix {}, cloud {}", o.requests, o.cloud));
  } else {
    res["device_share"] = nullptr;
    line(t, "requests on device", "--", plan.route.error().message);
  }

  // Which prefill estimate the page shows, when the device gives two.
  if (mine.prefill && mine.prefill->source == PrefillSource::profile && plan.place && plan.place->prefill) {
    r.notes.push_back(fmt::format(
        "prefill, TTFT and routing use the device's [prefill] rate ({:.1f} tok/s), the runtime's end-to-end figure; "
        "`place` prints the per-op roofline of its [units] ({:.0f} tok/s, {}), an ideal with no runtime overheads",
        mine.prefill->tok_per_s, plan.place->prefill->tok_per_s, to_string(in.place_policy)));
  } else if (mine.prefill && mine.prefill->source == PrefillSource::roofline) {
    r.notes.push_back(fmt::format("prefill: the per-op roofline of the device's [units] ({}, as `place` prints it), "
                                  "since the profile has no [prefill]", to_string(kPrefillPolicy)));
  }

  r.tables.push_back(std::move(t));
  r.title = fmt::format("report: {} ({}) on {}", in.model.name, quant, device.name);
  return r;
}

Runner setup_report(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  app.add_option("--device", o->device, "Device profile name or .toml path")->required();
  app.add_option("--model", o->model, "Model profile name or .toml path")->required();
  app.add_option("--quant", o->quant, "Weight format the figures are for")->capture_default_str();
  app.add_option("--context", o->context, "Context the decode rate and fit are taken at")->capture_default_str();
  app.add_option("--kv-type", o->kv_type, kv_type_help("KV-cache type"))->capture_default_str();
  app.add_option("--prompt", o->prompt, "Prompt tokens for prefill and time to first token")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24));
  app.add_option("--spec", o->spec, "Speculative decoding / MTP: alpha=A,gamma=G,cost=C");
  app.add_option("--rank", o->rank, "LoRA rank for the resident-adapter count")->capture_default_str();
  app.add_option("--cloud", o->cloud, "Cloud(s) for the request-mix share, comma-separated")->capture_default_str();
  app.add_option("--requests", o->requests, "Request mix: a requests profile or file")->capture_default_str();
  return [o](const Context& ctx) { return report(*o, ctx); };
}

}  // namespace edgeplan::cli
