#include "edgeplan/core/place.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

#include <cmath>
#include <limits>

namespace edgeplan {
namespace {

constexpr double kA = 512.0 * 4096 * 2;  // the chapter's activation tensor, 4 MiB

// The reference device: NPU 45 TOPS / 22 TFLOPS / 68 GB/s (matmul, elementwise), GPU 34 GB/s, link 30 GB/s.
DeviceSpec reference_device() {
  DeviceSpec d;
  d.name = "phone8g";
  d.bandwidth_bytes_per_s = 68e9;
  d.units[UnitKind::npu] = {45e12, 22e12, 68e9, {OpKind::matmul, OpKind::elementwise}};
  d.units[UnitKind::gpu] = {std::nullopt, std::nullopt, 34e9, {OpKind::elementwise, OpKind::softmax, OpKind::norm}};
  d.link = UnitLink{30e9, 0};
  return d;
}

std::vector<Op> reference_layer() {
  return {
      {"qkv_gemm", OpKind::matmul, Precision::int8, 2.0 * 512 * 4096 * 6144, 0, 1.5 * kA},
      {"rope", OpKind::elementwise, Precision::int8, 0, 2 * kA, 2 * kA},
      {"softmax", OpKind::softmax, Precision::int8, 0, 3 * kA, kA},
      {"attn_gemm", OpKind::matmul, Precision::fp16, 4.0 * 512 * 512 * 4096, 0, kA},
      {"norm1", OpKind::norm, Precision::int8, 0, 2 * kA, kA},
      {"gate_up", OpKind::matmul, Precision::int8, 2.0 * 512 * 4096 * 2 * 11008, 0, 2.0 * 512 * 11008 * 2},
      {"down", OpKind::matmul, Precision::int8, 2.0 * 512 * 11008 * 4096, 0, kA},
      {"norm2", OpKind::norm, Precision::int8, 0, 2 * kA, kA},
  };
}

double us(double s) { return std::round(s * 1e7) / 10; }  // to 0.1 us

using fixtures::ref_8b;

TEST(Place, RooflineTakesTheSlowerOfComputeAndBytes) {
  const ComputeUnit npu = reference_device().units.at(UnitKind::npu);
  EXPECT_DOUBLE_EQ(op_time_s({"mm", OpKind::matmul, Precision::int8, 45e6, 0, 0}, npu), 1e-6);
  EXPECT_DOUBLE_EQ(op_time_s({"mm", OpKind::matmul, Precision::fp16, 22e6, 0, 0}, npu), 1e-6);
  EXPECT_DOUBLE_EQ(op_time_s({"mm", OpKind::matmul, Precision::int8, 45e6, 680e3, 0}, npu), 1e-5);  // bytes win
  EXPECT_DOUBLE_EQ(op_time_s({"ew", OpKind::elementwise, Precision::int8, 0, 68e3, 0}, npu), 1e-6);
}

TEST(Place, TransferIsBytesOverLinkPlusLatency) {
  EXPECT_DOUBLE_EQ(transfer_time_s(30e3, {30e9, 0}), 1e-6);
  EXPECT_DOUBLE_EQ(transfer_time_s(30e3, {30e9, 5e-6}), 6e-6);
  EXPECT_DOUBLE_EQ(transfer_time_s(0, {30e9, 5e-6}), 5e-6);
}

TEST(Place, ReproducesTheChapterTable) {
  const auto p = place(reference_layer(), reference_device(), Policy::npu_first);
  ASSERT_TRUE(p.ok()) << p.error().message;
  const double compute[] = {572.7, 123.4, 370.1, 195.2, 246.7, 2052.0, 1026.0, 246.7};
  const double transfer[] = {0, 0, 419.4, 0, 279.6, 0, 0, 279.6};
  const UnitKind unit[] = {UnitKind::npu, UnitKind::npu, UnitKind::gpu, UnitKind::npu,
                           UnitKind::gpu, UnitKind::npu, UnitKind::npu, UnitKind::gpu};
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(p->ops[i].unit, unit[i]) << i;
    EXPECT_EQ(us(p->ops[i].compute_s), compute[i]) << i;
    EXPECT_EQ(us(p->ops[i].transfer_s), transfer[i]) << i;
    EXPECT_EQ(p->ops[i].fallback_from, unit[i] == UnitKind::gpu ? std::vector{UnitKind::npu} : std::vector<UnitKind>{});
  }
  EXPECT_EQ(us(p->total_s), 5811.5);
  EXPECT_EQ(us(p->transfer_s), 978.7);
  EXPECT_EQ(std::round(1000 * p->transfer_s / p->total_s) / 10, 16.8);
}

TEST(Place, SoftmaxOnTheNpuRemovesItsTransfer) {
  DeviceSpec d = reference_device();
  d.units[UnitKind::npu].ops.push_back(OpKind::softmax);
  const auto p = place(reference_layer(), d, Policy::npu_first);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->ops[2].unit, UnitKind::npu);
  EXPECT_EQ(us(p->ops[2].compute_s), 185.0);  // 3A at 68 GB/s
  EXPECT_EQ(p->ops[2].transfer_s, 0);
  EXPECT_EQ(us(p->transfer_s), 559.2);  // the two norms
  EXPECT_EQ(us(p->total_s), 5207.0);
}

