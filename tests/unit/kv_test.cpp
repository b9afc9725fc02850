#include "edgeplan/core/kv.hpp"

#include <gtest/gtest.h>

#include <string_view>
#include <utility>
#include <vector>

#include "fixtures.hpp"

namespace edgeplan {
namespace {

using fixtures::ref_8b;

TEST(Kv, BytesPerTokenPerType) {
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(ref_8b(), *find_kv_type("f16")), 131072);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(ref_8b(), *find_kv_type("int8")), 65536);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(ref_8b(), *find_kv_type("int4")), 32768);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(ref_8b(), *find_kv_type("q8_0")), 69632);  // 34 B per 32 values
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(ref_8b(), *find_kv_type("Q4_0")), 36864);  // 18 B per 32 values
  EXPECT_EQ(find_kv_type("fp8"), nullptr);
}

// Every type llama.cpp accepts for -ctk/-ctv, sized by ggml's blocks: ref-8b holds 1024 K and 1024 V values
// per layer per token (8 kv heads x 128), 32 layers.
TEST(Kv, EveryLlamaCppCacheTypeInWholeBlocks) {
  const std::vector<std::pair<const char*, double>> per_token{
      {"f32", 4}, {"f16", 2}, {"bf16", 2}, {"q8_0", 34.0 / 32}, {"q4_0", 18.0 / 32},
      {"q4_1", 20.0 / 32}, {"iq4_nl", 18.0 / 32}, {"q5_0", 22.0 / 32}, {"q5_1", 24.0 / 32}};
  std::vector<std::string_view> llama;
  for (const KvType& t : kv_types()) {
    if (t.counted_as == "llama.cpp") llama.push_back(t.name);
  }
  ASSERT_EQ(llama.size(), per_token.size());
  for (std::size_t i = 0; i < per_token.size(); ++i) {
    EXPECT_EQ(llama[i], per_token[i].first);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(ref_8b(), *find_kv_type(per_token[i].first)), 32 * 2048 * per_token[i].second)
        << per_token[i].first;
  }
  EXPECT_EQ(find_kv_type("int8")->counted_as, "reference");
  EXPECT_EQ(find_kv_type("IQ4_NL")->name, "iq4_nl");
}

TEST(Kv, SeparateKAndVTypes) {
  const KvCacheType mixed{*find_kv_type("q8_0"), *find_kv_type("q4_0")};
  EXPECT_EQ(mixed.name(), "k=q8_0,v=q4_0");
  EXPECT_EQ(KvCacheType(*find_kv_type("q8_0")).name(), "q8_0");
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(ref_8b(), mixed), 32.0 * 1024 * (34.0 / 32 + 18.0 / 32));  // 53,248 B
  EXPECT_DOUBLE_EQ(kv_cache_bytes(ref_8b(), mixed, 1000, KvCacheSettings{}), 1024.0 * 53248);
  EXPECT_EQ(max_context(ref_8b(), mixed, 1024.0 * 53248, KvCacheSettings{}), 1024u);
  EXPECT_EQ(kv_cache_refusal(ref_8b(), mixed), std::nullopt);
}

// llama.cpp's llama_init_from_model refuses a quantized type whose block does not divide the head size, and
// different K and V types under latent attention.
TEST(Kv, CachesLlamaCppRefuses) {
  ModelSpec m = ref_8b();
  m.head_dim = 80;
  EXPECT_EQ(kv_cache_refusal(m, *find_kv_type("f16")), std::nullopt);
  EXPECT_EQ(kv_cache_refusal(m, *find_kv_type("q8_0")),
            "K cache type q8_0 with block size 32 does not divide the head size 80");
  EXPECT_EQ(kv_cache_refusal(m, KvCacheType{*find_kv_type("f16"), *find_kv_type("q5_1")}),
            "V cache type q5_1 with block size 32 does not divide the head size 80");
  ModelSpec d = fixtures::dense("deepseek", 27, 2048, 16, 16, 128, 10944, 102400);
  d.mla = MlaSpec{512, 0, 64, 128, 128};
  EXPECT_EQ(kv_cache_refusal(d, KvCacheType{*find_kv_type("q8_0"), *find_kv_type("q4_0")}),
            "latent attention caches one vector per token: K and V take one type, not k=q8_0,v=q4_0");
  EXPECT_EQ(kv_cache_refusal(d, *find_kv_type("q4_0")), std::nullopt);
}

TEST(Kv, ReferenceBudgetAndContexts) {
  const double budget = kv_budget_bytes(8 * 1073741824.0, 0.8 * 1073741824.0, 5.184e9);
  EXPECT_NEAR(budget / 1073741824.0, 2.37, 0.005);
  EXPECT_NEAR(5.184e9 / 1073741824.0, 4.83, 0.005);
  const KvCacheSettings unpadded{1, 512};
  EXPECT_EQ(max_context(ref_8b(), *find_kv_type("f16"), budget, unpadded), 19431u);
  EXPECT_EQ(max_context(ref_8b(), *find_kv_type("int8"), budget, unpadded), 38863u);
  EXPECT_EQ(max_context(ref_8b(), *find_kv_type("int4"), budget, unpadded), 77726u);
  // llama.cpp pads the context to 256: 19,431 would allocate 19,456 cells, which do not fit.
  EXPECT_EQ(max_context(ref_8b(), *find_kv_type("f16"), budget, KvCacheSettings{}), 19200u);
}

