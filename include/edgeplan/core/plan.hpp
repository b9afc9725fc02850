// The plan of one device/model pair: every mechanism's figures computed once, from one set of inputs, so that
// `report`, `check` and `fit` (and the single commands, which call the same functions) agree to the digit.
//   decode per format  decode.hpp at the context's KV bytes; `fits` = weights + runtime buffers + KV of every
//                      sequence + reserved within memory (kv.hpp, runtime.hpp: runtime_fit below)
//   prefill            the one prefill model (prefill_estimate below); ttft = prefill + one decode step (decode.hpp)
//   kv                 kv.hpp per cache type for the chosen format
//   load               stream.hpp's whole-file preload (mlock)
//   lora               lora.hpp for an adapter of the given rank on all seven targets
//   place              place.hpp's derived layer under the placement policy, with its whole-prompt prefill
//   route              route.hpp's decisions for a request mix at the rates derived_rates gives, and with [power]
//                      the mean energy (power.hpp) of a request the device keeps
// A section the device profile lacks (or that was not asked for) is an Error naming why. Documented in
// docs/model.md, "plan: one pair, every mechanism".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "edgeplan/core/decode.hpp"
#include "edgeplan/core/device.hpp"
#include "edgeplan/core/formats.hpp"
#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/lora.hpp"
#include "edgeplan/core/model.hpp"
#include "edgeplan/core/place.hpp"
#include "edgeplan/util/result.hpp"
#include "edgeplan/core/route.hpp"
#include "edgeplan/core/runtime.hpp"
#include "edgeplan/core/spec.hpp"
#include "edgeplan/core/stream.hpp"

