#include "edgeplan/core/place.hpp"
#include "edgeplan/util/names.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace edgeplan {
namespace {

constexpr std::array kPolicies{Policy::npu_first, Policy::gpu_first, Policy::cpu_only, Policy::optimal};
constexpr std::array kUnitKinds{UnitKind::npu, UnitKind::gpu, UnitKind::cpu};
constexpr std::array kOpKinds{OpKind::matmul, OpKind::elementwise, OpKind::softmax, OpKind::norm};
constexpr double kActivationBytes = 2;  // fp16 activations
constexpr double kWeightBytes = 1;      // int8 weights, matching the int8 matmul rate

template <class T, std::size_t N>
std::optional<T> find_named(const std::array<T, N>& all, std::string_view name) {
  const T* found = util::find_named(all, name, [](T v) { return to_string(v); });
  return found ? std::optional<T>(*found) : std::nullopt;
}

// The units of policy p in its order (what policy_units returns), kept in static arrays: placing a layer asks for
// them for every op.
std::span<const UnitKind> place_policy_order(Policy p) {
  static constexpr std::array<UnitKind, 3> kAll{UnitKind::npu, UnitKind::gpu, UnitKind::cpu};
  static constexpr std::array<UnitKind, 2> kGpuCpu{UnitKind::gpu, UnitKind::cpu};
  static constexpr std::array<UnitKind, 1> kCpu{UnitKind::cpu};
  switch (p) {
    case Policy::npu_first: return kAll;
    case Policy::gpu_first: return kGpuCpu;
    case Policy::cpu_only: return kCpu;
    case Policy::optimal: return kAll;
  }
  return {};
}

// The units one op may run on (at most one of each kind), held in place.
struct PlaceUnits {
  std::array<UnitKind, kUnitKinds.size()> units{};
  std::size_t count = 0;
  std::size_t size() const { return count; }
  bool empty() const { return count == 0; }
  UnitKind operator[](std::size_t k) const { return units[k]; }
  const UnitKind* begin() const { return units.data(); }
  const UnitKind* end() const { return units.data() + count; }
};

std::size_t rank(std::span<const UnitKind> order, UnitKind u) {
  return static_cast<std::size_t>(std::find(order.begin(), order.end(), u) - order.begin());
}

// The units an op may run on under the policy, in priority order: one for a chain, all for optimal.
PlaceUnits candidates(const Op& op, const DeviceSpec& device, Policy policy) {
  PlaceUnits out;
  for (UnitKind u : place_policy_order(policy)) {
    const auto it = device.units.find(u);
    if (it == device.units.end() || !supports(it->second, op.kind)) continue;
    out.units[out.count++] = u;
    if (policy != Policy::optimal) break;
  }
  return out;
}

std::string exhausted(const Op& op, const DeviceSpec& device, Policy policy) {
  std::string tried;
  for (UnitKind u : policy_units(policy)) {
    tried += tried.empty() ? "" : ", ";
    tried += to_string(u);
    const auto it = device.units.find(u);
    if (it == device.units.end()) {
      tried += " (not on the device)";
      continue;
    }
    std::string runs;
    for (OpKind k : it->second.ops) runs += (runs.empty() ? "" : ", ") + std::string(to_string(k));
    tried += " (runs " + runs + ")";
  }
  return "no unit of policy " + std::string(to_string(policy)) + " runs op '" + op.name + "' (" +
         to_string(op.kind) + "): tried " + tried;
}

double link_s(const DeviceSpec& device, UnitKind from, UnitKind to, double bytes) {
  return from == to ? 0.0 : transfer_time_s(bytes, *device.link);
}

struct Solution {
  double cost_s = std::numeric_limits<double>::infinity();
  std::vector<UnitKind> assignment;
};

// Least-cost assignment of the chain, given the unit before op 0 (cyclic: the first op's unit is `start`
// and the last op hands off back to it; else: the entry). Dynamic programming over (op, unit).
Solution solve(std::span<const Op> ops, const DeviceSpec& device, const std::vector<PlaceUnits>& cands,
               UnitKind before, double before_bytes, bool cyclic) {
  const std::size_t n = ops.size();
  // cost and back of (op i, candidate k) at first[i] + k: one array each (a plan places a layer per sweep row).
  std::vector<std::size_t> first(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) first[i + 1] = first[i] + cands[i].size();
  std::vector<double> cost(first[n], std::numeric_limits<double>::infinity());
  std::vector<std::size_t> back(first[n], 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < cands[i].size(); ++k) {
      const UnitKind u = cands[i][k];
      if (cyclic && i == 0 && u != before) continue;
      const double run = op_time_s(ops[i], device.units.at(u));
      double& mine = cost[first[i] + k];
      if (i == 0) {
        mine = run + link_s(device, before, u, before_bytes);
        continue;
      }
      for (std::size_t j = 0; j < cands[i - 1].size(); ++j) {
        const double c = cost[first[i - 1] + j] + link_s(device, cands[i - 1][j], u, ops[i - 1].handoff_bytes) + run;
        if (c < mine) {
          mine = c;
          back[first[i] + k] = j;
        }
      }
    }
  }
  Solution best;
  std::size_t at = 0;
  for (std::size_t k = 0; k < cands[n - 1].size(); ++k) {
    const double close = cyclic ? link_s(device, cands[n - 1][k], before, ops[n - 1].handoff_bytes) : 0.0;
    if (cost[first[n - 1] + k] + close < best.cost_s) {
      best.cost_s = cost[first[n - 1] + k] + close;
      at = k;
    }
  }
  best.assignment.resize(n);
  for (std::size_t i = n; i-- > 0;) {
    best.assignment[i] = cands[i][at];
    at = back[first[i] + at];
  }
  return best;
}

}  // namespace

