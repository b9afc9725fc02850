// edgeplan report: one page for a device and model, composed from the single-mechanism commands (each run
// through run_command with the same profiles and overrides), so every figure is the one that command prints.
#include <fmt/format.h>

#include "cli/command.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::cli {
namespace {

struct ReportOptions {
  std::string device, model, quant = "Q4_K_M", kv_type = "f16", spec, cloud = "llama-70b-api",
                              requests = "typical-mix";
  std::uint64_t context = 4096, prompt = 512, rank = 16;
};

// The decode formats shown: the chosen one first, then the usual comparison points.
std::string formats_for(const std::string& chosen) {
  std::string out = chosen;
  for (const char* f : {"Q4_K_M", "Q8_0", "F16"}) {
    if (need_format(chosen).name != f) out += std::string(",") + f;
  }
  return out;
}

const io::Json& row_of(const io::Json& rows, const std::string& key, const std::string& id) {
  for (const io::Json& r : rows) {
    if (r[key] == id) return r;
  }
  throw UsageError(fmt::format("report: no {} row '{}'", key, id));
}

// One line of the page: a figure, its value as text, a note.
void line(io::Table& t, std::string figure, std::string value, std::string note = "") {
  t.add({std::move(figure), std::move(value), std::move(note)});
}

}  // namespace