namespace edgeplan {

// Where a prefill figure comes from.
enum class PrefillSource {
  profile,   // the device's [prefill]: the runtime's end-to-end rate (the chapter's 7.7 figure, or fitted to llama-bench)
  roofline,  // the roofline of one of the device's [units] x that unit kind's fitted utilization (unit_utilization),
             // when the profile has no [prefill]
};
const char* to_string(PrefillSource s);  // "prefill" (the [prefill] section), "units" (the [units] roofline)

// The share of a unit's per-op roofline (place.hpp: datasheet peaks at 100%) that a runtime reaches in prefill,
// fitted to measured prefill of devices whose profiles have that unit: fitted_s = roofline_s / utilization.
// Only unit kinds with measurements have one. Documented in docs/model.md, "prefill from [units]".
struct UnitUtilization {
  UnitKind unit = UnitKind::gpu;
  double utilization = 1;          // roofline time / measured time, geometric mean over the runs, (0, 1]
  std::uint32_t runs = 0;          // measurements fitted
  const char* runtime = "";        // the runtime and backend measured, e.g. "llama.cpp Metal"
  const char* measured = "";       // what was measured, for notes
  double loo_error_percent = 0;    // leave-one-chip-out median absolute error, %
};
// The fitted factor of unit kind u; nullptr where no measured prefill exists for it (npu, cpu).
const UnitUtilization* unit_utilization(UnitKind u);
// The least-squares fit in log space of roofline_s x (1 / utilization) = measured_s: the geometric mean of
// roofline_s / measured_s. Both spans have the same non-zero length.
double fit_utilization(std::span<const double> roofline_s, std::span<const double> measured_s);

struct PrefillEstimate {
  PrefillSource source = PrefillSource::profile;
  double seconds = 0;    // the prompt's prefill
  double tok_per_s = 0;  // prompt tokens / seconds
  const UnitUtilization* fitted = nullptr;  // the unit and factor of a roofline estimate; nullptr for [prefill]
};

// The roofline prefill of m on one of the device's units alone, at datasheet peaks (no utilization): m's
// derived layer on that unit (place.hpp), layers x layer time plus the LM head. Fails when the device has no
// such unit or the unit lacks an op of the layer.
Result<Prefill> unit_roofline_prefill(const ModelSpec& m, const DeviceSpec& device, UnitKind unit,
                                      std::uint32_t seq_tokens);

// The one prefill model of a prompt of `prompt_tokens` costing `prompt_flops` (prefill_flops) for m, its matrices
// stored in the types `matmuls` gives (WeightSize::matmuls): [prefill] when the device has it, else
// unit_roofline_prefill on the first unit kind (gpu, then the others in unit_kinds() order) that the device has
// and that has a fitted utilization, divided by it. Fails, naming what is missing, when the device has neither.
Result<PrefillEstimate> prefill_estimate(const DeviceSpec& device, const ModelSpec& m, double prompt_flops,
                                         std::span<const TypedWeights> matmuls, std::uint64_t prompt_tokens);

// Prompt length at which a device's prefill rate is quoted for routing (as llama-bench's pp512).
inline constexpr std::uint64_t kRatePromptTokens = 512;

// The device's full-speed rates for routing, derived from the profiles: prefill by prefill_estimate at a
// kRatePromptTokens prompt, decode by decode.hpp over the weight bytes a token reads (no KV).
Result<PrefillEstimate> derived_prefill_rate(const DeviceSpec& device, const ModelSpec& m,
                                             std::span<const TypedWeights> matmuls);
double derived_decode_rate(const DeviceSpec& device, const WeightSize& weights);

// What one format's weights and llama.cpp's buffers (runtime.hpp) leave for the KV cache on a device: the one
// definition kv, report, check and fit share.
struct RuntimeFit {
  RuntimeBuffers buffers;   // at the context (at one micro-batch of context when it is 0); zero with buffers = "none"
  double budget_bytes = 0;  // memory - reserved - weights - buffers: what every sequence's cache shares
  double fixed_bytes = 0;   // sequence_fixed_bytes: what memory_fit, plan_kv and max_context take as the weights so
                            // that one sequence's cache gets its share (weights + buffers at parallel 1)
};

// The fit of m stored as ft (weight_bytes) on the device, whose [kv_cache] ubatch_tokens is the micro-batch.
// Fails as runtime_buffers does (flash attention off with a quantized V cache).
Result<RuntimeFit> runtime_fit(const DeviceSpec& device, const ModelSpec& m, const FileType& ft, double weight_bytes,
                               const KvCacheType& t, std::uint64_t context_tokens, const RuntimeOptions& o);

// runtime_fit, and one sequence's cache at the context within its share (memory_fit): what decode, kv, lora and
// report take as the memory at a context.
struct ContextFit {
  RuntimeFit runtime;
  MemoryFit memory;
};
Result<ContextFit> context_fit(const DeviceSpec& device, const ModelSpec& m, const FileType& ft, double weight_bytes,
                               const KvCacheType& t, std::uint64_t context_tokens, const RuntimeOptions& o);

// What LoRA adapters may hold beside the weights, llama.cpp's buffers and every sequence's cache at the context (the
// headroom of each of `parallel` shares); 0 when the cache does not fit.
double lora_budget_bytes(const MemoryFit& at_context, std::uint32_t parallel);

// Decode figures of one weight format on one device.
struct FormatPlan {
  const FileType* format = nullptr;
  WeightSize weights;
  RuntimeFit runtime;                    // the format's buffers at the context
  MemoryFit memory;                      // one sequence's cache at the context, with the plan's KV type, within its
                                         // share of what the weights and buffers leave (runtime.fixed_bytes)
  DecodeResult decode;                   // weights read per token (active bytes) + the KV cache at the context
  double relative = 1;                   // tok/s over the baseline format's (the last one)
  std::optional<double> spec_tok_per_s;  // with speculation: tok/s x speedup
  Result<PrefillEstimate> prefill = Error{"not computed"};
  std::optional<double> ttft_s;          // prefill + one decode step, where there is a prefill
};

// What decode needs besides the device, computed once per model (so a sweep over devices reuses it).
struct DecodePlanInputs {
  const ModelSpec* model = nullptr;
  std::vector<const FileType*> formats;  // the last is the baseline of `relative`
  std::vector<WeightSize> sizes;         // weight_size of each format
  KvCacheType kv_type;
  std::uint64_t context_tokens = 0;      // KV read per token; 0 ignores it
  std::optional<SpecParams> spec;
  std::uint64_t prompt_tokens = 512;
  double prompt_flops = 0;               // prefill_flops(*model, prompt_tokens)
  double token_flops = 0;                // prefill_flops(*model, 1): one decoded token's, for decode's compute bound
  RuntimeOptions runtime;                // llama.cpp's settings; the micro-batch is the device's [kv_cache] ubatch_tokens
};

// Fails as runtime_fit does.
Result<std::vector<FormatPlan>> plan_decode(const DeviceSpec& device, const DecodePlanInputs& in);

// One KV-cache type for a model whose weights take weight_bytes.
struct KvTypePlan {
  KvCacheType type;
  double bytes_per_token = 0;
  std::uint64_t max_context = 0;  // tokens: the longest the memory holds, at most the trained context (trained_cap)
  double cache_bytes = 0;         // the cache at the context asked for (kv_cache_bytes)
  MemoryFit at_context;           // at the context asked for (the whole budget as headroom at context 0)
  std::uint64_t memory_max_context = 0;  // tokens: the longest the memory holds, trained context or not
};

// Every cache type m can use (kv_types() order, K and V alike), then `chosen` when its K and V differ; fixed_bytes
// is RuntimeFit::fixed_bytes (the weight bytes where the device counts no buffers).
std::vector<KvTypePlan> plan_kv(const DeviceSpec& device, const ModelSpec& m, double fixed_bytes,
                                std::uint64_t context_tokens, const KvCacheType& chosen);

struct LoraPlan {
  std::uint32_t rank = 0;
  LoraAdapter adapter;
  LoraResult result;
};

struct PlacePlan {
  OpGraph graph;                         // the derived layer of the prompt
  Placement layer;                       // graph's ops placed under the plan's policy
  std::uint64_t fallbacks = 0;           // ops that fell back from a unit the policy prefers
  double tax_percent = 0;                // transfers / layer time, %
  Result<Prefill> prefill = Error{"not computed"};  // the whole prompt (layers and LM head)
};

struct RouteShare {
  DeviceRates rates;
  std::uint64_t requests = 0;
  std::uint64_t to_device = 0;  // decided for the device
  // With [power]: the mean energy of a request decided for the device, its prefill and decode (power.hpp), J;
  // nullopt without [power] or when no request stays on the device.
  std::optional<double> energy_per_request_j;
  std::vector<std::uint64_t> destinations;  // requests decided for each: [0] the device, [1 + i] cloud i
};

// The options of a pair's plan: everything but the device and the model, which plan() takes beside them (so a
// sweep over their numbers varies them without copying the rest).
struct PlanInputs {
  std::vector<const FileType*> formats;  // the chosen format first; the last is decode's baseline
  KvCacheType kv_type;
  std::uint64_t context_tokens = 4096;
  std::uint64_t prompt_tokens = 512;
  std::optional<SpecParams> spec;
  std::optional<std::uint32_t> lora_rank;  // none: no LoRA section
  double lora_bytes_per_weight = 2;        // F16 adapters and deltas
  Policy place_policy = Policy::npu_first;
  std::vector<CloudSpec> clouds;           // none: no routing share
  std::vector<RouteRequest> requests;
  RoutePolicy route_policy;
  RuntimeOptions runtime;                  // llama.cpp's settings; the micro-batch is the device's [kv_cache]
                                           // ubatch_tokens (the cli's --ubatch sets it on the device)
};

struct PlanResult {
  std::vector<FormatPlan> formats;      // in the order of PlanInputs::formats
  std::optional<double> spec_speedup;   // with speculation
  std::vector<KvTypePlan> kv;           // for the chosen format
  double kv_budget_bytes = 0;           // memory - reserved - the chosen format's weights and buffers
  Result<LoadResult> load = Error{"not computed"};
  Result<LoraPlan> lora = Error{"not computed"};
  Result<PlacePlan> place = Error{"not computed"};
  Result<RouteShare> route = Error{"not computed"};

