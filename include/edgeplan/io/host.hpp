// Measuring this machine (`edgeplan bench`) and describing it as a device profile. Memory read bandwidth
// is a STREAM-style read kernel (McCalpin's STREAM, read-only: a sum over a buffer far larger than the
// caches, one contiguous slice per thread, all threads at once; best of the repeats). Matrix multiplies run
// edgeplan's kernels of the arithmetic llama.cpp's CPU backend runs, on all threads, each a slice of the weight
// rows: fp16 (io/f16_matmul.hpp) and the integer dot products of the quantized types (io/quant_matmul.hpp);
// GFLOPS = 2 x M x N x K / time; the quantized ones also for a single token (matrix-vector products over weights
// read from DRAM, what decode runs). Storage read rate: one sequential pass over a file. A busy machine (other
// programs taking the cores) is noticed from the CPU time the read threads got and the load average.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/core/runtime.hpp"
#include "edgeplan/core/model.hpp"
#include "edgeplan/io/attention.hpp"
#include "edgeplan/io/f16_matmul.hpp"
#include "edgeplan/io/quant_matmul.hpp"
#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

// Every measurement's time is bounded: it stops repeating once its passes (its warm-up among them) have taken
// kRepeatBudgetS, after at least one timed pass, so `repeats` is a most; a pass itself is not cut (--sizes bounds the
// largest). A storage read stops after kFileReadBudgetS, its rate the bytes read so far over their time.
constexpr double kRepeatBudgetS = 2.0;
constexpr double kFileReadBudgetS = 10.0;

// The times of up to `repeats` calls of pass() (each returning its seconds), at least one, ending once they and
// `spent_s` before them (a warm-up's) reach kRepeatBudgetS.
std::vector<double> bounded_passes(unsigned repeats, double spent_s, const std::function<double()>& pass);

// Best read bandwidth over `repeats` passes of `threads` threads over a buffer of `buffer_bytes`, bytes/s, with
// the CPU time this process spent and the wall time of those passes (for busy_reason).
struct ReadRate {
  double bytes_per_s = 0;
  double cpu_s = 0;
  double wall_s = 0;
};
ReadRate measure_read_bandwidth(std::uint64_t buffer_bytes, unsigned threads, unsigned repeats);

// Which weights llama.cpp's CPU library repacks on this host (a device profile's [runtime] repack), from the CPU's
// features as its prebuilt variants need them (ggml/src/CMakeLists.txt, cpu-feats.cpp): x86-amx where the
// sapphirerapids variant loads (AVX-512 F, VBMI, VNNI and BF16, AMX-TILE and AMX-INT8, the tile state granted),
// x86-avx512 with AVX-512 F, x86-avx2 with AVX2; on ARM Linux arm-i8mm or arm-dotprod from the hwcaps; else none.
RepackIsa host_repack_isa();

// The read loop this CPU runs, in the widest vectors it has (checked at run time): "uint64 sum of 4 streams of
// 512-bit loads, x86-64 AVX-512", "... 256-bit loads, x86-64 AVX2", else the compiled target's "uint64 sum of
// 4 streams, x86-64 SSE2" (or AArch64 NEON).
std::string read_kernel();

// CPU time of this process so far, s; the 1-minute load average where the OS gives one (getloadavg).
double process_cpu_s();
std::optional<double> load_average();

// Why measured figures of this run cannot be trusted, or "": the read threads ran less than
// kMinCpuShare of their wall time (cpu_s / (threads x wall_s): other programs had the cores), or the load
// average before the run was above kMaxLoadPerCore per core.
inline constexpr double kMinCpuShare = 0.9;
inline constexpr double kMaxLoadPerCore = 0.5;
std::string busy_reason(const ReadRate& read, unsigned threads, std::optional<double> load, unsigned cores);

