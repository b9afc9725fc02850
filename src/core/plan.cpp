#include "edgeplan/core/plan.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "edgeplan/core/power.hpp"
#include "edgeplan/core/prefill.hpp"

namespace edgeplan {

const char* to_string(PrefillSource s) { return s == PrefillSource::profile ? "prefill" : "units"; }

namespace {

// Fitted by bench/prefill-fit.py (its output: docs/accuracy.md, "Prefill from [units]"), pinned by
// tests/unit/accuracy_test.cpp. gpu: the M1 and M2 rows of llama.cpp's Apple Silicon benchmark (M1, M1 Pro,
// M1 Max, M2, M2 Pro, M2 Max; Llama-2-7B F16 / Q8_0 / Q4_0 pp512). No npu or cpu prefill is measured on a
// profile with that unit, so neither has a factor.
constexpr std::array kUnitUtilization{
    UnitUtilization{UnitKind::gpu, 0.693, 17, "llama.cpp Metal", "Llama-2-7B pp512 on Apple M1/M2 GPUs", 4.1},
};

}  // namespace

const UnitUtilization* unit_utilization(UnitKind u) {
  for (const UnitUtilization& f : kUnitUtilization) {
    if (f.unit == u) return &f;
  }
  return nullptr;
}

double fit_utilization(std::span<const double> roofline_s, std::span<const double> measured_s) {
  double log_sum = 0;
  for (std::size_t i = 0; i < roofline_s.size(); ++i) log_sum += std::log(roofline_s[i] / measured_s[i]);
  return std::exp(log_sum / static_cast<double>(roofline_s.size()));
}

Result<Prefill> unit_roofline_prefill(const ModelSpec& m, const DeviceSpec& device, UnitKind unit,
                                      std::uint32_t seq_tokens) {
  const auto it = device.units.find(unit);
  if (it == device.units.end()) return Error{"device profile has no [units." + std::string(to_string(unit)) + "]"};
  DeviceSpec alone = device;
  alone.units = {{unit, it->second}};
  alone.link.reset();
  return roofline_prefill(m, alone, Policy::optimal, seq_tokens);
}

Result<PrefillEstimate> prefill_estimate(const DeviceSpec& device, const ModelSpec& m, double prompt_flops,
                                         std::span<const TypedWeights> matmuls, std::uint64_t prompt_tokens) {
  if (device.prefill) {
    const PrefillSpec& unit = *device.prefill;
    const double attention = unit.attention_efficiency ? attention_flops(m, prompt_tokens) : 0;  // else unused
    const PrefillResult p = prefill(unit, prompt_flops, attention, matmuls, prompt_tokens);
    return PrefillEstimate{PrefillSource::profile, p.seconds, p.tok_per_s, nullptr};
  }
  if (device.units.empty()) {
    return Error{"device profile has no [prefill]: no published compute rate (tflops) or [units] peak to estimate it from"};
  }
  if (prompt_tokens > std::numeric_limits<std::uint32_t>::max()) {
    return Error{"a prompt of 2^32 tokens or more cannot be placed"};
  }
  for (const UnitUtilization& f : kUnitUtilization) {
    if (!device.units.contains(f.unit)) continue;
    auto p = unit_roofline_prefill(m, device, f.unit, static_cast<std::uint32_t>(prompt_tokens));
    if (!p) return Error{"the [units] roofline cannot place the prefill: " + p.error().message};
    const double seconds = p->total_s / f.utilization;
    return PrefillEstimate{PrefillSource::roofline, seconds, static_cast<double>(prompt_tokens) / seconds, &f};
  }
  std::string fitted;
  for (const UnitUtilization& f : kUnitUtilization) fitted += (fitted.empty() ? "" : ", ") + std::string(to_string(f.unit));
  std::string has;
  for (const auto& [kind, unit] : device.units) has += (has.empty() ? "" : ", ") + std::string(to_string(kind));
  return Error{"device profile has no [prefill], and no unit with a utilization fitted to measured prefill (" + fitted +
               " has one; the profile's units: " + has + ")"};
}

Result<PrefillEstimate> derived_prefill_rate(const DeviceSpec& device, const ModelSpec& m,
                                             std::span<const TypedWeights> matmuls) {
  return prefill_estimate(device, m, prefill_flops(m, kRatePromptTokens), matmuls, kRatePromptTokens);
}

double derived_decode_rate(const DeviceSpec& device, const WeightSize& weights) {
  return decode(device, {weights.active_bytes, 0}).tok_per_s;
}

Result<RuntimeFit> runtime_fit(const DeviceSpec& device, const ModelSpec& m, const FileType& ft, double weight_bytes,
                               const KvCacheType& t, std::uint64_t context_tokens, const RuntimeOptions& o) {
  const std::uint64_t at = context_tokens > 0 ? context_tokens : device.kv_cache.ubatch_tokens;
  Result<RuntimeBuffers> b = runtime_buffers(m, ft, t, at, device.kv_cache, device.runtime, o);
  if (!b) return b.error();
  RuntimeFit f;
  f.buffers = *b;
  f.budget_bytes = kv_budget_bytes(device.memory_bytes, device.reserved_bytes, weight_bytes + b->added_bytes);
  f.fixed_bytes = sequence_fixed_bytes(device.memory_bytes, device.reserved_bytes, weight_bytes, *b, o.parallel);
  return f;
}

Result<ContextFit> context_fit(const DeviceSpec& device, const ModelSpec& m, const FileType& ft, double weight_bytes,
                               const KvCacheType& t, std::uint64_t context_tokens, const RuntimeOptions& o) {
  Result<RuntimeFit> runtime = runtime_fit(device, m, ft, weight_bytes, t, context_tokens, o);
  if (!runtime) return runtime.error();
  const double cache = kv_cache_bytes(m, t, context_tokens, device.kv_cache);
  return ContextFit{*runtime, memory_fit(device.memory_bytes, device.reserved_bytes, runtime->fixed_bytes, cache)};
}

double lora_budget_bytes(const MemoryFit& at_context, std::uint32_t parallel) {
  return std::max(0.0, at_context.headroom_bytes * parallel);
}

Result<std::vector<FormatPlan>> plan_decode(const DeviceSpec& device, const DecodePlanInputs& in) {
  const ModelSpec& m = *in.model;
  const double kv_bytes = kv_cache_bytes(m, in.kv_type, in.context_tokens, device.kv_cache);
  const double baseline = decode(device, {in.sizes.back().active_bytes, kv_bytes}).tok_per_s;
  const double speedup = in.spec ? spec_speedup(*in.spec) : 1.0;
  // One token's attention term, at its own efficiency where the profile gives one (the same for every format).
  const double token_attention = device.prefill && device.prefill->attention_efficiency ? attention_flops(m, 1) : 0;
  std::vector<FormatPlan> out;
  out.reserve(in.formats.size());
  for (std::size_t i = 0; i < in.formats.size(); ++i) {
    FormatPlan& f = out.emplace_back();
    f.format = in.formats[i];
    f.weights = in.sizes[i];
    Result<ContextFit> fit = context_fit(device, m, *f.format, f.weights.bytes, in.kv_type, in.context_tokens,
                                         in.runtime);
    if (!fit) return fit.error();
    f.runtime = fit->runtime;
    f.memory = fit->memory;
    const double compute_s =  // the one-token rates where given, else the prefill rate's; 0 when not derived
        device.decode    ? decode_compute_s(*device.decode, m, *f.format, in.context_tokens)
        : device.prefill ? prefill(*device.prefill, in.token_flops, token_attention, f.weights.matmuls, 1).seconds
                         : 0;
    f.decode = decode(device, {f.weights.active_bytes, kv_bytes, compute_s});
    f.relative = f.decode.tok_per_s / baseline;
    if (in.spec) f.spec_tok_per_s = f.decode.tok_per_s * speedup;
    f.prefill = prefill_estimate(device, m, in.prompt_flops, f.weights.matmuls, in.prompt_tokens);
    if (f.prefill) f.ttft_s = ttft_s(f.prefill->seconds, f.decode.s_per_token);
  }
  return out;
}

std::vector<KvTypePlan> plan_kv(const DeviceSpec& device, const ModelSpec& m, double fixed_bytes,
                                std::uint64_t context_tokens, const KvCacheType& chosen) {
  const double budget = kv_budget_bytes(device.memory_bytes, device.reserved_bytes, fixed_bytes);
  std::vector<KvTypePlan> out;
  out.reserve(kv_types().size() + 1);  // a kv sweep plans once per combination: one allocation, not one per doubling
  auto add = [&](const KvCacheType& type) {
    const double cache = kv_cache_bytes(m, type, context_tokens, device.kv_cache);
    const std::uint64_t longest = max_context(m, type, budget, device.kv_cache);
    out.push_back({type, kv_bytes_per_token(m, type), trained_cap(m, longest), cache,
                   memory_fit(device.memory_bytes, device.reserved_bytes, fixed_bytes, cache), longest});
  };
  for (const KvType& type : kv_types()) {
    if (!kv_cache_refusal(m, type)) add(type);
  }
  if (chosen.k != chosen.v) add(chosen);
  return out;
}

namespace {

Result<LoraPlan> plan_lora(const DeviceSpec& device, const ModelSpec& model, const PlanInputs& in,
                           double budget_bytes, double base_bits_per_weight) {
  if (!in.lora_rank) return Error{"no LoRA rank asked for"};
  if (!device.lora) return Error{"device profile has no [lora]"};
  const std::vector<LoraTarget> all(lora_targets().begin(), lora_targets().end());
  LoraPlan p;
  p.rank = *in.lora_rank;
  p.adapter = lora_adapter(model, p.rank, all, in.lora_bytes_per_weight);
  auto r = lora_plan(device, {p.adapter, budget_bytes, base_bits_per_weight});
  if (!r) return r.error();
  p.result = *r;
  return p;
}

Result<PlacePlan> plan_place(const DeviceSpec& device, const ModelSpec& model, const PlanInputs& in) {
  if (device.units.empty()) return Error{"device profile has no [units.*]"};
  if (in.prompt_tokens > std::numeric_limits<std::uint32_t>::max()) {
    return Error{"a prompt of 2^32 tokens or more cannot be placed"};
  }
  const auto seq = static_cast<std::uint32_t>(in.prompt_tokens);
  PlacePlan p;
  p.graph = derive_layer(model, seq);
  auto placed = place(p.graph.ops, device, in.place_policy);
  if (!placed) return placed.error();
  p.layer = *placed;
  p.fallbacks = fallback_count(p.layer);
  p.tax_percent = transfer_tax_percent(p.layer);
  p.prefill = prefill(p.layer, model, device, seq);
  return p;
}

Result<RouteShare> plan_route(const DeviceSpec& device, const ModelSpec& model, const PlanInputs& in,
                              const WeightSize& weights) {
  if (in.clouds.empty() || in.requests.empty()) return Error{"no clouds or requests to route"};
  auto prefill_rate = derived_prefill_rate(device, model, weights.matmuls);
  if (!prefill_rate) return prefill_rate.error();
  RouteShare s;
  s.rates = {prefill_rate->tok_per_s, derived_decode_rate(device, weights)};
  double device_energy_j = 0;
  s.destinations.assign(1 + in.clouds.size(), 0);
  for (const RouteRequest& q : in.requests) {
    const DeviceRun run = run_on_device(s.rates, device.thermal, 0, q.input_tok, q.output_tok);
    const auto decision = decide(q, run.total_s, in.clouds, in.route_policy);
    ++s.destinations[static_cast<std::size_t>(decision.cloud + 1)];
    if (decision.on_device() && device.power) {
      device_energy_j += energy_j(*device.power, run.prefill_s, run.decode_s, 0);
    }
  }
  s.to_device = s.destinations.front();
  s.requests = in.requests.size();
  if (device.power && s.to_device > 0) s.energy_per_request_j = device_energy_j / static_cast<double>(s.to_device);
  return s;
}

}  // namespace

Result<ModelFigures> model_figures(const ModelSpec& model, const PlanInputs& in) {
  ModelFigures f;
  f.sizes.reserve(in.formats.size());
  for (const FileType* ft : in.formats) {
    auto size = weight_size(model, *ft);
    if (!size) return size.error();
    f.sizes.push_back(*size);
  }
  f.prompt_flops = prefill_flops(model, in.prompt_tokens);
  f.token_flops = prefill_flops(model, 1);
  return f;
}

Result<PlanResult> plan(const DeviceSpec& device, const ModelSpec& model, const PlanInputs& in,
                        const ModelFigures& figures, const PlanParts& parts) {
  if (in.formats.empty() || !in.kv_type.k || figures.sizes.size() != in.formats.size()) {
    return Error{"a plan needs at least one format, its weight size and a KV type"};
  }
  const DecodePlanInputs d{&model, in.formats, figures.sizes, in.kv_type, in.context_tokens, in.spec,
                           in.prompt_tokens, figures.prompt_flops, figures.token_flops, in.runtime};
  PlanResult r;
  Result<std::vector<FormatPlan>> formats = plan_decode(device, d);
  if (!formats) return formats.error();
  r.formats = std::move(*formats);
  if (in.spec) r.spec_speedup = spec_speedup(*in.spec);
  const WeightSize& weights = r.chosen().weights;
  if (parts.kv) r.kv = plan_kv(device, model, r.chosen().runtime.fixed_bytes, in.context_tokens, in.kv_type);
  r.kv_budget_bytes = r.chosen().runtime.budget_bytes;
  if (parts.load && device.storage) {
    r.load = load_time(*device.storage, {weights.bytes, 1, LoadMode::preload, 1});
  } else if (parts.load) {
    r.load = Error{"device profile has no [storage]: no storage class (class) or read rate (read_gbps), and no page size"};
  }
  if (parts.lora) {
    r.lora = plan_lora(device, model, in, lora_budget_bytes(r.chosen().memory, in.runtime.parallel),
                       matmul_bits_per_weight(weights));
  }
  if (parts.place) r.place = plan_place(device, model, in);
  if (parts.route) r.route = plan_route(device, model, in, weights);
  return r;
}

Result<PlanResult> plan(const DeviceSpec& device, const ModelSpec& model, const PlanInputs& in) {
  Result<ModelFigures> figures = model_figures(model, in);
  if (!figures) return figures.error();
  return plan(device, model, in, *figures);
}

}  // namespace edgeplan
