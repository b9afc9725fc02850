// edgeplan kv: KV-cache budget and the longest context per cache type (core/kv.hpp).
#include <fmt/format.h>

#include "cli/command.hpp"
#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/units.hpp"

namespace edgeplan::cli {
namespace {

struct KvOptions {
  std::string device, model, quant = "Q4_K_M", kv_type = "f16";
  std::uint64_t context = 0;
};

}  // namespace

Runner setup_kv(CLI::App& app) {
  auto o = std::make_shared<KvOptions>();
  app.add_option("--device", o->device, "Device profile name or .toml path")->required();
  app.add_option("--model", o->model, "Model profile name or .toml path")->required();
  app.add_option("--quant", o->quant, "Weight format, e.g. Q4_K_M")->capture_default_str();
  app.add_option("--context", o->context, "Context to check: does it fit, and with what headroom");
  app.add_option("--kv-type", o->kv_type, "Cache type that decides `fits`: f16, q8_0, q4_0, int8, int4")
      ->capture_default_str();
  return [o](const Context& ctx) {
    io::Report r;
    r.command = "kv";
    const DeviceSpec device = ctx.device(o->device, r.inputs);
    const ModelSpec model = ctx.model(o->model, r.inputs);
    const KvType& primary = need_kv_type(o->kv_type);
    const FileType* ft = &need_format(o->quant);
    const WeightSize weights = unwrap(weight_size(model, *ft));
    const double budget = kv_budget_bytes(device.memory_bytes, device.reserved_bytes, weights.bytes);
    r.inputs["quant"] = ft->name;
    r.inputs["kv_type"] = primary.name;
    if (o->context > 0) r.inputs["context_tokens"] = o->context;

    io::Table t{"types", {{"kv type", "kv_type"},
                          {"counted as", "counted_as"},
                          {"bytes/token", "bytes_per_token", 0},
                          {"max context (tokens)", "max_context", 0, true}}, {}};
    if (o->context > 0) {
      t.columns.push_back({fmt::format("fits {}", o->context), "fits"});
      t.columns.push_back({"headroom (GiB)", "headroom_bytes", 2, false, units::kGiB});
    }
    for (const KvType& type : kv_types()) {
      const double per_token = kv_bytes_per_token(model, type);
      const std::uint64_t longest = max_context(model, type, budget, device.kv_cache);
      std::vector<io::Cell> row{std::string(type.name), std::string(type.counted_as), per_token,
                                static_cast<std::int64_t>(longest)};
      const double headroom = budget - kv_cache_bytes(model, type, o->context, device.kv_cache);
      if (o->context > 0) {
        row.emplace_back(headroom >= 0);
        row.emplace_back(headroom);
      }
      if (&type == &primary) {
        r.results["bytes_per_token"] = per_token;
        r.results["max_context"] = longest;
        if (o->context > 0) {
          r.results["fits"] = headroom >= 0;
          r.results["headroom_bytes"] = headroom;
        }
      }
      t.add(std::move(row));
    }
    r.results["weights_bytes"] = weights.bytes;
    r.results["budget_bytes"] = budget;
    r.results["budget_gib"] = budget / units::kGiB;
    r.tables.push_back(std::move(t));

    r.title = fmt::format("kv: {} ({}) on {}", model.name, ft->name, device.name);
    r.header.push_back(fmt::format("memory {:.2f} GiB - reserved {:.2f} GiB - weights {:.2f} GiB = KV budget {:.2f} GiB",
                                   device.memory_bytes / units::kGiB, device.reserved_bytes / units::kGiB,
                                   weights.bytes / units::kGiB, budget / units::kGiB));
    if (budget <= 0) r.notes.push_back("the weights alone do not fit: no room for a KV cache");
    if (model.context_tokens && r.results["max_context"].get<std::uint64_t>() > *model.context_tokens) {
      r.notes.push_back(fmt::format("the model was trained for {} tokens: contexts beyond that fit but are not supported",
                                    with_thousands(*model.context_tokens)));
    }
    if (o->context > 0) {
      r.results["recompute_ratio"] = kv_recompute_ratio(o->context);
      r.notes.push_back(fmt::format(
          "without a KV cache, {} tokens cost {} token-steps of K/V recompute instead of {}: {:.1f}x the work",
          with_thousands(o->context), with_thousands(static_cast<std::uint64_t>(kv_recompute_token_steps(o->context))),
          with_thousands(o->context), kv_recompute_ratio(o->context)));
    }
    return r;
  };
}

}  // namespace edgeplan::cli