Runner setup_report(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  app.add_option("--device", o->device, "Device profile name or .toml path")->required();
  app.add_option("--model", o->model, "Model profile name or .toml path")->required();
  app.add_option("--quant", o->quant, "Weight format the figures are for")->capture_default_str();
  app.add_option("--context", o->context, "Context the decode rate and fit are taken at")->capture_default_str();
  app.add_option("--kv-type", o->kv_type, "KV-cache type: f16, q8_0, q4_0, int8, int4")->capture_default_str();
  app.add_option("--prompt", o->prompt, "Prompt tokens for prefill and time to first token")->capture_default_str();
  app.add_option("--spec", o->spec, "Speculative decoding / MTP: alpha=A,gamma=G,cost=C");
  app.add_option("--rank", o->rank, "LoRA rank for the resident-adapter count")->capture_default_str();
  app.add_option("--cloud", o->cloud, "Cloud(s) for the request-mix share, comma-separated")->capture_default_str();
  app.add_option("--requests", o->requests, "Request mix: a requests profile or file")->capture_default_str();
  return [o](const Context& ctx) {
    io::Report r;
    r.command = "report";
    const DeviceSpec device = ctx.device(o->device, r.inputs);
    const ModelSpec model = ctx.model(o->model, r.inputs);
    const std::string quant(need_format(o->quant).name);
    const std::string context = std::to_string(o->context);
    r.inputs["quant"] = quant;
    r.inputs["context_tokens"] = o->context;
    r.inputs["kv_type"] = o->kv_type;
    const std::vector<std::string> pair{"--device", o->device, "--model", o->model};
    auto with = [&](std::vector<std::string> more) {
      more.insert(more.begin(), pair.begin(), pair.end());
      return more;
    };
    io::Table t{"figures", {{"figure", "figure"}, {"value", "value"}, {"note", "note"}}, {}};
    io::Json& res = r.results;

    // Weights and decode.
    std::vector<std::string> decode_args = with({"--quant", formats_for(o->quant), "--context", context, "--kv-type",
                                                 o->kv_type, "--prompt", std::to_string(o->prompt)});
    if (!o->spec.empty()) decode_args.insert(decode_args.end(), {"--spec", o->spec});
    const io::Json dec = io::full_results(run_command("decode", decode_args, ctx));
    for (const io::Json& f : dec["formats"]) {
      line(t, fmt::format("weights {}", f["format"].get<std::string>()),
           fmt::format("{:.2f} GB", f["weights_bytes"].get<double>() / units::kGB),
           f["fits"].get<bool>() ? fmt::format("fits with {} tokens of {} KV", context, o->kv_type) : "does not fit");
    }
    const io::Json& mine = row_of(dec["formats"], "format", quant);
    res["fits"] = mine["fits"];
    res["weights_bytes"] = mine["weights_bytes"];
    res["decode_tok_per_s"] = mine["tok_per_s"];
    line(t, "decode", fmt::format("{:.2f} tok/s", mine["tok_per_s"].get<double>()),
         fmt::format("{} at context {}", quant, context));
    res["spec_tok_per_s"] = mine.contains("spec_tok_per_s") ? mine["spec_tok_per_s"] : io::Json();
    if (!o->spec.empty()) {
      line(t, "decode with speculation", fmt::format("{:.2f} tok/s", mine["spec_tok_per_s"].get<double>()),
           fmt::format("{:.2f}x ({})", dec["spec_speedup"].get<double>(), o->spec));
    }
    res["prefill_tok_per_s"] = mine.contains("prefill_tok_per_s") ? mine["prefill_tok_per_s"] : io::Json();
    res["ttft_s"] = mine.contains("ttft_s") ? mine["ttft_s"] : io::Json();
    if (device.prefill) {
      line(t, "prefill", fmt::format("{:.1f} tok/s", mine["prefill_tok_per_s"].get<double>()),
           fmt::format("{}-token prompt", o->prompt));
      line(t, "time to first token", fmt::format("{:.2f} s", mine["ttft_s"].get<double>()), "prefill + one decode step");
    } else {
      line(t, "prefill", "--", "device profile has no [prefill]");
    }

    // KV cache.
    const io::Json kv = io::full_results(
        run_command("kv", with({"--quant", quant, "--context", context, "--kv-type", o->kv_type}), ctx));
    res["kv_budget_bytes"] = kv["budget_bytes"];
    res["max_context"] = kv["max_context"];
    line(t, "KV budget", fmt::format("{:.2f} GiB", kv["budget_gib"].get<double>()), "memory - reserved - weights");
    for (const io::Json& k : kv["types"]) {
      line(t, fmt::format("max context {}", k["kv_type"].get<std::string>()),
           with_thousands(k["max_context"].get<std::uint64_t>()) + " tokens",
           fmt::format("{:.0f} B/token", k["bytes_per_token"].get<double>()));
    }

    // Cold load from storage.
    if (device.storage) {
      const io::Json st = io::full_results(run_command("stream", with({"--quant", quant}), ctx));
      const io::Json& preload = st["load"].front();
      res["load_s"] = preload["total_s"];
      line(t, "cold load", fmt::format("{:.2f} s", preload["total_s"].get<double>()), "whole file read (mlock)");
    } else {
      res["load_s"] = nullptr;
      line(t, "cold load", "--", "device profile has no [storage]");
    }

    // LoRA adapters.
    if (device.lora) {
      const io::Json lo = io::full_results(
          run_command("lora", with({"--quant", quant, "--rank", std::to_string(o->rank)}), ctx));
      res["lora_resident_adapters"] = lo["resident_adapters"];
      line(t, "LoRA adapters resident", std::to_string(lo["resident_adapters"].get<std::uint64_t>()),
           fmt::format("rank {}, {:.1f} MiB each, swap {:.0f} us", o->rank, lo["adapter_mib"].get<double>(),
                       lo["swap_us"].get<double>()));
    } else {
      res["lora_resident_adapters"] = nullptr;
      line(t, "LoRA adapters resident", "--", "device profile has no [lora]");
    }

    // Operator fallbacks on the NPU.
    if (device.units.contains(UnitKind::npu)) {
      const io::Json pl = io::full_results(run_command("place", with({"--seq", std::to_string(o->prompt)}), ctx));
      std::uint64_t fallbacks = 0;
      for (const io::Json& op : pl["ops"]) fallbacks += op["fallback_from"].is_null() ? 0 : 1;
      res["npu_fallbacks"] = fallbacks;
      res["npu_tax_percent"] = pl["tax_percent"];
      line(t, "NPU fallbacks", std::to_string(fallbacks),
           fmt::format("transfer tax {:.1f}% of a layer", pl["tax_percent"].get<double>()));
    } else {
      res["npu_fallbacks"] = nullptr;
      res["npu_tax_percent"] = nullptr;
      line(t, "NPU fallbacks", "--", "device profile has no [units.npu]");
    }

    // Share of a request mix that stays on the device.
    if (device.prefill) {
      const io::Json ro = io::full_results(
          run_command("route", with({"--quant", quant, "--cloud", o->cloud, "--requests", o->requests}), ctx));
      const double total = ro["request_count"].get<double>();
      res["device_share"] = ro["to_device"].get<double>() / total;
      line(t, "requests on device", fmt::format("{} of {:.0f}", ro["to_device"].get<int>(), total),
           fmt::format("mix {}, cloud {}", o->requests, o->cloud));
    } else {
      res["device_share"] = nullptr;
      line(t, "requests on device", "--", "device profile has no [prefill]");
    }

    r.tables.push_back(std::move(t));
    r.title = fmt::format("report: {} ({}) on {}", model.name, quant, device.name);
    return r;
  };
}

}  // namespace edgeplan::cli
