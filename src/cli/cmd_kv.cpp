// edgeplan kv: KV-cache budget and the longest context per cache type (core/kv.hpp).
#include <algorithm>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "edgeplan/core/plan.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::cli {
namespace {

struct KvOptions {
  std::string device, model, quant, kv_type = "f16";
  std::uint64_t context = 0;
  RuntimeFlags runtime;
};

// What kv's rows need besides the device, loaded and computed once.
struct KvInputs {
  ModelSpec model;
  KvCacheType primary;
  const FileType* format = nullptr;
  WeightSize weights;
  std::uint64_t context = 0;
  RuntimeFlags runtime;
};

// What the weights and llama.cpp's buffers leave for kv on d (its micro-batch set by --ubatch) with llama.cpp's
// settings o: at the context asked, or at one micro-batch without --context.
RuntimeFit kv_fit(const KvInputs& in, const DeviceSpec& d, const ModelSpec& m, double weight_bytes,
                  const RuntimeOptions& o) {
  return unwrap(runtime_fit(d, m, *in.format, weight_bytes, in.primary, in.context, o));
}

KvInputs kv_inputs(const KvOptions& o, const Context& ctx, io::Node& inputs) {
  KvInputs in;
  in.model = ctx.model(o.model, inputs);
  in.primary = need_kv_type(o.kv_type, in.model);
  in.format = &need_format(quant_or_file_format(o.quant, in.model));
  in.weights = unwrap(weight_size(in.model, *in.format));
  in.context = o.context;
  in.runtime = o.runtime;
  return in;
}

// Who offers a cache: llama.cpp, or the reference (the chapter's idealised int8/int4, no runtime). One type for K
// and V (every row but a mixed --kv-type's) needs no comparison: a sweep asks it of every row.
std::string counted_as(const KvCacheType& t) {
  return t.k == t.v || t.k->counted_as == t.v->counted_as ? std::string(t.k->counted_as) : "mixed";
}

// The types table: one row per cache type; with `trained` (the model states its trained context), what the memory
// alone allows beside the capped max context.
void kv_rows(std::uint64_t context, bool trained, const std::vector<KvTypePlan>& points,
             const std::vector<io::Cell>& prefix, Rows& rows) {
  for (const KvTypePlan& p : points) {
    std::vector<io::Cell>& row = start_row(rows, prefix, 7);
    row.emplace_back(p.type.name());  // each cell made in place: a list of cells would be copied in
    row.emplace_back(counted_as(p.type));
    row.emplace_back(p.bytes_per_token);
    row.emplace_back(static_cast<std::int64_t>(p.max_context));
    if (trained) row.emplace_back(static_cast<std::int64_t>(p.memory_max_context));
    if (context > 0) {
      row.emplace_back(p.at_context.fits);
      row.emplace_back(p.at_context.headroom_bytes);
    }
  }
}

// The memory stack kv draws: at each of chart_contexts(reach), the weights, llama.cpp's buffers as the header
// gives them and the cache of every sequence at that context, against memory - reserved; the longest context
// that fits is where the stack crosses that line.
io::Table memory_stack(const KvInputs& in, const DeviceSpec& d, const RuntimeBuffers& b, std::uint32_t parallel,
                       std::uint64_t reach) {
  io::Table t{"memory", {{"context (tokens)", "context", 0, true}, {"part", "part"},
                         io::counted({"memory (GiB)", "bytes", 2, false, units::kGiB})}, {}};
  const std::string cache = fmt::format("KV cache ({})", in.primary.name());
  for (std::uint64_t c : chart_contexts(reach)) {
    t.add({static_cast<std::int64_t>(c), std::string("weights"), in.weights.bytes});
    if (d.runtime.buffers) t.add({static_cast<std::int64_t>(c), std::string("runtime buffers"), b.added_bytes});
    t.add({static_cast<std::int64_t>(c), cache, sequences_cache_bytes(in.model, in.primary, c, d.kv_cache, parallel)});
  }
  return t;
}

}  // namespace

