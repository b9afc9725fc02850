// edgeplan place: operator placement of one prefill layer across NPU, GPU and CPU (core/place.hpp).
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/plan.hpp"
#include "edgeplan/core/place.hpp"
#include "edgeplan/util/units.hpp"
#include "edgeplan/io/graph.hpp"
#include "edgeplan/util/names.hpp"

namespace edgeplan::cli {
namespace {

struct PlaceOptions {
  std::string device, model, graph, policy = "npu-first";
  std::uint32_t seq = 512;
  bool emit_graph = false;
};

Policy need_policy(const std::string& name) {
  return *need("--policy", util::lookup_or_suggest(policies(), name, [](Policy p) { return to_string(p); }, "policy"),
               " (expected npu-first, gpu-first, cpu-only or optimal)");
}

std::string unit_list(const std::vector<UnitKind>& units) {
  return fmt::format("{}", fmt::join(names_of(std::span<const UnitKind>(units)), ", "));
}

std::string describe_unit(UnitKind kind, const ComputeUnit& u) {
  std::string out = fmt::format("{}: {:.1f} GB/s", to_string(kind), u.bandwidth_bytes_per_s / units::kGBps);
  if (u.int8_ops_per_s) out += fmt::format(", {:.1f} TOPS int8", *u.int8_ops_per_s / units::kTera);
  if (u.fp16_flops_per_s) out += fmt::format(", {:.1f} TFLOPS fp16", *u.fp16_flops_per_s / units::kTera);
  return fmt::format("{}; runs {}", out, fmt::join(names_of(std::span<const OpKind>(u.ops)), ", "));
}

}  // namespace

void add_place_timeline(std::span<const Op> ops, const Placement& placed, io::Report& r) {
  // The ops run one after another, each after the transfers charged to it (evaluate_placement), so the last bar
  // ends at the layer's total.
  io::Table timeline{"timeline", {{"op", "op"}, {"lane", "lane"}, {"activity", "activity"},
                                  {"start (us)", "start_us", 1}, {"end (us)", "end_us", 1}}, {}};
  double at_us = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpPlacement& p = placed.ops[i];
    for (const auto& [lane, activity, us] : {std::tuple{std::string("link"), "transfer", p.transfer_s * units::kUsPerS},
                                             std::tuple{std::string(to_string(p.unit)), "compute", p.compute_s * units::kUsPerS}}) {
      if (us <= 0) continue;
      timeline.add({ops[i].name, lane, std::string(activity), at_us, at_us + us});
      at_us += us;
    }
  }
  r.chart_tables.push_back(std::move(timeline));
  io::Chart lanes{fmt::format("one layer, policy {}: ops per unit and transfers over the link", to_string(placed.policy)),
                  "timeline", "bar", "start_us", "lane", "end_us", "activity"};
  r.charts.push_back(std::move(lanes));
}

