#include "edgeplan/core/lora.hpp"
#include "edgeplan/util/names.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace edgeplan {
namespace {

constexpr std::array kTargets{LoraTarget::q,    LoraTarget::k,  LoraTarget::v,   LoraTarget::o,
                              LoraTarget::gate, LoraTarget::up, LoraTarget::down};
constexpr std::array<std::string_view, 7> kTargetNames{"q", "k", "v", "o", "gate", "up", "down"};

MatrixShape real_shape(const ModelSpec& m, LoraTarget t) {
  const std::uint64_t h = m.hidden, q = std::uint64_t{m.heads} * m.head_dim,
                      kv = std::uint64_t{m.kv_heads} * m.head_dim, f = m.ffn;
  switch (t) {
    case LoraTarget::q: return {h, q};
    case LoraTarget::k:
    case LoraTarget::v: return {h, kv};
    case LoraTarget::o: return {q, h};
    case LoraTarget::gate:
    case LoraTarget::up: return {h, f};
    case LoraTarget::down: return {f, h};
  }
  return {};
}

bool is_ffn(LoraTarget t) { return t == LoraTarget::gate || t == LoraTarget::up || t == LoraTarget::down; }

// floor(a / b) for b > 0: 0 when a <= 0, nullopt when it is past 2^63 (or a or b is not finite).
std::optional<std::uint64_t> floor_div(double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b) || b <= 0) return std::nullopt;
  if (a <= 0) return 0;
  const double q = std::floor(a / b);
  if (!(q < 0x1p63)) return std::nullopt;
  return static_cast<std::uint64_t>(q);
}

}  // namespace

std::span<const LoraTarget> lora_targets() { return kTargets; }

std::string_view to_string(LoraTarget t) { return kTargetNames[static_cast<std::size_t>(t)]; }

const LoraTarget* find_lora_target(std::string_view name) {
  return util::find_named(kTargets, name, [](LoraTarget t) { return to_string(t); });
}

MatrixShape lora_adapter_shape(const ModelSpec& m, LoraTarget t) {
  if (m.lora_shapes == LoraShapes::chapter) return {m.hidden, m.hidden};
  return real_shape(m, t);
}

MatrixShape lora_merged_shape(const ModelSpec& m, LoraTarget t) {
  if (m.lora_shapes == LoraShapes::chapter) return {m.hidden, is_ffn(t) ? m.ffn : m.hidden};
  return real_shape(m, t);
}

LoraAdapter lora_adapter(const ModelSpec& m, std::uint32_t rank, const std::vector<LoraTarget>& targets,
                         double bytes_per_weight) {
  double adapter = 0, merged = 0;
  for (const LoraTarget t : targets) {
    const MatrixShape a = lora_adapter_shape(m, t), d = lora_merged_shape(m, t);
    adapter += static_cast<double>(rank * (a.d_in + a.d_out));
    merged += static_cast<double>(d.d_in * d.d_out);
  }
  return {adapter * m.layers * bytes_per_weight, merged * m.layers * bytes_per_weight, merged * m.layers};
}

LoraAdapter lora_adapter(const std::vector<LoraMatrix>& matrices, double merged_bytes_per_weight) {
  LoraAdapter a;
  for (const LoraMatrix& m : matrices) {
    const double weights = static_cast<double>(m.shape.d_in * m.shape.d_out);
    a.adapter_bytes += m.adapter_bytes;
    a.merged_weights += weights;
    a.merged_bytes += weights * merged_bytes_per_weight;
  }
  return a;
}

std::vector<LoraMatrixGroup> group_lora_matrices(const std::vector<LoraMatrix>& matrices) {
  std::vector<LoraMatrixGroup> groups;
  for (const LoraMatrix& m : matrices) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const LoraMatrixGroup& g) {
      return g.matrix.target == m.target && g.matrix.shape.d_in == m.shape.d_in &&
             g.matrix.shape.d_out == m.shape.d_out && g.matrix.rank == m.rank;
    });
    if (it == groups.end()) {
      groups.push_back({m, 1});
    } else {
      it->matrix.adapter_bytes += m.adapter_bytes;
      ++it->layers;
    }
  }
  return groups;
}

Result<LoraResult> lora_plan(const DeviceSpec& device, const LoraInputs& in) {
  LoraResult r;
  r.unload_load_s = 2 * in.adapter.adapter_bytes / device.bandwidth_bytes_per_s;
  r.swap_s = r.unload_load_s + device.lora->swap_fixed_s;
  r.memory_ratio = in.adapter.adapter_bytes / in.adapter.merged_bytes;
  const std::optional<std::uint64_t> slots = floor_div(in.budget_bytes, in.adapter.adapter_bytes);
  r.merged_copy_bytes = in.adapter.merged_weights * in.base_bits_per_weight / 8;
  const std::optional<std::uint64_t> copies = floor_div(in.budget_bytes, r.merged_copy_bytes);
  if (!slots || !copies || !(in.adapter.merged_bytes > 0)) {
    return Error{"LoRA: the adapter or merged size is not a positive number of bytes, or the memory budget holds "
                 "2^63 or more of them: check the adapter and the device's memory"};
  }
  r.resident_adapters = *slots > 0 ? *slots - 1 : 0;
  r.merged_copies = *copies;
  return r;
}

}  // namespace edgeplan
