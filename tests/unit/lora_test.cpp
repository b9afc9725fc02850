#include "edgeplan/core/lora.hpp"

#include <gtest/gtest.h>

#include "edgeplan/core/kv.hpp"
#include "fixtures.hpp"

namespace edgeplan {
namespace {

ModelSpec ref_8b(LoraShapes shapes) {
  ModelSpec m = fixtures::ref_8b();
  m.lora_shapes = shapes;
  return m;
}

std::vector<LoraTarget> all() { return {lora_targets().begin(), lora_targets().end()}; }

DeviceSpec phone() {
  DeviceSpec d = fixtures::phone8g();
  d.lora = LoraSwapSpec{250e-6};
  return d;
}

TEST(Lora, TargetNames) {
  EXPECT_EQ(lora_targets().size(), 7u);
  EXPECT_EQ(to_string(LoraTarget::gate), "gate");
  EXPECT_EQ(*find_lora_target("down"), LoraTarget::down);
  EXPECT_EQ(find_lora_target("ffn"), nullptr);
}

TEST(Lora, ChapterShapesReproduceTheChapter) {
  const LoraAdapter a = lora_adapter(ref_8b(LoraShapes::chapter), 16, all(), 2);
  EXPECT_EQ(a.adapter_bytes, 58720256.0);  // 32 x 7 x 16 x 2 x 4096 x 2 B = 56.0 MiB
  EXPECT_EQ(a.merged_bytes, 32.0 * (4 * 4096.0 * 4096 + 3 * 4096.0 * 11008) * 2);
  EXPECT_NEAR(a.merged_bytes / 1073741824.0, 12.06, 0.005);
}

TEST(Lora, RealShapesFollowGqaAndTheFfn) {
  const ModelSpec m = ref_8b(LoraShapes::real);
  EXPECT_EQ(lora_adapter_shape(m, LoraTarget::q).d_out, 4096u);
  EXPECT_EQ(lora_adapter_shape(m, LoraTarget::k).d_out, 1024u);
  EXPECT_EQ(lora_adapter_shape(m, LoraTarget::down).d_in, 11008u);
  EXPECT_EQ(lora_merged_shape(m, LoraTarget::v).d_out, 1024u);
  const LoraAdapter a = lora_adapter(m, 16, all(), 2);
  // per layer: q 16x8192, k,v 16x5120, o 16x8192, gate,up,down 16x15104
  const double per_layer = 16.0 * (8192 + 2 * 5120 + 8192 + 3 * 15104);
  EXPECT_EQ(a.adapter_bytes, per_layer * 32 * 2);
  const double merged_per_layer = 2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 11008;
  EXPECT_EQ(a.merged_bytes, merged_per_layer * 32 * 2);
}

TEST(Lora, ChapterMergedShapesKeepTheFfn) {
  const ModelSpec m = ref_8b(LoraShapes::chapter);
  EXPECT_EQ(lora_adapter_shape(m, LoraTarget::gate).d_out, 4096u);
  EXPECT_EQ(lora_merged_shape(m, LoraTarget::gate).d_out, 11008u);
  EXPECT_EQ(lora_merged_shape(m, LoraTarget::k).d_out, 4096u);
}

TEST(Lora, MatricesFromAFile) {
  const std::vector<LoraMatrix> ms{{"attn_q.weight", {64, 64}, 4, 1024}, {"attn_v.weight", {64, 16}, 4, 640}};
  const LoraAdapter a = lora_adapter(ms, 2);
  EXPECT_EQ(a.adapter_bytes, 1664);
  EXPECT_EQ(a.merged_bytes, (64.0 * 64 + 64 * 16) * 2);
  EXPECT_EQ(a.merged_weights, 64.0 * 64 + 64 * 16);
}

TEST(Lora, ChapterPlan) {
  const LoraAdapter a = lora_adapter(ref_8b(LoraShapes::chapter), 16, all(), 2);
  const double budget = kv_budget_bytes(8 * 1073741824.0, 0.8 * 1073741824.0, 5.184e9);
  const LoraResult r = *lora_plan(phone(), {a, budget, 4.5});
  EXPECT_NEAR(r.unload_load_s * 1e6, 1727.1, 0.05);
  EXPECT_NEAR(r.swap_s * 1e6, 1977.1, 0.05);
  EXPECT_NEAR(r.memory_ratio * 100, 0.45, 0.005);
  EXPECT_EQ(r.resident_adapters, 42u);  // floor(2.37 GiB / 56 MiB) = 43, one slot kept free
  // The merged copy in the base's format: the adapted matrices (12.06 GiB in F16) at 4.5 bits, 3.39 GiB: no room.
  EXPECT_NEAR(r.merged_copy_bytes / 1073741824.0, 12.0625 * 4.5 / 16, 1e-9);
  EXPECT_EQ(r.merged_copies, 0u);
}

// The merged copy costs the base's bits per weight, not the adapter's type: a Q4_K_M base of a 1.4 GB F16 delta
// holds ~0.4 GB (it was costed in F16, and "does not fit" on every device).
TEST(Lora, AMergedCopyIsInTheBasesFormat) {
  const LoraAdapter a{100, 2000, 1000};  // 1000 weights, F16 deltas
  EXPECT_EQ(lora_plan(phone(), {a, 2000, 16})->merged_copies, 1u);
  EXPECT_EQ(lora_plan(phone(), {a, 2000, 4})->merged_copies, 4u);
  EXPECT_EQ(lora_plan(phone(), {a, 2000, 4})->merged_copy_bytes, 500);
}

TEST(Lora, NoRoomMeansNoAdapters) {
  const LoraAdapter a{100, 1000, 500};
  EXPECT_EQ(lora_plan(phone(), {a, -5, 16})->resident_adapters, 0u);
  EXPECT_EQ(lora_plan(phone(), {a, 99, 16})->resident_adapters, 0u);
  EXPECT_EQ(lora_plan(phone(), {a, 100, 16})->resident_adapters, 0u);  // one slot: the staging slot
  EXPECT_EQ(lora_plan(phone(), {a, 250, 16})->resident_adapters, 1u);
  EXPECT_EQ(lora_plan(phone(), {a, 2000, 16})->merged_copies, 2u);
}

// A rank-0 adapter (0 bytes) reached an infinity-to-integer cast; a count past 2^63 is an error too.
TEST(Lora, PlanRefusesCountsThatAreNotCounts) {
  EXPECT_FALSE(lora_plan(phone(), {LoraAdapter{0, 1000, 500}, 1e9, 16}).ok());
  EXPECT_FALSE(lora_plan(phone(), {LoraAdapter{100, 0, 0}, 1e9, 16}).ok());
  EXPECT_FALSE(lora_plan(phone(), {LoraAdapter{100, 1000, 500}, 1e9, 0}).ok());  // no base bits: no merged copy size
  EXPECT_FALSE(lora_plan(phone(), {LoraAdapter{1, 1, 0.5}, 1e24, 16}).ok());
  EXPECT_EQ(lora_plan(phone(), {LoraAdapter{1, 1, 0.5}, 1e18, 16})->merged_copies, 1000000000000000000u);
}

}  // namespace
}  // namespace edgeplan