// One matrix multiply of a layer: M prompt tokens times N weight rows (the outputs), each K long.
struct GemmShape {
  std::string name;  // "square 512", "ffn_down"
  std::uint64_t m = 0, n = 0, k = 0;
  [[nodiscard]] double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

// Best time of `repeats` fp16 multiplies of `shape` after one warm-up, s, `threads` threads each running a
// contiguous slice of the rows; with the kernel that ran.
struct MatmulTime {
  std::string kernel;  // F16Matmul::kernel(): "F16 x F16 fp32 FMA, 4x3 tile, AVX2"
  double seconds = 0;
};
MatmulTime measure_f16_matmul(const GemmShape& shape, unsigned threads, unsigned repeats);

// The rate of one layer's attention over a prompt of `tokens` (io/attention.hpp) at m's heads, KV heads and head
// dim: the layer's causal attention FLOPs (attention_flops / attention_layers) over its best time of `repeats`
// after one warm-up, `threads` threads each running a slice of the heads; with the kernel that ran. head_dim is
// rounded down to a multiple of 8 (at least 8).
struct AttentionRate {
  std::string kernel;  // FlashAttention::kernel()
  double flops_per_s = 0;
};
AttentionRate measure_attention(const ModelSpec& m, std::uint64_t tokens, unsigned threads, unsigned repeats);
// The rate of one decoded token's attention over `context` cached keys (io/attention.hpp, TokenAttention) at m's
// heads, KV heads and head dim (rounded as above): its FLOPs (4 x head_dim x context per head and layer, as
// decode_attention_flops counts them) over the mean time of `repeats` after one warm-up, `threads` threads each
// running a slice of the (layer, head) rows. As many layers as fill kTokenAttentionBytes of cache (1 to
// kTokenAttentionLayers), so that one run is milliseconds long, not the microseconds of starting the threads.
inline constexpr std::uint64_t kTokenAttentionBytes = std::uint64_t{64} << 20;
inline constexpr std::uint64_t kTokenAttentionLayers = 256;
AttentionRate measure_token_attention(const ModelSpec& m, std::uint64_t context, unsigned threads, unsigned repeats);

// The weight matrices of one llama-style decoder layer on `tokens` tokens, in the order llama.cpp's graph runs them:
// attn_q, attn_k, attn_v and attn_output (build_attn), ffn_gate, ffn_up and ffn_down (build_ffn).
std::vector<GemmShape> llama_layer_matmuls(const ModelSpec& m, std::uint64_t tokens);
// The nodes of one llama-style decoder layer's graph for one token, in the order ggml's threads run them (the graph
// of src/models/llama.cpp with flash attention, as core/compute_graph.cpp replays it; ggml-cpu.c's
// ggml_graph_compute_thread ends every node but a view at a barrier, and runs an RMS norm and the multiply by its
// weight fused as one): the matmuls of llama_layer_matmuls (`matmul`, their index there) and between them the
// element-wise nodes, `rows` rows of `width` values each (ggml shares a node's rows among its threads: for one
// token, one row of a norm, a residual add, a cache write or the SwiGLU, and a head a row of a RoPE). The flash
// attention node has no rows: its work is decode's attention term, and it stands here for its barriers. `barriers`:
// how often the node's threads meet, the graph's barrier after it and the node's own before its work: a matmul's
// threads meet once they have quantized the activations (ggml_compute_forward_mul_mat in ggml-cpu.c, forward_mul_mat
// in repack.cpp), flash attention's before the chunks (one query: before reducing the threads' partial sums; ops.cpp).
struct LayerNode {
  int matmul = -1;
  std::uint64_t rows = 0, width = 0;
  unsigned barriers = 1;
};
std::vector<LayerNode> llama_layer_nodes(const ModelSpec& m);
// A matmul of a decoder layer and how many times the layer runs that shape.
struct LayerMatmul {
  GemmShape shape;
  unsigned count = 1;
};
// The rate of quantized multiplies over a layer's matmuls, FLOP/s: each shape's best time of `repeats` after one
// warm-up, `threads` threads each running a contiguous slice of the rows, and the layer's FLOPs over its time
// (sum of count x FLOPs over sum of count x seconds); with the kernels that ran ("K1 + K2" where shapes ran
// different ones). M is rounded up to a multiple of 32 (the AMX kernels' calls; the others need 8) and K down to a
// multiple of 256 (at least 256), as the kernels need. The shapes matter: on AMX an output 1024 floats wide
// (4 KiB rows) runs at a third of the rate of one 1056 wide, its tiles' rows falling in the same L1 sets.
struct QuantRate {
  QuantKind kind = QuantKind::q4_0;
  std::string kernel;      // QuantMatmul::kernel(): "Q4_0 x Q8_0 int8 dot products, 2x8 tile, AVX-512 VNNI"
  double flops_per_s = 0;
};
QuantRate measure_quant_layer(QuantKind kind, std::span<const LayerMatmul> layer, unsigned threads, unsigned repeats);
// A decoded token's layers as llama.cpp's graph runs them: llama_layer_nodes of each layer of m in turn, the matrices
// (K rounded down to a multiple of 256) one token each in weights of `kind`, `threads` threads sharing each matrix's
// rows as a one-token matmul shares them and an element-wise node's as ggml does (one pass over its values), and
// meeting as often as each node's threads do in ggml (LayerNode's barriers, where they spin), over as many of m's
// layers as fit `max_bytes` of weights (at least one), with the matrices' weight bytes and FLOPs. Each of `repeats`
// rounds after a warm-up runs the token twice, right after each other: its matrices alone (each with its barriers),
// then with the element-wise nodes; each token after the threads have read max_bytes of other memory (untimed: its
// weights from DRAM); the mean time of each over the rounds. The matrices alone give the type's one-token rate as a
// model's token meets it (each small matrix started and ended, the threads waiting for each other at its end: on the
// EPYC of docs/accuracy.md Q4_0's repacked kernel runs a fifth slower over a 0.2B model's matrices than over one matrix
// of 128 MiB, Q8_0's and Q6_K's at the same rate), the difference what the element-wise nodes between them add
// (measured_overhead_s).
struct TokenRun {
  QuantKind kind = QuantKind::q4_0;
  std::string kernel;       // QuantMatmul::kernel() of the matrices
  std::uint64_t layers = 0;  // layers run
  double bytes = 0, flops = 0;
  double matrices_seconds = 0;  // the matrices alone
  double seconds = 0;           // with the element-wise nodes
};
TokenRun measure_token_layers(QuantKind kind, const ModelSpec& m, std::uint64_t max_bytes, unsigned threads,
                                unsigned repeats);
// One sequential read of the file, whole or for kFileReadBudgetS: bytes read and seconds taken. Fails when the file
// cannot be read.
struct FileRead {
  double bytes = 0;
  double seconds = 0;
};
Result<FileRead> measure_file_read(const std::string& path);

// MemTotal and MemAvailable from the text of /proc/meminfo.
struct HostMemory {
  double total_bytes = 0;
  double available_bytes = 0;
};
Result<HostMemory> parse_meminfo(std::string_view text);
Result<HostMemory> read_meminfo();  // /proc/meminfo; fails outside Linux

// What `bench --write-profile` writes: a device profile of this host that the other commands load.
struct HostProfile {
  std::string description;                        // one line for `edgeplan profiles`
  HostMemory memory;
  double read_bytes_per_s = 0;                    // measured memory read bandwidth
  std::optional<double> gemm_flops_per_s;         // best measured fp16 rate at the layer shapes; gives [prefill]
  std::vector<QuantRate> quant_rates;             // measured quantized rates: [prefill] per-type efficiencies
  std::optional<AttentionRate> attention;         // measured attention rate: [prefill] attention_efficiency
  std::vector<QuantRate> gemv_rates;              // measured one-token rates: [decode] <type>_gflops
  std::optional<AttentionRate> token_attention;   // measured one-token attention rate: [decode] attention_gflops
  std::optional<double> per_token_overhead_s;     // measured (measure_token_layers): per_token_overhead_ms
  std::string overhead_source;                    // its comment: how it was measured
  std::optional<double> storage_bytes_per_s;      // measured file read rate: a commented-out [storage]
  std::vector<std::string> comments;              // extra lines put at the top ("measured on ...")
  std::string kernels;                            // [provenance] kernels: the kernel and ISA of each figure
  RepackIsa repack = RepackIsa::none;             // [runtime] repack: host_repack_isa()
};
// [prefill]: tflops the fastest measured rate (fp16 or quantized), efficiency fp16's share of it, each measured
// weight type's share as its <type>_efficiency, and quantized_efficiency the slowest of those (for the types bench
// does not measure). [decode]: each measured one-token rate as its <type>_gflops and the one-token attention rate as
// attention_gflops (decode's compute term); per_token_overhead_ms the measured overhead with its source, else 0.
std::string device_profile_toml(const HostProfile& p);

}  // namespace edgeplan::io
