// The parts of `bench` that do not depend on the machine's speed: /proc/meminfo and the profile it writes.
#include "edgeplan/io/host.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "edgeplan/io/profiles.hpp"
#include "fixtures.hpp"

namespace edgeplan::io {
namespace {

// A measurement's passes stop at --repeats or once they (and the warm-up before them) reach kRepeatBudgetS: `bench
// --repeats 1000` on a slow machine is bounded, and one pass of any length is still taken.
TEST(Host, PassesStopAtTheirTimeBudget) {
  const auto passes = [](unsigned repeats, double warm_up_s, double each_s) {
    return io::bounded_passes(repeats, warm_up_s, [&] { return each_s; }).size();
  };
  ASSERT_DOUBLE_EQ(io::kRepeatBudgetS, 2.0);
  EXPECT_EQ(passes(1000, 0, 0.5), 4u);
  EXPECT_EQ(passes(1000, 1.0, 0.5), 2u);
  EXPECT_EQ(passes(3, 0, 0.1), 3u);
  EXPECT_EQ(passes(1000, 0, 30), 1u);
  EXPECT_EQ(passes(5, 30, 30), 1u);
}

TEST(Host, ParsesMeminfo) {
  auto m = parse_meminfo("MemTotal:       16384000 kB\nMemFree:         1000 kB\nMemAvailable:    8192000 kB\n");
  ASSERT_TRUE(m.ok());
  EXPECT_DOUBLE_EQ(m->total_bytes, 16384000.0 * 1024);
  EXPECT_DOUBLE_EQ(m->available_bytes, 8192000.0 * 1024);
  EXPECT_EQ(parse_meminfo("MemTotal: 100 kB\n").error().message, "/proc/meminfo has no MemTotal or MemAvailable line");
  EXPECT_EQ(parse_meminfo("MemTotal: 0 kB\nMemAvailable: 0 kB\n").error().message, "/proc/meminfo reports no memory");
}

// A host of 16 GiB (12 available) reading 21.5 GB/s, fp16 matmul at 0.25 TFLOPS.
HostProfile test_host() {
  HostProfile p;
  p.description = "test host";
  p.memory = {16.0 * 1073741824, 12.0 * 1073741824};
  p.read_bytes_per_s = 21.5e9;
  p.gemm_flops_per_s = 0.25e12;
  return p;
}

// The repack ISA bench writes names one llama.cpp has, and AMX only where the AMX kernels run here.
TEST(Host, RepackIsaOfThisHost) {
  const RepackIsa isa = host_repack_isa();
  EXPECT_EQ(find_repack_isa(to_string(isa)), isa);
  if (!cpu_has_amx()) {
    EXPECT_NE(isa, RepackIsa::x86_amx);
  }
#if defined(__x86_64__)
  if (cpu_has_avx2()) {
    EXPECT_NE(isa, RepackIsa::none);
  }
#endif
}

TEST(Host, WrittenProfileLoads) {
  HostProfile p = test_host();
  p.storage_bytes_per_s = 1.5e9;
  p.comments = {"measured for a test"};
  p.kernels = "read: uint64 sum of 4 streams, x86-64 SSE2; matmul: F16 x F16 fp32 FMA, 4x3 tile, AVX2";
  p.repack = RepackIsa::x86_amx;
  const std::string text = device_profile_toml(p);
  EXPECT_EQ(text,
            "# measured for a test\n"
            "description = \"test host\"\n"
            "memory_gib = 16.0           # MemTotal in /proc/meminfo\n"
            "reserved_gib = 4.0          # MemTotal - MemAvailable when measured: held by the OS and other programs\n"
            "bandwidth_gbps = 21.5       # measured: STREAM-style read over all cores\n"
            "utilization = 1.0           # the bandwidth above is measured, not a peak: all of it is achievable\n"
            "per_token_overhead_ms = 0.0 # unknown until fitted: run `edgeplan calibrate` on llama-bench results\n"
            "\n[prefill]\n"
            "tflops = 0.25               # measured: best fp16 matmul (F16 weights) at LLM layer sizes\n"
            "efficiency = 1.0            # the rate above is measured, not a peak\n"
            "\n[runtime]\n"
            "buffers = \"llama.cpp\"       # llama.cpp's compute, output and repack buffers are counted\n"
            "repack = \"x86-amx\"          # the CPU features llama.cpp's prebuilt CPU library repacks for on this host\n"
            "\n[provenance]\n"
            "method = \"measured\"         # measured by `edgeplan bench`, nothing fitted to a runtime\n"
            "kernels = \"read: uint64 sum of 4 streams, x86-64 SSE2; matmul: F16 x F16 fp32 FMA, 4x3 tile, AVX2\"\n"
            "\n# Storage for `stream`: the read rate is measured (one sequential pass; a file in the page cache reads at\n"
            "# memory speed); set page_kib, page_fault_us and readahead_kib for this host, then uncomment.\n"
            "# [storage]\n# read_gbps = 1.5\n");
  auto d = load_device(ProfileText{"host", "host.toml", "test", text}, {});
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_DOUBLE_EQ(d->memory_bytes, 16.0 * 1073741824);
  EXPECT_DOUBLE_EQ(d->reserved_bytes, 4.0 * 1073741824);
  EXPECT_DOUBLE_EQ(d->bandwidth_bytes_per_s, 21.5e9);
  EXPECT_DOUBLE_EQ(d->utilization, 1.0);
  EXPECT_EQ(d->runtime.repack, RepackIsa::x86_amx);
  ASSERT_TRUE(d->prefill.has_value());
  EXPECT_DOUBLE_EQ(d->prefill->peak_flops, 0.25e12);
  ASSERT_TRUE(d->provenance.has_value());
  EXPECT_EQ(d->provenance->method, Calibration::measured);
  EXPECT_EQ(d->provenance->kernels, p.kernels);
  EXPECT_FALSE(calibrated(d->provenance));

  p.gemm_flops_per_s.reset();
  auto bare = load_device(ProfileText{"host", "host.toml", "test", device_profile_toml(p)}, {});
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  EXPECT_FALSE(bare->prefill.has_value());
}

// With the quantized rates, the fastest measured rate is the peak and each type's rate its own efficiency: fp16
// 0.25 TFLOPS, Q4_0 0.4, Q8_0 0.2, Q4_K 0.3 give tflops 0.4, efficiency 0.625, Q4_0 1, Q8_0 0.5, Q4_K 0.75, and
// the types not measured the slowest, 0.5.
TEST(Host, WrittenProfileHasPerTypePrefill) {
  HostProfile p = test_host();
  p.quant_rates = {{QuantKind::q4_0, "Q4_0 x Q8_0 int8 dot products, 1x8 tile, AVX2", 0.4e12},
                   {QuantKind::q8_0, "Q8_0 x Q8_0 int8 dot products, 1x8 tile, AVX2", 0.2e12},
                   {QuantKind::q4_k, "Q4_K x Q8_K int8 dot products, 1x8 tile, AVX2", 0.3e12}};
  const std::string text = device_profile_toml(p);
  EXPECT_NE(text.find("q4_0_efficiency = 1.0"), std::string::npos) << text;
  EXPECT_NE(text.find("# measured: Q4_K x Q8_K int8 dot products, 1x8 tile, AVX2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# measured: the fastest of the rates below\n"), std::string::npos) << text;
  auto d = load_device(ProfileText{"host", "host.toml", "test", text}, {});
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_TRUE(d->prefill.has_value());
  EXPECT_DOUBLE_EQ(d->prefill->peak_flops, 0.4e12);
  EXPECT_DOUBLE_EQ(d->prefill->efficiency, 0.625);
  EXPECT_DOUBLE_EQ(d->prefill->quantized_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(prefill_efficiency(*d->prefill, *find_ggml_type("Q4_0")), 1.0);
  EXPECT_DOUBLE_EQ(prefill_efficiency(*d->prefill, *find_ggml_type("Q8_0")), 0.5);
  EXPECT_DOUBLE_EQ(prefill_efficiency(*d->prefill, *find_ggml_type("Q4_K")), 0.75);
  EXPECT_DOUBLE_EQ(prefill_efficiency(*d->prefill, *find_ggml_type("Q5_K")), 0.5);
  EXPECT_DOUBLE_EQ(prefill_efficiency(*d->prefill, *find_ggml_type("F16")), 0.625);
}

// The one-token rates (bench's gemv table) become [decode]'s <type>_gflops, each with its kernel, and load back as
// decode's per-type rates.
TEST(Host, WrittenProfileHasOneTokenRates) {
  HostProfile p = test_host();
  p.gemv_rates = {{QuantKind::q4_0, "Q4_0 x Q8_0 int8 dot products, 64x1 tile, AVX-512 VNNI on AMX-packed weights", 102.3e9},
                  {QuantKind::q6_k, "Q6_K x Q8_K int8 dot products, 64x1 tile, AVX-512 VNNI on AMX-packed weights", 27.9e9}};
  const std::string text = device_profile_toml(p);
  EXPECT_NE(text.find("[decode]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("q6_k_gflops = 27.9          # measured: one token, weights from DRAM: Q6_K x Q8_K int8 dot "
                      "products, 64x1 tile, AVX-512 VNNI on AMX-packed weights\n"),
            std::string::npos)
      << text;
  auto d = load_device(ProfileText{"host", "host.toml", "test", text}, {});
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_TRUE(d->decode.has_value());
  EXPECT_DOUBLE_EQ(*d->decode->type_flops[*prefill_type_index("Q4_0")], 102.3e9);
  EXPECT_DOUBLE_EQ(*d->decode->type_flops[*prefill_type_index("Q6_K")], 27.9e9);
  EXPECT_FALSE(d->decode->type_flops[*prefill_type_index("Q8_0")].has_value());
  EXPECT_FALSE(d->decode->attention_flops.has_value());
  // The one-token attention rate goes beside them as attention_gflops.
  p.token_attention = AttentionRate{"one-query flash attention, F16 K/V, F16 accumulator, AVX2", 48.5e9};
  const std::string with_attention = device_profile_toml(p);
  EXPECT_NE(with_attention.find("attention_gflops = 48.5     # measured: one token over the cache: one-query flash "
                                "attention, F16 K/V, F16 accumulator, AVX2\n"),
            std::string::npos)
      << with_attention;
  auto a = load_device(ProfileText{"host", "host.toml", "test", with_attention}, {});
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_DOUBLE_EQ(*a->decode->attention_flops, 48.5e9);
  // Without rates no [decode] is written.
  EXPECT_EQ(device_profile_toml(test_host()).find("[decode]"), std::string::npos);
}

// bench's measured per-token overhead becomes per_token_overhead_ms with how it was measured, and loads back.
TEST(Host, WrittenProfileHasMeasuredOverhead) {
  EXPECT_NE(device_profile_toml(test_host()).find("per_token_overhead_ms = 0.0 # unknown until fitted"),
            std::string::npos);
  HostProfile p = test_host();
  p.per_token_overhead_s = 0.384e-3;
  p.overhead_source = "measured: a decoded token's layers of test, the threads meeting where llama.cpp's do, less "
                      "their matrices alone";
  const std::string text = device_profile_toml(p);
  EXPECT_NE(text.find("per_token_overhead_ms = 0.384 # measured: a decoded token's layers of test, the threads "
                      "meeting where llama.cpp's do, less their matrices alone\n"),
            std::string::npos)
      << text;
  auto d = load_device(ProfileText{"host", "host.toml", "test", text}, {});
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_DOUBLE_EQ(d->per_token_overhead_s, 0.384e-3);
}

// A token's layers of a small model (width 256, 2 heads and 1 KV head of 128, FFN 512, 3 layers) in Q8_0: per
// layer Q 256 rows, K and V 128, the output 256 and gate and up 512 of K 256 (8 blocks of 34 bytes: 272 bytes a
// row), down 256 rows of K 512 (544 bytes): 626,688 bytes and 1,179,648 FLOPs (2 per weight); all 3 layers fit 8 MB,
// one layer when nothing fits. Timed twice: the matrices alone, and with the element-wise nodes; with no repeats
// asked for, one token is timed after the warm-up.
TEST(Host, TokenLayersOfAModel) {
  const ModelSpec m = fixtures::dense("small", 3, 256, 2, 1, 128, 512, 0);
  const TokenRun run = measure_token_layers(QuantKind::q8_0, m, 8u << 20, 2, 2);
  EXPECT_EQ(run.kind, QuantKind::q8_0);
  EXPECT_EQ(run.layers, 3u);
  EXPECT_DOUBLE_EQ(run.bytes, 3 * 626688.0);
  EXPECT_DOUBLE_EQ(run.flops, 3 * 1179648.0);
  EXPECT_GT(run.matrices_seconds, 0);
  EXPECT_GT(run.seconds, 0);
  EXPECT_EQ(run.kernel.find("Q8_0 x Q8_0 int8 dot products"), 0u) << run.kernel;
  EXPECT_EQ(measure_token_layers(QuantKind::q8_0, m, 1, 1, 1).layers, 1u);
  const TokenRun once = measure_token_layers(QuantKind::q8_0, m, 1, 1, 0);
  EXPECT_GT(once.matrices_seconds, 0);
  EXPECT_GT(once.seconds, 0);
}

// A layer's nodes for one token in llama.cpp's graph order (width 256, 2 heads and 1 KV head of 128, FFN 512): the
// fused attention norm, Q and its RoPE (2 heads a row), V, K and its RoPE (1 head), the two cache writes (128
// values), flash attention (its barriers alone), the output and the residual add, the fused FFN norm, gate, up,
// SwiGLU (512 values), down and the residual add: 17 nodes, the 7 matmuls of llama_layer_matmuls among them. The
// threads meet 25 times: after every node, and also inside each matmul and the flash attention.
TEST(Host, LayerNodesInGraphOrder) {
  const ModelSpec m = fixtures::dense("small", 3, 256, 2, 1, 128, 512, 0);
  const std::vector<LayerNode> nodes = llama_layer_nodes(m);
  ASSERT_EQ(nodes.size(), 17u);
  unsigned barriers = 0;
  for (const LayerNode& n : nodes) barriers += n.barriers;
  EXPECT_EQ(barriers, 25u);
  std::vector<int> matmuls;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> elementwise;  // rows, width
  for (const LayerNode& n : nodes) {
    if (n.matmul >= 0) {
      matmuls.push_back(n.matmul);
    } else {
      elementwise.emplace_back(n.rows, n.width);
    }
  }
  EXPECT_EQ(matmuls, (std::vector<int>{0, 2, 1, 3, 4, 5, 6}));
  EXPECT_EQ(elementwise, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{
                             {1, 256}, {2, 128}, {1, 128}, {1, 128}, {1, 128}, {0, 0}, {1, 256}, {1, 256}, {1, 512},
                             {1, 256}}));
  EXPECT_EQ(llama_layer_matmuls(m, 1).size(), 7u);
}

// A busy machine: 2 read threads that had 1.2 CPU-s over 1.0 s of wall time got 60% of their cores (< 90%); a
// load average of 8.17 on 2 cores is above 0.5 per core. 1.9 CPU-s (95%) at load 0.4 is an idle machine.
TEST(Host, NoticesABusyMachine) {
  EXPECT_EQ(busy_reason({10e9, 1.9, 1.0}, 2, 0.4, 2), "");
  EXPECT_EQ(busy_reason({10e9, 1.9, 1.0}, 2, std::nullopt, 2), "");
  EXPECT_EQ(busy_reason({10e9, 1.2, 1.0}, 2, 0.4, 2),
            "busy machine: the read threads got 60% of their cores (CPU time over threads x wall time); the figures "
            "read low: measure again on an idle machine");
  EXPECT_EQ(busy_reason({10e9, 1.9, 1.0}, 2, 8.17, 2),
            "busy machine: the load average was 8.17 on 2 cores before the run; the figures read low: measure again "
            "on an idle machine");
  EXPECT_NE(busy_reason({10e9, 1.2, 1.0}, 2, 8.17, 2).find("cores (CPU time over threads x wall time), and the load"),
            std::string::npos);
}

}  // namespace
}  // namespace edgeplan::io
