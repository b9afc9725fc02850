// Operator placement on a heterogeneous SoC: which compute unit (NPU, GPU, CPU) runs each operator of one
// decoder layer in a prefill of S tokens, what falls back, and what the fallback transfers cost.
//   op time on unit u  = max(FLOPs / u's rate for the op's precision, bytes / u's bandwidth)   (roofline)
//   transfer           = handoff bytes / link bandwidth + link latency, paid when two consecutive ops run
//                        on different units; the layer repeats, so its last op hands off to its first
//   layer time         = sum of op times + sum of transfers; transfer tax = sum of transfers
// A fixed-priority chain runs each op on the first unit of the chain that supports it; `optimal` takes the
// assignment with the least layer time (exact: dynamic programming along the cyclic op chain).
// Source: reference chapter section 7.4 (hetero.py); the derived graph follows the llama decoder layer.
// Documented in docs/model.md, section "place".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/core/device.hpp"
#include "edgeplan/core/model.hpp"
#include "edgeplan/util/result.hpp"
#include "edgeplan/util/names.hpp"

namespace edgeplan {

enum class Precision { int8, fp16 };  // matmul rates: int8 weights x activations, fp16 activations x activations

struct Op {
  std::string name;
  OpKind kind = OpKind::elementwise;
  Precision precision = Precision::int8;  // matmul only
  double flops = 0;          // matmul work (0 for other kinds)
  double bytes = 0;          // memory traffic: weights read, activations read and written
  double handoff_bytes = 0;  // activations live after this op: what crosses the link if the next op runs elsewhere
};

// One decoder layer for a prefill of seq_tokens tokens.
struct OpGraph {
  std::uint32_t seq_tokens = 0;
  std::vector<Op> ops;
};

enum class Policy { npu_first, gpu_first, cpu_only, optimal };

std::span<const Policy> policies();
std::span<const UnitKind> unit_kinds();
std::span<const OpKind> op_kinds();
const char* to_string(Policy p);     // "npu-first"
const char* to_string(UnitKind u);   // "npu"
const char* to_string(OpKind k);     // "matmul"
const char* to_string(Precision p);  // "int8"
// The names of a list of policies, units or op kinds, for messages and did-you-mean.
template <class T>
std::vector<std::string> names_of(std::span<const T> all) {
  return util::names_of(all, [](T v) { return to_string(v); });
}
std::optional<Policy> find_policy(std::string_view name);
std::optional<UnitKind> find_unit_kind(std::string_view name);
std::optional<OpKind> find_op_kind(std::string_view name);
std::optional<Precision> find_precision(std::string_view name);

// The units a policy may use, in priority order: npu-first = npu, gpu, cpu; gpu-first = gpu, cpu;
// cpu-only = cpu; optimal = npu, gpu, cpu (the order only breaks ties and ranks fallbacks).
std::vector<UnitKind> policy_units(Policy p);

bool supports(const ComputeUnit& u, OpKind k);
// Roofline time of op on unit u, s. A matmul needs u's rate for its precision (profiles guarantee it).
double op_time_s(const Op& op, const ComputeUnit& u);
double transfer_time_s(double bytes, const UnitLink& link);

struct OpPlacement {
  UnitKind unit = UnitKind::npu;
  double compute_s = 0;
  double transfer_s = 0;                  // transfers charged to this op (see evaluate_placement)
  std::vector<UnitKind> fallback_from;    // higher-priority units of the policy that lack the op
};

struct Placement {
  Policy policy = Policy::npu_first;
  std::vector<OpPlacement> ops;
  double compute_s = 0;   // sum of op times
  double transfer_s = 0;  // the transfer tax
  double total_s = 0;     // compute + transfers
};

// Where the chain enters: the unit the previous step ran on and the bytes it hands over. A layer has none
// (it is cyclic: its last op feeds its first); the LM head enters from the last layer op.
struct Entry {
  UnitKind unit = UnitKind::npu;
  double bytes = 0;
};

// Cost of a given assignment (one unit per op, each supporting its op). Each transfer is charged to the
// one of its two ops whose unit comes later in the policy's order (the op that fell back); an entry
// transfer to the first op. Without an entry the chain is cyclic.
Placement evaluate_placement(std::span<const Op> ops, const DeviceSpec& device, Policy policy,
                             std::span<const UnitKind> assignment, const std::optional<Entry>& entry = std::nullopt);

// Ops placed off a unit the policy prefers (fallback_from not empty).
std::uint64_t fallback_count(const Placement& p);
// The transfer tax as a share of the layer time, %: 100 x transfer / total.
double transfer_tax_percent(const Placement& p);

// Places ops by the policy. Fails, naming the op and the units tried, when no unit of the policy runs an op.
Result<Placement> place(std::span<const Op> ops, const DeviceSpec& device, Policy policy,
                        const std::optional<Entry>& entry = std::nullopt);

// The derived layer of a llama-style decoder for a prefill of seq tokens (GQA-aware, int8 weights, fp16
// activations): attn_norm, qkv, rope, attn_scores, softmax, attn_v, o_proj, ffn_norm, gate_up, swiglu, down.
OpGraph derive_layer(const ModelSpec& m, std::uint32_t seq_tokens);
// The LM head for the last prompt token (what the first generated token needs); nullopt without a vocab.
std::optional<Op> derive_lm_head(const ModelSpec& m);
// Bytes the LM head receives from the last layer: the last token's hidden state in fp16.
double lm_head_entry_bytes(const ModelSpec& m);

// A whole prefill: layers x layer time, plus the LM head when there is one.
struct Prefill {
  double layers_s = 0;       // layers x layer time
  double head_s = 0;         // LM head compute + its entry transfer (0 without a head)
  double total_s = 0;        // the prompt's prefill (time to first token adds one decode step: decode.hpp)
  double tok_per_s = 0;      // seq / total
  std::optional<UnitKind> head_unit;  // where the LM head runs; nullopt without a head
};
Prefill prefill(const Placement& layer, std::uint32_t layers, const Placement* head, std::uint32_t seq_tokens);

// The whole prefill of m with one layer placed as `layer`: layers x the layer, then the LM head (when m has a
// vocab) placed by the layer's policy after its last op, entering with the last token's hidden state.
Result<Prefill> prefill(const Placement& layer, const ModelSpec& m, const DeviceSpec& device, std::uint32_t seq_tokens);
// The per-op roofline prefill of a prompt of seq tokens: m's derived layer placed by `policy`, then as above.
// Fails when the device has no compute units or the policy cannot run an op.
Result<Prefill> roofline_prefill(const ModelSpec& m, const DeviceSpec& device, Policy policy, std::uint32_t seq_tokens);

}  // namespace edgeplan