std::span<const Policy> policies() { return kPolicies; }
std::span<const UnitKind> unit_kinds() { return kUnitKinds; }
std::span<const OpKind> op_kinds() { return kOpKinds; }

const char* to_string(Policy p) {
  switch (p) {
    case Policy::npu_first: return "npu-first";
    case Policy::gpu_first: return "gpu-first";
    case Policy::cpu_only: return "cpu-only";
    case Policy::optimal: return "optimal";
  }
  return "";
}

const char* to_string(UnitKind u) {
  switch (u) {
    case UnitKind::npu: return "npu";
    case UnitKind::gpu: return "gpu";
    case UnitKind::cpu: return "cpu";
  }
  return "";
}

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::matmul: return "matmul";
    case OpKind::elementwise: return "elementwise";
    case OpKind::softmax: return "softmax";
    case OpKind::norm: return "norm";
  }
  return "";
}

const char* to_string(Precision p) { return p == Precision::int8 ? "int8" : "fp16"; }

std::optional<Policy> find_policy(std::string_view name) { return find_named(kPolicies, name); }
std::optional<UnitKind> find_unit_kind(std::string_view name) { return find_named(kUnitKinds, name); }
std::optional<OpKind> find_op_kind(std::string_view name) { return find_named(kOpKinds, name); }
std::optional<Precision> find_precision(std::string_view name) {
  return find_named(std::array{Precision::int8, Precision::fp16}, name);
}

std::vector<UnitKind> policy_units(Policy p) {
  const std::span<const UnitKind> order = place_policy_order(p);
  return {order.begin(), order.end()};
}

bool supports(const ComputeUnit& u, OpKind k) { return std::find(u.ops.begin(), u.ops.end(), k) != u.ops.end(); }

double op_time_s(const Op& op, const ComputeUnit& u) {
  double compute_s = 0;
  if (op.kind == OpKind::matmul && op.flops > 0) {
    const double rate = op.precision == Precision::int8 ? u.int8_ops_per_s.value() : u.fp16_flops_per_s.value();
    compute_s = op.flops / rate;
  }
  return std::max(compute_s, op.bytes / u.bandwidth_bytes_per_s);
}

double transfer_time_s(double bytes, const UnitLink& link) { return bytes / link.bandwidth_bytes_per_s + link.latency_s; }

Placement evaluate_placement(std::span<const Op> ops, const DeviceSpec& device, Policy policy,
                             std::span<const UnitKind> assignment, const std::optional<Entry>& entry) {
  const std::span<const UnitKind> order = place_policy_order(policy);
  Placement p;
  p.policy = policy;
  p.ops.resize(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    OpPlacement& o = p.ops[i];
    o.unit = assignment[i];
    o.compute_s = op_time_s(ops[i], device.units.at(o.unit));
    for (UnitKind u : order) {
      if (u == o.unit) break;
      const auto it = device.units.find(u);
      if (it != device.units.end() && !supports(it->second, ops[i].kind)) o.fallback_from.push_back(u);
    }
    p.compute_s += o.compute_s;
  }
  auto charge = [&](std::size_t a, std::size_t b, double bytes) {
    const double t = link_s(device, assignment[a], assignment[b], bytes);
    p.ops[rank(order, assignment[a]) > rank(order, assignment[b]) ? a : b].transfer_s += t;
    p.transfer_s += t;
  };
  for (std::size_t i = 0; i + 1 < ops.size(); ++i) charge(i, i + 1, ops[i].handoff_bytes);
  if (!ops.empty() && !entry) charge(ops.size() - 1, 0, ops.back().handoff_bytes);
  if (!ops.empty() && entry) {
    const double t = link_s(device, entry->unit, assignment[0], entry->bytes);
    p.ops[0].transfer_s += t;
    p.transfer_s += t;
  }
  p.total_s = p.compute_s + p.transfer_s;
  return p;
}

