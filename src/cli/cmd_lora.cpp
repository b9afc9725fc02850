// edgeplan lora: hot-swapping LoRA adapters versus merged copies of the weights (core/lora.hpp).
#include <fmt/format.h>

#include "cli/command.hpp"
#include "edgeplan/core/plan.hpp"
#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/lora.hpp"
#include "edgeplan/util/units.hpp"
#include "edgeplan/io/lora.hpp"
#include "edgeplan/util/names.hpp"

namespace edgeplan::cli {
namespace {

struct LoraOptions {
  std::string device, model, quant, targets = "q,k,v,o,gate,up,down", dtype = "F16", adapter, kv_type = "f16";
  std::optional<std::uint32_t> rank;
  std::uint64_t context = 4096;  // as report's
  RuntimeFlags runtime;
};

std::vector<LoraTarget> parse_targets(const std::string& text) {
  std::vector<LoraTarget> out;
  std::vector<std::string> names;
  for (const LoraTarget t : lora_targets()) names.emplace_back(to_string(t));
  for (const std::string& item : split_list(text, "--targets")) {
    const LoraTarget* t = find_lora_target(item);
    if (!t) {
      throw UsageError(fmt::format("--targets: unknown target '{}' (expected q, k, v, o, gate, up, down){}", item,
                                   util::did_you_mean(item, names)));
    }
    if (std::find(out.begin(), out.end(), *t) != out.end()) {
      throw UsageError(fmt::format("--targets: '{}' is listed twice", item));
    }
    out.push_back(*t);
  }
  return out;
}

const GgmlType& need_dtype(const std::string& name) {
  return *need("--dtype", util::lookup_or_suggest(ggml_types(), name, [](const GgmlType& t) { return t.name; }, "type"));
}

}  // namespace

Runner setup_lora(Options& opts) {
  auto o = std::make_shared<LoraOptions>();
  opts.add(Opt::device, o->device, "Device profile name or .toml path (needs [lora])").required();
  opts.add(Opt::model, o->model).required();
  opts.add(Opt::quant, o->quant,
           "Format of the base weights, e.g. Q4_K_M (default: a GGUF model's own format, else Q4_K_M)");
  opts.add(Opt::rank, o->rank, "Adapter rank");
  opts.add(Opt::targets, o->targets).show_default();
  opts.add(Opt::adapter, o->adapter, "A LoRA adapter in GGUF, instead of --rank").excludes(Opt::rank).excludes(Opt::targets);
  opts.add(Opt::dtype, o->dtype).show_default();
  opts.add(Opt::context, o->context, "Context whose KV cache stays resident beside the adapters (takes k and M: 8k)")
      .show_default();
  opts.add(Opt::kv_type, o->kv_type, kv_type_help("KV-cache type at --context")).show_default();
  add_runtime_options(opts, o->runtime);
  return [o](const Context& ctx) {
    io::Report r;
    r.command = "lora";
    if (!o->rank && o->adapter.empty()) throw UsageError("lora needs --rank R (with --targets) or --adapter FILE.gguf");
    DeviceSpec device = ctx.device(o->device, r.inputs);
    const RuntimeOptions ro = runtime_options(o->runtime, device);
    if (!device.lora) {
      throw UsageError(fmt::format("device '{}' has no [lora] section: add swap_fixed_us (docs/profiles.md)",
                                   device.name));
    }
    const ModelSpec model = ctx.model(o->model, r.inputs);
    const FileType& ft = need_format(quant_or_file_format(o->quant, model));
    const GgmlType& dtype = need_dtype(o->dtype);
    const double bytes_per_weight = dtype.bits_per_weight() / 8;
    r.inputs["quant"] = ft.name;
    r.notes = requantize_note(model, ft);
    r.inputs["dtype"] = dtype.name;

    io::Table t{"targets", {{"target", "target"},
                            {"layers", "layers", 0},
                            {"rank", "rank", 0},
                            {"d_in", "d_in", 0},
                            {"d_out", "d_out", 0},
                            io::counted({"adapter (MiB)", "adapter_bytes", 2, false, units::kMiB}),
                            io::counted({"merged (GiB)", "merged_bytes", 3, false, units::kGiB})}, {}};
    LoraAdapter adapter;
    std::string what;
    if (o->rank) {
      if (*o->rank == 0) throw UsageError("--rank must be at least 1");
      const std::vector<LoraTarget> chosen = parse_targets(o->targets);
      r.inputs["rank"] = *o->rank;
      io::Node names = io::Node::array();
      for (const LoraTarget target : chosen) {
        names.push_back(to_string(target));
        const LoraAdapter one = lora_adapter(model, *o->rank, {target}, bytes_per_weight);
        const MatrixShape shape = lora_adapter_shape(model, target);
        t.add({std::string(to_string(target)), std::int64_t{model.layers}, std::int64_t{*o->rank},
               static_cast<std::int64_t>(shape.d_in), static_cast<std::int64_t>(shape.d_out), one.adapter_bytes,
               one.merged_bytes});
      }
      r.inputs["targets"] = names;
      adapter = lora_adapter(model, *o->rank, chosen, bytes_per_weight);
      what = fmt::format("rank {}, {} target(s) in {} layers, {} ({} shapes)", *o->rank, chosen.size(), model.layers,
                         dtype.name, model.lora_shapes == LoraShapes::chapter ? "chapter" : "real");
    } else {
      const io::GgufFile file = unwrap(io::read_gguf_file(o->adapter));
      const io::GgufLora lora = unwrap(io::read_lora_adapter(file, o->adapter));
      r.inputs["adapter"] = o->adapter;
      for (const LoraMatrixGroup& g : group_lora_matrices(lora.matrices)) {
        const LoraMatrix& m = g.matrix;
        const LoraAdapter one = lora_adapter(std::vector<LoraMatrix>{m}, bytes_per_weight);
        t.add({m.target, static_cast<std::int64_t>(g.layers), static_cast<std::int64_t>(m.rank),
               static_cast<std::int64_t>(m.shape.d_in), static_cast<std::int64_t>(m.shape.d_out), one.adapter_bytes,
               one.merged_bytes * static_cast<double>(g.layers)});
      }
      adapter = lora_adapter(lora.matrices, bytes_per_weight);
      what = fmt::format("{}: {} matrices read from the file, merged deltas in {}", o->adapter, lora.matrices.size(),
                         dtype.name);
    }
    r.tables.push_back(std::move(t));

    // What the adapters share: the memory beside the weights, llama.cpp's buffers and the cache at --context, as
    // report counts it.
    const WeightSize weights = unwrap(weight_size(model, ft));
    const KvCacheType kv_type = need_kv_type(o->kv_type, model);
    const ContextFit fit = unwrap(context_fit(device, model, ft, weights.bytes, kv_type, o->context, ro));
    const double budget = lora_budget_bytes(fit.memory, ro.parallel);
    const LoraResult plan = unwrap(lora_plan(device, {adapter, budget, matmul_bits_per_weight(weights)}));
    r.inputs["context_tokens"] = o->context;
    r.inputs["kv_type"] = kv_type.name();

    r.results["adapter_bytes"] = io::Node::count(adapter.adapter_bytes);
    r.results["adapter_mib"] = adapter.adapter_bytes / units::kMiB;
    r.results["merged_bytes"] = io::Node::count(adapter.merged_bytes);
    r.results["merged_gib"] = adapter.merged_bytes / units::kGiB;
    r.results["merged_copy_bytes"] = io::Node::count(plan.merged_copy_bytes);
    r.results["unload_load_us"] = plan.unload_load_s * units::kUsPerS;
    r.results["swap_fixed_us"] = device.lora->swap_fixed_s * units::kUsPerS;
    r.results["swap_us"] = plan.swap_s * units::kUsPerS;
    r.results["memory_ratio"] = plan.memory_ratio;
    r.results["weights_bytes"] = io::Node::count(weights.bytes);
    r.results["budget_bytes"] = io::Node::count(budget);
    r.results["resident_adapters"] = plan.resident_adapters;
    r.results["merged_copies"] = plan.merged_copies;
    r.results["merged_fits"] = plan.merged_copies > 0;

    r.title = fmt::format("lora: {} on {}", model.name, device.name);
    r.header.push_back("adapter: " + what);
    r.notes.push_back(fmt::format("adapter {} B = {:.1f} MiB; merged deltas {:.2f} GiB in {}; memory ratio {:.2f}%",
                                  rounded_with_thousands(adapter.adapter_bytes),
                                  adapter.adapter_bytes / units::kMiB, adapter.merged_bytes / units::kGiB, dtype.name,
                                  plan.memory_ratio * 100));
    r.notes.push_back(fmt::format("hot swap: unload + load {:.1f} us + fixed {:g} us = {:.1f} us",
                                  plan.unload_load_s * units::kUsPerS, device.lora->swap_fixed_s * units::kUsPerS,
                                  plan.swap_s * units::kUsPerS));
    std::string beside = std::string(ft.name) + " weights";
    if (device.runtime.buffers) beside += ", llama.cpp's buffers";
    beside += o->context == 0 ? " and no KV cache (--context 0)"
                              : fmt::format(" and {} {} cache of {} tokens",
                                            ro.parallel == 1 ? "a" : fmt::format("{} sequences'", ro.parallel),
                                            kv_type.name(), with_thousands(o->context));
    r.notes.push_back(fmt::format("beside the {} ({:.2f} GiB free): {} adapters resident (one slot kept free to stage "
                                  "a swap); {} (the adapted matrices merged, in {}: {:.2f} GiB)",
                                  beside, budget / units::kGiB, plan.resident_adapters,
                                  plan.merged_copies > 0
                                      ? fmt::format("{} merged copies fit", plan.merged_copies)
                                      : std::string("a merged copy does not fit"),
                                  ft.name, plan.merged_copy_bytes / units::kGiB));
    return r;
  };
}

}  // namespace edgeplan::cli