TEST(Place, ChainFallsThroughEveryUnitThatLacksTheOp) {
  DeviceSpec d = reference_device();
  d.units[UnitKind::cpu] = {1e12, 1e12, 20e9, {OpKind::matmul, OpKind::elementwise, OpKind::softmax, OpKind::norm}};
  d.units[UnitKind::gpu].ops = {OpKind::elementwise};
  const std::vector<Op> ops{{"mm", OpKind::matmul, Precision::int8, 45e6, 0, 30e3},
                            {"sm", OpKind::softmax, Precision::int8, 0, 20e3, 30e3}};
  const auto p = place(ops, d, Policy::npu_first);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->ops[1].unit, UnitKind::cpu);
  EXPECT_EQ(p->ops[1].fallback_from, (std::vector{UnitKind::npu, UnitKind::gpu}));
  // Two crossings (mm -> sm and, the layer repeating, sm -> mm), both charged to the op on the cpu.
  EXPECT_DOUBLE_EQ(p->ops[1].transfer_s, 2e-6);
  EXPECT_DOUBLE_EQ(p->ops[0].transfer_s, 0);
  EXPECT_DOUBLE_EQ(p->total_s, 1e-6 + 1e-6 + 2e-6);
}

TEST(Place, GpuFirstNeverTriesTheNpu) {
  DeviceSpec d = reference_device();
  const std::vector<Op> ops{{"ew", OpKind::elementwise, Precision::int8, 0, 34e3, 0}};
  const auto p = place(ops, d, Policy::gpu_first);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->ops[0].unit, UnitKind::gpu);
  EXPECT_DOUBLE_EQ(p->total_s, 1e-6);
}

TEST(Place, ExhaustedChainNamesTheOpAndTheUnitsTried) {
  const auto p = place(reference_layer(), reference_device(), Policy::gpu_first);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message,
            "no unit of policy gpu-first runs op 'qkv_gemm' (matmul): tried gpu (runs elementwise, softmax, norm), "
            "cpu (not on the device)");
  const auto c = place(reference_layer(), reference_device(), Policy::cpu_only);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "no unit of policy cpu-only runs op 'qkv_gemm' (matmul): tried cpu (not on the device)");
  DeviceSpec d = reference_device();
  d.units[UnitKind::gpu].ops = {OpKind::elementwise};
  const auto n = place(reference_layer(), d, Policy::optimal);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().message,
            "no unit of policy optimal runs op 'softmax' (softmax): tried npu (runs matmul, elementwise), "
            "gpu (runs elementwise), cpu (not on the device)");
}