Result<Placement> place(std::span<const Op> ops, const DeviceSpec& device, Policy policy,
                        const std::optional<Entry>& entry) {
  std::vector<PlaceUnits> cands;
  cands.reserve(ops.size());
  for (const Op& op : ops) {
    cands.push_back(candidates(op, device, policy));
    if (cands.back().empty()) return Error{exhausted(op, device, policy)};
  }
  if (ops.empty()) return evaluate_placement(ops, device, policy, {}, entry);
  Solution best;
  if (entry) {
    best = solve(ops, device, cands, entry->unit, entry->bytes, false);
  } else {
    for (UnitKind start : cands[0]) {
      Solution s = solve(ops, device, cands, start, 0, true);
      if (s.cost_s < best.cost_s) best = std::move(s);
    }
  }
  return evaluate_placement(ops, device, policy, best.assignment, entry);
}

OpGraph derive_layer(const ModelSpec& m, std::uint32_t seq_tokens) {
  const double s = seq_tokens, h = m.hidden, f = m.ffn, heads = m.heads;
  const double q = static_cast<double>(m.heads) * m.head_dim;     // query width
  const double kv = static_cast<double>(m.kv_heads) * m.head_dim; // key (or value) width
  const double act = kActivationBytes, w = kWeightBytes;
  const double x = s * h * act;                   // one hidden-state tensor
  const double qkv = s * (q + 2 * kv) * act;      // Q, K and V
  const double scores = heads * s * s * act;      // one score matrix per query head
  const double v = s * kv * act;
  OpGraph g;
  g.seq_tokens = seq_tokens;
  g.ops = {
      {"attn_norm", OpKind::norm, Precision::int8, 0, 2 * x, x},
      {"qkv", OpKind::matmul, Precision::int8, 2 * s * h * (q + 2 * kv), h * (q + 2 * kv) * w + x + qkv, qkv},
      {"rope", OpKind::elementwise, Precision::int8, 0, 2 * s * (q + kv) * act, qkv},
      {"attn_scores", OpKind::matmul, Precision::fp16, 2 * s * s * q, s * (q + kv) * act + scores, scores + v},
      {"softmax", OpKind::softmax, Precision::int8, 0, 2 * scores, scores + v},
      {"attn_v", OpKind::matmul, Precision::fp16, 2 * s * s * q, scores + v + s * q * act, s * q * act},
      {"o_proj", OpKind::matmul, Precision::int8, 2 * s * q * h, q * h * w + s * q * act + x, x},
      {"ffn_norm", OpKind::norm, Precision::int8, 0, 2 * x, x},
      {"gate_up", OpKind::matmul, Precision::int8, 2 * s * h * 2 * f, h * 2 * f * w + x + s * 2 * f * act,
       s * 2 * f * act},
      {"swiglu", OpKind::elementwise, Precision::int8, 0, s * 3 * f * act, s * f * act},
      {"down", OpKind::matmul, Precision::int8, 2 * s * f * h, f * h * w + s * f * act + x, x},
  };
  return g;
}

std::optional<Op> derive_lm_head(const ModelSpec& m) {
  if (!m.vocab) return std::nullopt;
  const double h = m.hidden, vocab = *m.vocab;
  return Op{"lm_head", OpKind::matmul, Precision::int8, 2 * h * vocab,
            h * vocab * kWeightBytes + h * kActivationBytes + vocab * kActivationBytes, vocab * kActivationBytes};
}

double lm_head_entry_bytes(const ModelSpec& m) { return m.hidden * kActivationBytes; }

Prefill prefill(const Placement& layer, std::uint32_t layers, const Placement* head, std::uint32_t seq_tokens) {
  Prefill p;
  p.layers_s = layers * layer.total_s;
  p.head_s = head ? head->total_s : 0.0;
  p.total_s = p.layers_s + p.head_s;
  p.tok_per_s = seq_tokens / p.total_s;
  if (head && !head->ops.empty()) p.head_unit = head->ops.front().unit;
  return p;
}

std::uint64_t fallback_count(const Placement& p) {
  std::uint64_t n = 0;
  for (const OpPlacement& op : p.ops) n += op.fallback_from.empty() ? 0 : 1;
  return n;
}

double transfer_tax_percent(const Placement& p) { return 100 * p.transfer_s / p.total_s; }

Result<Prefill> prefill(const Placement& layer, const ModelSpec& m, const DeviceSpec& device, std::uint32_t seq_tokens) {
  const std::optional<Op> head_op = derive_lm_head(m);
  if (!head_op) return prefill(layer, m.layers, nullptr, seq_tokens);
  auto head = place(std::span(&*head_op, 1), device, layer.policy, Entry{layer.ops.back().unit, lm_head_entry_bytes(m)});
  if (!head) return head.error();
  return prefill(layer, m.layers, &*head, seq_tokens);
}

Result<Prefill> roofline_prefill(const ModelSpec& m, const DeviceSpec& device, Policy policy, std::uint32_t seq_tokens) {
  if (device.units.empty()) return Error{"the device profile has no compute units ([units.*])"};
  const OpGraph layer = derive_layer(m, seq_tokens);
  auto placed = place(layer.ops, device, policy);
  if (!placed) return placed.error();
  return prefill(*placed, m, device, seq_tokens);
}

}  // namespace edgeplan