Runner setup_kv(Options& opts) {
  auto o = std::make_shared<KvOptions>();
  opts.add(Opt::device, o->device).required();
  opts.add(Opt::model, o->model).required();
  opts.add(Opt::quant, o->quant);
  opts.add(Opt::context, o->context, "Context to check: does it fit, and with what headroom (takes k and M: 8k)");
  opts.add(Opt::kv_type, o->kv_type, kv_type_help("Cache type that decides `fits`")).show_default();
  add_runtime_options(opts, o->runtime);
  auto structs = [o](const Context& ctx) {
    io::Node inputs;
    DeviceSpec device = ctx.device(o->device, inputs);
    auto in = std::make_shared<const KvInputs>(kv_inputs(*o, ctx, inputs));
    const RuntimeOptions ro = runtime_options(in->runtime);  // each combination's device gets --ubatch below
    StructRows out{std::move(device), in->model, {}};
    out.worker = [in, ro] {
      // The weight bytes of the model this worker saw last.
      auto derived = std::make_shared<ModelCache<double>>(std::shared_ptr<const double>(in, &in->weights.bytes));
      auto weight_bytes = [in, derived](const ModelSpec& m, std::uint64_t model_id) {
        return derived->get(m, model_id, [&](const ModelSpec& model) -> std::optional<double> {
          const Result<WeightSize> size = weight_size(model, *in->format);
          return size ? std::optional(size->bytes) : std::nullopt;
        });
      };
      return StructRows::Worker{
          [in, ro, weight_bytes](const DeviceSpec& d, const ModelSpec& m, std::uint64_t model_id,
                                 const std::vector<io::Cell>& prefix, Rows& rows) {
            const double* bytes = weight_bytes(m, model_id);
            if (!bytes) throw UsageError("kv: a swept model was not checked (a bug)");
            DeviceSpec copy;
            const DeviceSpec& swept = with_ubatch(in->runtime, d, copy);
            const RuntimeFit fit = kv_fit(*in, swept, m, *bytes, ro);
            kv_rows(in->context, in->model.context_tokens.has_value(),
                    plan_kv(swept, m, fit.fixed_bytes, in->context, in->primary), prefix, rows);
          },
          [weight_bytes](const DeviceSpec&, const ModelSpec& m, std::uint64_t model_id) {
            return weight_bytes(m, model_id) != nullptr;
          }};
    };
    return out;
  };
  auto run = [o](const Context& ctx) {
    io::Report r;
    r.command = "kv";
    DeviceSpec device = ctx.device(o->device, r.inputs);
    const KvInputs in = kv_inputs(*o, ctx, r.inputs);
    const ModelSpec& model = in.model;
    const FileType* ft = in.format;
    const WeightSize& weights = in.weights;
    const RuntimeOptions ro = runtime_options(in.runtime, device);
    const RuntimeFit fit = kv_fit(in, device, model, weights.bytes, ro);
    const RuntimeBuffers& buffers = fit.buffers;
    const double budget = fit.budget_bytes;
    r.inputs["quant"] = ft->name;
    r.inputs["kv_type"] = in.primary.name();
    r.notes = requantize_note(model, *ft);
    if (o->context > 0) r.inputs["context_tokens"] = o->context;

    io::Table t{"types", {{"kv type", "kv_type"},
                          {"counted as", "counted_as"},
                          io::counted({"bytes/token", "bytes_per_token", 0}),
                          io::counted({"max context (tokens)", "max_context", 0, true})}, {}};
    if (model.context_tokens) {
      t.columns.push_back(io::counted({"memory allows (tokens)", "memory_max_context", 0, true}));
    }
    if (o->context > 0) {
      t.columns.push_back({fmt::format("fits {}", o->context), "fits"});
      t.columns.push_back(io::counted({"headroom (GiB)", "headroom_bytes", 2, false, units::kGiB}));
    }
    const std::vector<KvTypePlan> points = plan_kv(device, model, fit.fixed_bytes, in.context, in.primary);
    kv_rows(in.context, model.context_tokens.has_value(), points, {}, t.rows);
    for (const KvTypePlan& p : points) {
      if (p.type != in.primary) continue;
      r.results["bytes_per_token"] = io::Node::count(p.bytes_per_token);
      r.results["max_context"] = io::Node::count(p.max_context);
      if (model.context_tokens) r.results["memory_max_context"] = io::Node::count(p.memory_max_context);
      if (o->context > 0) {
        r.results["cache_bytes"] =
            io::Node::count(sequences_cache_bytes(model, p.type, o->context, device.kv_cache, ro.parallel));
        r.results["state_bytes"] = io::Node::count(state_bytes(model) * ro.parallel);  // within cache_bytes
        r.results["fits"] = p.at_context.fits;
        r.results["headroom_bytes"] = io::Node::count(p.at_context.headroom_bytes);
      }
    }
    r.results["weights_bytes"] = io::Node::count(weights.bytes);
    runtime_results(buffers, ro, device, r.results);
    r.results["budget_bytes"] = io::Node::count(budget);
    r.results["budget_gib"] = budget / units::kGiB;
    r.tables.push_back(std::move(t));
    r.charts.push_back({"longest context per KV-cache type", "types", "bar", "kv_type", "max_context"});
    const std::uint64_t trained = model.context_tokens.value_or(0);
    const std::uint64_t longest = r.results["max_context"].get<std::uint64_t>();
    r.chart_tables.push_back(memory_stack(in, device, buffers, ro.parallel, std::max({trained, longest, o->context})));
    io::Chart stack{fmt::format("memory against context ({} KV cache)", in.primary.name()), "memory", "area", "context",
                    "bytes"};
    stack.color = "part";
    stack.stack = true;
    stack.x_log = 2;
    stack.rules.push_back({'y', device.memory_bytes - device.reserved_bytes,
                           fmt::format("memory - reserved {:.2f} GiB", (device.memory_bytes - device.reserved_bytes) / units::kGiB)});
    if (trained > 0) stack.rules.push_back({'x', static_cast<double>(trained), fmt::format("trained {}", with_thousands(trained))});
    if (o->context > 0) stack.rules.push_back({'x', static_cast<double>(o->context), fmt::format("context {}", with_thousands(o->context))});
    r.charts.push_back(std::move(stack));

    r.title = fmt::format("kv: {} ({}) on {}", model.name, ft->name, device.name);
    if (device.runtime.buffers) {
      r.header.push_back(fmt::format(
          "memory {:.2f} GiB - reserved {:.2f} GiB - weights {:.2f} GiB - runtime {:.2f} GiB = KV budget {:.2f} GiB",
          device.memory_bytes / units::kGiB, device.reserved_bytes / units::kGiB, weights.bytes / units::kGiB,
          buffers.added_bytes / units::kGiB, budget / units::kGiB));
      r.header.push_back(fmt::format(
          "runtime (llama.cpp, ubatch {}, flash attention {}, {} sequence{}{}): compute {:.2f} MiB, output {:.2f} MiB, "
          "repack {:.2f} MiB{}{}", device.kv_cache.ubatch_tokens, buffers.flash_attn ? "on" : "off", ro.parallel,
          ro.parallel == 1 ? "" : "s", in.context > 0 ? "" : ", at one micro-batch of context",
          buffers.compute_bytes / units::kMiB, buffers.output_bytes / units::kMiB, buffers.repack_bytes / units::kMiB,
          ro.mmap ? "" : " (in place of the weights it holds: --no-mmap)",
          device.runtime.repack != RepackIsa::x86_amx
              ? std::string()
              : fmt::format(", AMX {:.2f} MiB{}", buffers.amx_bytes / units::kMiB,
                            ro.mmap ? fmt::format(" ({:.2f} MiB of moved weights not mapped)", buffers.unmapped_bytes / units::kMiB)
                                    : std::string())));
    } else {
      r.header.push_back(fmt::format("memory {:.2f} GiB - reserved {:.2f} GiB - weights {:.2f} GiB = KV budget {:.2f} GiB",
                                     device.memory_bytes / units::kGiB, device.reserved_bytes / units::kGiB,
                                     weights.bytes / units::kGiB, budget / units::kGiB));
    }
    if (model.context_tokens) {
      r.header.push_back(fmt::format("trained context {} tokens: max context stops there, the memory alone allows "
                                     "what the next column says", with_thousands(*model.context_tokens)));
    }
    if (budget <= 0) r.notes.push_back("the weights alone do not fit: no room for a KV cache");
    if (model.state) {
      r.notes.push_back(fmt::format("{} of {} layers keep a constant {} state instead of KV: {} B (F32) held at any "
                                    "context, within the budget before the cache",
                                    model.state->layers, model.layers, to_string(model.state->kind), state_bytes(model)));
    }
    r.notes.push_back("int8, int4: the reference chapter's idealised types (no block scales); no runtime offers them");
    r.results["trained_context"] = model.context_tokens ? io::Node(*model.context_tokens) : io::Node();
    if (o->context > 0) r.results["beyond_trained"] = beyond_trained(model, o->context);
    if (o->context > 0 && beyond_trained(model, o->context)) {
      r.notes.push_back(fmt::format("context {} is beyond the {} tokens {} was trained for: memory is not the limit, "
                                    "the model is", with_thousands(o->context), with_thousands(*model.context_tokens),
                                    model.name));
    } else if (std::ranges::any_of(points, [](const KvTypePlan& p) { return p.memory_max_context > p.max_context; })) {
      r.notes.push_back(fmt::format("max context stops at the {} tokens {} was trained for (as fit takes it): the "
                                    "memory allows more, which the model does not support",
                                    with_thousands(*model.context_tokens), model.name));
    }
    if (o->context > 0) {
      r.results["recompute_ratio"] = kv_recompute_ratio(o->context);
      r.notes.push_back(fmt::format(
          "without a KV cache, {} tokens cost {} token-steps of K/V recompute instead of {}: {:.1f}x the work",
          with_thousands(o->context), rounded_with_thousands(kv_recompute_token_steps(o->context)),
          with_thousands(o->context), kv_recompute_ratio(o->context)));
    }
    return r;
  };
  return Runner(run, structs);
}

}  // namespace edgeplan::cli