Runner setup_place(Options& opts) {
  auto o = std::make_shared<PlaceOptions>();
  opts.add(Opt::device, o->device, "Device profile name or .toml path (needs [units.*] and [link])");
  opts.add(Opt::model, o->model, "Model profile: derives the layer, gives the layer count and LM head");
  opts.add(Opt::graph, o->graph);
  opts.add(Opt::prompt, o->seq, "Prompt tokens of the prefill (derived graph; takes k and M: 2k)")
      .show_default()
      .excludes(Opt::graph);
  opts.add(Opt::policy, o->policy).show_default();
  opts.add(Opt::emit_graph, o->emit_graph).excludes(Opt::graph).needs(Opt::model);
  return [o](const Context& ctx) {
    io::Report r;
    r.command = "place";
    if (o->seq == 0) throw UsageError("--prompt must be at least 1 token");
    if (o->model.empty() && o->graph.empty()) {
      throw UsageError("place needs --model (to derive the layer) or --graph FILE (an explicit layer)");
    }
    const std::optional<ModelSpec> model =
        o->model.empty() ? std::nullopt : std::optional(ctx.model(o->model, r.inputs));
    if (o->emit_graph) {
      r.verbatim = io::graph_toml(derive_layer(*model, o->seq),
                                  fmt::format("derived by edgeplan place --model {} --prompt {}", model->name, o->seq));
      return r;
    }
    if (o->device.empty()) throw UsageError("--device is required (except with --emit-graph)");
    const DeviceSpec device = ctx.device(o->device, r.inputs);
    if (device.units.empty()) {
      throw UsageError(fmt::format("device {} has no compute units: place needs [units.npu], [units.gpu] or "
                                   "[units.cpu] in its profile (docs/profiles.md)", device.name));
    }
    const Policy policy = need_policy(o->policy);
    OpGraph layer;
    std::string graph_name;
    if (o->graph.empty()) {
      layer = derive_layer(*model, o->seq);
      graph_name = "derived from " + model->name;
      r.inputs["graph"] = {{"name", "derived"}, {"source", model->name}};
    } else {
      const io::ProfileText text = ctx.find("graphs", o->graph);
      layer = unwrap(io::load_graph(text, ctx.overrides()));
      graph_name = text.name;
      r.inputs["graph"] = {{"name", text.name}, {"source", text.display}};
    }
    r.inputs["seq_tokens"] = layer.seq_tokens;
    r.inputs["policy"] = to_string(policy);

    const Placement chosen = unwrap(place(layer.ops, device, policy));
    io::Table ops{"ops", {{"op", "op"},
                          {"kind", "kind"},
                          {"precision", "precision"},
                          {"unit", "unit"},
                          {"compute (us)", "compute_us", 1},
                          {"transfer (us)", "transfer_us", 1},
                          {"fell back from", "fallback_from"}}, {}};
    for (std::size_t i = 0; i < layer.ops.size(); ++i) {
      const Op& op = layer.ops[i];
      const OpPlacement& p = chosen.ops[i];
      ops.add({op.name, std::string(to_string(op.kind)),
               op.kind == OpKind::matmul ? io::Cell{std::string(to_string(op.precision))} : io::Cell{},
               std::string(to_string(p.unit)), p.compute_s * units::kUsPerS, p.transfer_s * units::kUsPerS,
               p.fallback_from.empty() ? io::Cell{} : io::Cell{unit_list(p.fallback_from)}});
    }
    r.tables.push_back(std::move(ops));
    add_place_timeline(layer.ops, chosen, r);
    const double tax_percent = transfer_tax_percent(chosen);
    r.results["layer_us"] = chosen.total_s * units::kUsPerS;
    r.results["compute_us"] = chosen.compute_s * units::kUsPerS;
    r.results["transfer_us"] = chosen.transfer_s * units::kUsPerS;
    r.results["tax_percent"] = tax_percent;

    // Every policy side by side: what `optimal` saves against each chain, and which chains cannot run.
    const Placement best = unwrap(place(layer.ops, device, Policy::optimal));
    io::Table compare{"policies", {{"policy", "policy"},
                                   {"layer (us)", "layer_us", 1},
                                   {"transfer (us)", "transfer_us", 1},
                                   {"optimal saves (us)", "optimal_saving_us", 1}}, {}};
    std::vector<std::string> failures;
    std::optional<Placement> best_chain;
    for (Policy p : policies()) {
      auto placed = place(layer.ops, device, p);
      if (!placed) {
        compare.add({std::string(to_string(p)), io::Cell{}, io::Cell{}, io::Cell{}});
        failures.push_back(fmt::format("{} cannot run this layer: {}", to_string(p), placed.error().message));
        continue;
      }
      if (p != Policy::optimal && (!best_chain || placed->total_s < best_chain->total_s)) best_chain = *placed;
      compare.add({std::string(to_string(p)), placed->total_s * units::kUsPerS, placed->transfer_s * units::kUsPerS,
                   (placed->total_s - best.total_s) * units::kUsPerS});
    }
    r.tables.push_back(std::move(compare));
    r.results["optimal_layer_us"] = best.total_s * units::kUsPerS;
    r.results["optimal_saving_us"] = (chosen.total_s - best.total_s) * units::kUsPerS;

    r.title = fmt::format("place: one layer ({}) of a {}-token prefill on {}, policy {}", graph_name, layer.seq_tokens,
                          device.name, to_string(policy));
    for (const auto& [kind, unit] : device.units) r.header.push_back(describe_unit(kind, unit));
    if (device.link) {
      r.header.push_back(fmt::format("link: {:.1f} GB/s, {:.1f} us per transfer",
                                     device.link->bandwidth_bytes_per_s / units::kGBps,
                                     device.link->latency_s * units::kUsPerS));
    }
    r.notes.push_back(fmt::format("layer total {:.1f} us, transfer tax {:.1f} us ({:.1f}%)", chosen.total_s * units::kUsPerS,
                                  chosen.transfer_s * units::kUsPerS, tax_percent));
    if (policy != Policy::optimal) {
      r.notes.push_back(fmt::format("optimal placement: {:.1f} us per layer, {:.1f} us less than {}",
                                    best.total_s * units::kUsPerS, (chosen.total_s - best.total_s) * units::kUsPerS,
                                    to_string(policy)));
    } else if (best_chain) {
      r.notes.push_back(fmt::format("optimal saves {:.1f} us per layer ({:.1f}%) against {}, the best fixed chain",
                                    (best_chain->total_s - best.total_s) * units::kUsPerS,
                                    100 * (best_chain->total_s - best.total_s) / best_chain->total_s,
                                    to_string(best_chain->policy)));
    }
    for (const std::string& f : failures) r.notes.push_back(f);

    if (!model) {
      r.notes.push_back("prefill totals need --model (the layer count and the LM head)");
      return r;
    }
    const Prefill total = unwrap(prefill(chosen, *model, device, layer.seq_tokens));
    r.results["layers"] = model->layers;
    r.results["head_us"] = total.head_unit ? io::Node(total.head_s * units::kUsPerS) : io::Node(nullptr);
    r.results["prefill_s"] = total.total_s;
    r.results["prefill_tok_per_s"] = total.tok_per_s;
    if (total.head_unit) {
      r.notes.push_back(fmt::format("LM head ({} x {}, last token) on {}: {:.1f} us", model->hidden, *model->vocab,
                                    to_string(*total.head_unit), total.head_s * units::kUsPerS));
    } else {
      r.notes.push_back(fmt::format("LM head left out: model {} has no vocab", model->name));
    }
    r.notes.push_back(fmt::format("prefill of {} tokens: {} layers x {:.1f} us{} = {:.2f} ms, {:.0f} tok/s",
                                  layer.seq_tokens, model->layers, chosen.total_s * units::kUsPerS,
                                  total.head_unit ? fmt::format(" + LM head {:.1f} us", total.head_s * units::kUsPerS) : "",
                                  total.total_s * units::kMsPerS, total.tok_per_s));
    return r;
  };
}

}  // namespace edgeplan::cli