TEST(Place, OptimalAvoidsAPingPongTheChainPays) {
  // The NPU runs both ops faster, but only the GPU runs `sm`: optimal keeps `ew` on the GPU beside it.
  DeviceSpec d = reference_device();
  const std::vector<Op> ops{{"ew", OpKind::elementwise, Precision::int8, 0, 68e3, 300e3},
                            {"sm", OpKind::softmax, Precision::int8, 0, 34e3, 300e3}};
  const auto chain = place(ops, d, Policy::npu_first);
  const auto best = place(ops, d, Policy::optimal);
  ASSERT_TRUE(chain.ok() && best.ok());
  EXPECT_DOUBLE_EQ(chain->total_s, 1e-6 + 1e-6 + 20e-6);  // ew npu, sm gpu, two 10 us crossings
  EXPECT_EQ(best->ops[0].unit, UnitKind::gpu);
  EXPECT_DOUBLE_EQ(best->total_s, 2e-6 + 1e-6);
  EXPECT_TRUE(best->ops[0].fallback_from.empty());  // a choice, not a fallback: the npu runs elementwise
  EXPECT_EQ(best->ops[1].fallback_from, std::vector{UnitKind::npu});
}

TEST(Place, LatencyIsPaidPerTransfer) {
  DeviceSpec d = reference_device();
  d.link->latency_s = 100e-6;
  const auto p = place(reference_layer(), d, Policy::npu_first);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(us(p->transfer_s), 978.7 + 600);  // six crossings
}

TEST(Place, EntryTransferIsChargedToTheFirstOp) {
  const DeviceSpec d = reference_device();
  const std::vector<Op> head{{"lm_head", OpKind::matmul, Precision::int8, 45e6, 0, 0}};
  const auto from_gpu = place(head, d, Policy::npu_first, Entry{UnitKind::gpu, 30e3});
  ASSERT_TRUE(from_gpu.ok());
  EXPECT_DOUBLE_EQ(from_gpu->ops[0].transfer_s, 1e-6);
  EXPECT_DOUBLE_EQ(from_gpu->total_s, 2e-6);
  const auto from_npu = place(head, d, Policy::npu_first, Entry{UnitKind::npu, 30e3});
  EXPECT_DOUBLE_EQ(from_npu->total_s, 1e-6);
}

// Every assignment of units to ops, for checking `optimal` against brute force.
double brute_force_s(const std::vector<Op>& ops, const DeviceSpec& d) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<UnitKind> a(ops.size());
  const std::size_t n = ops.size();
  std::size_t combos = 1;
  for (std::size_t i = 0; i < n; ++i) combos *= 3;
  for (std::size_t code = 0; code < combos; ++code) {
    std::size_t c = code;
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i, c /= 3) {
      a[i] = unit_kinds()[c % 3];
      const auto it = d.units.find(a[i]);
      ok = ok && it != d.units.end() && supports(it->second, ops[i].kind);
    }
    if (ok) best = std::min(best, evaluate_placement(ops, d, Policy::optimal, a).total_s);
  }
  return best;
}

DeviceSpec three_units() {
  DeviceSpec d = reference_device();
  d.units[UnitKind::gpu] = {4e12, 3e12, 34e9, {OpKind::matmul, OpKind::elementwise, OpKind::softmax, OpKind::norm}};
  d.units[UnitKind::cpu] = {1e12, 0.5e12, 50e9, {OpKind::matmul, OpKind::elementwise, OpKind::softmax, OpKind::norm}};
  d.link = UnitLink{10e9, 20e-6};
  return d;
}

TEST(Place, OptimalEqualsBruteForceAndBeatsEveryChain) {
  const DeviceSpec d = three_units();
  std::vector<std::vector<Op>> graphs{reference_layer(), derive_layer(ref_8b(), 64).ops, derive_layer(ref_8b(), 2048).ops};
  graphs[1].resize(8);  // 3^8 assignments
  graphs[2].resize(7);
  for (const auto& ops : graphs) {
    const auto best = place(ops, d, Policy::optimal);
    ASSERT_TRUE(best.ok());
    EXPECT_NEAR(best->total_s, brute_force_s(ops, d), 1e-15);
    for (Policy p : policies()) {
      const auto chain = place(ops, d, p);
      ASSERT_TRUE(chain.ok()) << to_string(p);
      EXPECT_LE(best->total_s, chain->total_s + 1e-15) << to_string(p);
    }
  }
}