  const FormatPlan& chosen() const { return formats.front(); }
};

// What a plan derives from the model alone: the weight size of each of PlanInputs::formats and the prompt's
// FLOPs. A sweep that changes only the device computes it once.
struct ModelFigures {
  std::vector<WeightSize> sizes;  // weight_size of each format, in the order of PlanInputs::formats
  double prompt_flops = 0;        // prefill_flops(model, prompt_tokens)
  double token_flops = 0;         // prefill_flops(model, 1)
};

// The parts of a plan besides the formats (always computed: the plan fails through them) that plan() computes;
// a part left out keeps PlanResult's default (no kv rows, a zero budget of none of them, Error "not computed").
// A sweep's check pass asks only for the parts that can fail, report's rows for all of them.
struct PlanParts {
  bool kv = true;     // PlanResult::kv
  bool load = true;   // PlanResult::load
  bool lora = true;   // PlanResult::lora
  bool place = true;  // PlanResult::place
  bool route = true;  // PlanResult::route
};

// Fails when a format's weight size cannot be derived (weight_size).
Result<ModelFigures> model_figures(const ModelSpec& model, const PlanInputs& in);

// The plan of `device` and `model`; `figures` must be model_figures(model, in). Fails when an input is missing.
Result<PlanResult> plan(const DeviceSpec& device, const ModelSpec& model, const PlanInputs& in,
                        const ModelFigures& figures, const PlanParts& parts = {});
// The same with the model's figures derived here; fails also as model_figures does.
Result<PlanResult> plan(const DeviceSpec& device, const ModelSpec& model, const PlanInputs& in);

}  // namespace edgeplan