TEST(Kv, NoBudgetNoContext) {
  EXPECT_EQ(max_context(ref_8b(), *find_kv_type("f16"), 0, KvCacheSettings{}), 0u);
  EXPECT_EQ(max_context(ref_8b(), *find_kv_type("f16"), -5e9, KvCacheSettings{}), 0u);
  EXPECT_LT(kv_budget_bytes(4e9, 1e9, 16e9), 0);
}

TEST(Kv, PaddingRoundsTheContextUpTo256) {
  const KvType& f16 = *find_kv_type("f16");
  EXPECT_EQ(kv_cells(ref_8b(), 0, 1, KvCacheSettings{}), 256u);
  EXPECT_EQ(kv_cells(ref_8b(), 0, 4096, KvCacheSettings{}), 4096u);
  EXPECT_EQ(kv_cells(ref_8b(), 0, 4097, KvCacheSettings{}), 4352u);
  EXPECT_DOUBLE_EQ(kv_cache_bytes(ref_8b(), f16, 1000, KvCacheSettings{}), 1024.0 * 131072);
  EXPECT_DOUBLE_EQ(kv_cache_bytes(ref_8b(), f16, 1000, KvCacheSettings{1, 512}), 1000.0 * 131072);
  EXPECT_DOUBLE_EQ(kv_cache_bytes(ref_8b(), f16, 0, KvCacheSettings{}), 0);
}

ModelSpec gemma2_2b() {
  ModelSpec m = fixtures::dense("gemma-2", 26, 2304, 8, 4, 256, 9216, 256000);
  m.arch = "gemma2";
  m.sliding_window = SlidingWindow{4096, 2};
  return m;
}

TEST(Kv, SlidingLayersHoldTheWindowPlusUbatch) {
  const ModelSpec m = gemma2_2b();
  EXPECT_TRUE(is_sliding_layer(m, 0));
  EXPECT_FALSE(is_sliding_layer(m, 1));
  // 4096 + 512 = 4608 cells (a multiple of 256) in the 13 sliding layers; the 13 global layers hold it all.
  EXPECT_EQ(kv_cells(m, 0, 8192, KvCacheSettings{}), 4608u);
  EXPECT_EQ(kv_cells(m, 1, 8192, KvCacheSettings{}), 8192u);
  EXPECT_EQ(kv_cells(m, 0, 2000, KvCacheSettings{}), 2048u);
  const KvType& f16 = *find_kv_type("f16");
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, f16), 26.0 * 4 * 512 * 2);  // 106,496 B as if all global
  EXPECT_DOUBLE_EQ(kv_cache_bytes(m, f16, 8192, KvCacheSettings{}), (13.0 * 4608 + 13.0 * 8192) * 4096);
  // Gemma 3: window 1024, one global layer in 6: 34 layers have 5 global (5, 11, 17, 23, 29).
  ModelSpec g3 = m;
  g3.layers = 34;
  g3.sliding_window = SlidingWindow{1024, 6};
  int global = 0;
  for (std::uint32_t i = 0; i < 34; ++i) global += is_sliding_layer(g3, i) ? 0 : 1;
  EXPECT_EQ(global, 5);
  EXPECT_EQ(kv_cells(g3, 0, 131072, KvCacheSettings{}), 1536u);
  // A budget of exactly the cache at 32768 tokens fits 32768 and no more (padding to 256).
  const double budget = kv_cache_bytes(g3, f16, 32768, KvCacheSettings{});
  EXPECT_EQ(max_context(g3, f16, budget, KvCacheSettings{}), 32768u);
  EXPECT_EQ(max_context(g3, f16, budget - 1, KvCacheSettings{}), 32512u);
}

TEST(Kv, LatentAttentionCachesOneVectorPerLayer) {
  ModelSpec m = fixtures::dense("deepseek", 27, 2048, 16, 16, 128, 10944, 102400);
  m.arch = "deepseek2";
  m.mla = MlaSpec{512, 0, 64, 128, 128};
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, *find_kv_type("f16")), 27.0 * 576 * 2);  // 31,104 B
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, *find_kv_type("q8_0")), 27.0 * 18 * 34);
}

TEST(Kv, TrainedContext) {
  ModelSpec m = ref_8b();
  EXPECT_FALSE(beyond_trained(m, 1u << 30));  // not stated: never beyond
  EXPECT_EQ(trained_cap(m, 77726), 77726u);
  m.context_tokens = 4096;
  EXPECT_FALSE(beyond_trained(m, 4096));
  EXPECT_TRUE(beyond_trained(m, 4097));
  EXPECT_EQ(trained_cap(m, 77726), 4096u);
  EXPECT_EQ(trained_cap(m, 2048), 2048u);
}

TEST(Kv, RecomputeSaving) {
  EXPECT_DOUBLE_EQ(kv_recompute_token_steps(100), 5050);
  EXPECT_DOUBLE_EQ(kv_recompute_ratio(100), 50.5);
  EXPECT_DOUBLE_EQ(kv_recompute_ratio(500), 250.5);
  EXPECT_DOUBLE_EQ(kv_recompute_ratio(1), 1);
}

}  // namespace
}  // namespace edgeplan
