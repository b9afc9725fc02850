// LoRA adapters: hot-swapping small low-rank adapters versus keeping merged copies of the weights.
// A target matrix W [d_in -> d_out] gets A [d_in x r] and B [r x d_out]: rank x (d_in + d_out) parameters;
// a merged copy stores the full d_in x d_out delta. One swap unloads one adapter and loads the next:
//   swap time = 2 x adapter bytes / DRAM bandwidth + fixed cost
// Adapters stay resident in the memory the weights leave free (kv.hpp's budget), with one slot kept free
// to stage the incoming adapter. Source: reference chapter section 7.6 (lora.py); real shapes follow the
// llama decoder (model.hpp). Documented in docs/model.md, "lora".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/core/device.hpp"
#include "edgeplan/core/model.hpp"

namespace edgeplan {

// A matrix LoRA can adapt, per decoder layer.
enum class LoraTarget { q, k, v, o, gate, up, down };

std::span<const LoraTarget> lora_targets();          // all seven, in the order q, k, v, o, gate, up, down
std::string_view to_string(LoraTarget t);            // "q", "k", ...
const LoraTarget* find_lora_target(std::string_view name);  // nullptr when unknown

struct MatrixShape {
  std::uint64_t d_in = 0;   // input width
  std::uint64_t d_out = 0;  // output width
};

// Shape of target t used for the adapter (A and B) and for the merged delta. Real shapes: q hidden ->
// heads x head_dim, k and v hidden -> kv_heads x head_dim, o heads x head_dim -> hidden, gate and up
// hidden -> ffn, down ffn -> hidden. LoraShapes::chapter: the adapter counts every target as hidden x
// hidden, the merged delta q, k, v, o as hidden x hidden and gate, up, down as hidden x ffn.
MatrixShape lora_adapter_shape(const ModelSpec& m, LoraTarget t);
MatrixShape lora_merged_shape(const ModelSpec& m, LoraTarget t);

// An adapter's size, however it was obtained (from rank and targets, or read from a GGUF file).
struct LoraAdapter {
  double adapter_bytes = 0;   // A and B of every target in every layer
  double merged_bytes = 0;    // the full deltas of the same targets, in the adapter's type (the chapter's "merged")
  double merged_weights = 0;  // the weights of those deltas (of the adapted matrices)
};

// Sizes of a rank-r adapter on `targets` in every layer, `bytes_per_weight` per stored value (2 for f16).
LoraAdapter lora_adapter(const ModelSpec& m, std::uint32_t rank, const std::vector<LoraTarget>& targets,
                         double bytes_per_weight);

// One adapted matrix as a file stores it: its name without the "blk.N." layer prefix, shape and size.
struct LoraMatrix {
  std::string target;        // "attn_q.weight"
  MatrixShape shape;         // of the adapted weight: lora_a is d_in x rank, lora_b rank x d_out
  std::uint64_t rank = 0;
  double adapter_bytes = 0;  // lora_a + lora_b as stored
};

// Sizes of an adapter given as its matrices, the merged deltas at `merged_bytes_per_weight`.
LoraAdapter lora_adapter(const std::vector<LoraMatrix>& matrices, double merged_bytes_per_weight);

// An adapter file's matrices grouped by target: one group per distinct name, shape and rank, `layers` of them,
// `matrix.adapter_bytes` summed over the group; in the order each group first appears.
struct LoraMatrixGroup {
  LoraMatrix matrix;
  std::uint64_t layers = 0;
};
std::vector<LoraMatrixGroup> group_lora_matrices(const std::vector<LoraMatrix>& matrices);

struct LoraInputs {
  LoraAdapter adapter;
  double budget_bytes = 0;       // memory left beside the weights, buffers and KV cache (lora_budget_bytes)
  double base_bits_per_weight = 0;  // the base's matrices (matmul_bits_per_weight): a merged copy is stored so
};

struct LoraResult {
  double unload_load_s = 0;            // 2 x adapter bytes / DRAM bandwidth
  double swap_s = 0;                   // unload_load_s + the device's fixed cost
  double memory_ratio = 0;             // adapter bytes / merged bytes
  std::uint64_t resident_adapters = 0; // floor(budget / adapter) - 1, at least 0
  double merged_copy_bytes = 0;        // the adapted matrices merged, in the base's format: merged weights x its bits
  std::uint64_t merged_copies = 0;     // floor(budget / merged copy): 0 means a merged copy does not fit
};

// Requires device.lora. Fails when the adapter, merged or merged-copy size is not a positive finite number of bytes,
// or the budget holds 2^63 or more of them.
Result<LoraResult> lora_plan(const DeviceSpec& device, const LoraInputs& in);

}  // namespace edgeplan