TEST(Place, TransferTaxIsTheSumOfChargedTransfers) {
  const auto p = place(derive_layer(ref_8b(), 300).ops, three_units(), Policy::optimal);
  ASSERT_TRUE(p.ok());
  double sum = 0, compute = 0;
  for (const OpPlacement& o : p->ops) {
    sum += o.transfer_s;
    compute += o.compute_s;
  }
  EXPECT_NEAR(sum, p->transfer_s, 1e-15);
  EXPECT_NEAR(compute + sum, p->total_s, 1e-15);
}

TEST(Place, DerivedLayerIsCompleteAndGqaAware) {
  const OpGraph g = derive_layer(ref_8b(), 512);
  ASSERT_EQ(g.ops.size(), 11u);
  const char* names[] = {"attn_norm", "qkv", "rope", "attn_scores", "softmax", "attn_v",
                         "o_proj", "ffn_norm", "gate_up", "swiglu", "down"};
  for (std::size_t i = 0; i < 11; ++i) EXPECT_EQ(g.ops[i].name, names[i]);
  EXPECT_EQ(g.seq_tokens, 512u);
  EXPECT_EQ(g.ops[1].flops, 25769803776.0);                           // the chapter's qkv_gemm
  EXPECT_EQ(g.ops[1].bytes, 4096.0 * 6144 + kA + 512.0 * 6144 * 2);   // int8 weights + x in + QKV out
  EXPECT_EQ(g.ops[3].flops + g.ops[5].flops, 4.0 * 512 * 512 * 4096); // the chapter's attn_gemm, split
  EXPECT_EQ(g.ops[4].bytes, 2.0 * 32 * 512 * 512 * 2);                // read and write 32 score matrices
  EXPECT_EQ(g.ops[6].flops, 2.0 * 512 * 4096 * 4096);                 // o_proj
  EXPECT_EQ(g.ops[8].flops, 92341796864.0);                           // gate_up
  EXPECT_EQ(g.ops[10].flops, 46170898432.0);                          // down
  EXPECT_EQ(g.ops[0].bytes, 2 * kA);
  EXPECT_EQ(g.ops[10].handoff_bytes, kA);  // the residual stream into the next layer
  ModelSpec mha = ref_8b();
  mha.kv_heads = 32;
  EXPECT_EQ(derive_layer(mha, 512).ops[1].flops, 2.0 * 512 * 4096 * (3 * 4096));
}

TEST(Place, LmHeadNeedsTheVocabulary) {
  ModelSpec m = ref_8b();
  EXPECT_FALSE(derive_lm_head(m).has_value());
  m.vocab = 128256;
  const auto head = derive_lm_head(m);
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->flops, 2.0 * 4096 * 128256);
  EXPECT_EQ(head->bytes, 4096.0 * 128256 + 4096 * 2 + 128256 * 2);
  EXPECT_EQ(lm_head_entry_bytes(m), 8192);
}

TEST(Place, PrefillIsLayersTimesLayerPlusHead) {
  Placement layer;
  layer.total_s = 0.005;
  Placement head;
  head.total_s = 0.002;
  const Prefill with_head = prefill(layer, 32, &head, 512);
  EXPECT_DOUBLE_EQ(with_head.layers_s, 0.16);
  EXPECT_DOUBLE_EQ(with_head.total_s, 0.162);
  EXPECT_DOUBLE_EQ(with_head.tok_per_s, 512 / 0.162);
  const Prefill without = prefill(layer, 32, nullptr, 512);
  EXPECT_DOUBLE_EQ(without.head_s, 0);
  EXPECT_DOUBLE_EQ(without.tok_per_s, 3200);
}

TEST(Place, NamesRoundTrip) {
  for (Policy p : policies()) EXPECT_EQ(find_policy(to_string(p)), p);
  for (UnitKind u : unit_kinds()) EXPECT_EQ(find_unit_kind(to_string(u)), u);
  for (OpKind k : op_kinds()) EXPECT_EQ(find_op_kind(to_string(k)), k);
  EXPECT_EQ(find_precision("fp16"), Precision::fp16);
  EXPECT_FALSE(find_policy("npu_first").has_value());
}

}  // namespace
}  // namespace edgeplan
