// llama.cpp's own buffers beside the weights and the KV cache, as it allocates them for a context on the CPU:
//   compute  the scheduler's buffer for the worst-case graph (a full micro-batch of min(ubatch, 2048, context x
//            parallel) outputs, its tokens rounded up to a multiple of parallel): what ggml-alloc reserves laying
//            that graph out, replayed by core/compute_graph.hpp (to the byte on every case of
//            tests/llamacpp/check-runtime).
//   output   logits of one output per sequence: 4 vocab x parallel bytes.
//   repack   the CPU's interleaved copy of the 2-D matmul weights of the types llama.cpp repacks on the ISA
//            (rows a multiple of its interleave): as many bytes as those tensors. With mmap it sits beside the
//            mapped file; without mmap it replaces those tensors in the loaded weights.
//   amx      on x86-amx, the AMX copy of the weights of a plain MUL_MAT of F16, Q4_0, Q4_1, Q8_0, Q4_K, Q5_K, Q6_K
//            or IQ4_XS with rows a multiple of 32 and a row length a multiple of its block (16 for F16, 32, or 256
//            for the k-quants and IQ4_XS); taken before the repack, which keeps its x86-avx512 rules for the rest.
//            Its bytes: F16 as stored; quantized ones rows x (row bytes + 4 per block for Q8_0, 4 per 256 for Q4_K
//            and Q5_K, 2 per 256 for IQ4_XS).
//   mapped   with mmap the weights left in the CPU buffer are mapped as one span of the file, from the first to
//            the last of them in llama.cpp's tensor order (the order llama-quantize writes: the tensors outside the
//            blocks by name, then block by block, each by name): a moved weight before the first or after the last
//            is not mapped (unmapped_bytes).
// Flash attention "auto" is on (the CPU runs the fused op); off with a quantized V cache is refused, as
// llama.cpp refuses it. The parallel sequences each keep their own cache of the context (llama.cpp's -c is
// parallel x context).
// Source: llama.cpp as bundled with node-llama-cpp 3.21.1: src/llama-context.cpp (llama_context constructor,
// sched_reserve, graph_reserve, output_reserve, llama_init_from_model), src/llama-graph.cpp (the KQ mask),
// ggml/src/ggml-cpu/repack.cpp (ggml_repack_get_optimal_repack_type), ggml/src/ggml-cpu/amx (amx.cpp supports_op,
// mmq.cpp ggml_backend_amx_get_alloc_size), src/llama-model-loader.cpp (select_weight_buft, get_mapping_range,
// weight_name_comparer); checked against the buffers llama.cpp allocates for generated models
// (tests/llamacpp/check-runtime, docs/accuracy.md).
// Documented in docs/model.md, "Runtime buffers".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/model.hpp"
#include "edgeplan/util/result.hpp"

namespace edgeplan {

// The CPU features llama.cpp's repack looks at (a device profile's [runtime] repack).
enum class RepackIsa { none, x86_avx2, x86_avx512, x86_amx, arm_dotprod, arm_i8mm };
// "none", "x86-avx2", "x86-avx512", "x86-amx", "arm-dotprod", "arm-i8mm"
std::vector<std::string> repack_isa_names();
std::optional<RepackIsa> find_repack_isa(std::string_view name);
std::string_view to_string(RepackIsa isa);

// How a device's runtime is counted (a device profile's [runtime] section).
struct RuntimeSpec {
  bool buffers = true;                  // llama.cpp's compute, output and repack buffers; false: none (the chapter)
  RepackIsa repack = RepackIsa::none;   // which weights llama.cpp repacks on this CPU
};

enum class FlashAttn { automatic, on, off };
std::optional<FlashAttn> find_flash_attn(std::string_view name);  // "auto", "on", "off"

// The runtime settings a user changes (llama.cpp's defaults); the micro-batch is KvCacheSettings::ubatch_tokens.
struct RuntimeOptions {
  FlashAttn flash_attn = FlashAttn::automatic;  // -fa
  std::uint32_t parallel = 1;                   // -np: sequences, each with its own cache of the context
  bool mmap = true;                             // --no-mmap: false
};

struct RuntimeBuffers {
  bool flash_attn = true;     // as resolved
  double compute_bytes = 0;
  double output_bytes = 0;
  double repack_bytes = 0;    // the repack buffer
  double amx_bytes = 0;       // the AMX buffer (x86-amx)
  double unmapped_bytes = 0;  // with mmap: moved weights outside the mapped span
  double added_bytes = 0;     // what these add to weights + KV: compute + output, + repack + amx - unmapped with
                              // mmap, + amx - the weights it holds without
};

// Whether flash attention runs; an error when it is off and V is quantized (llama.cpp refuses the context).
Result<bool> flash_attn_on(FlashAttn f, const KvCacheType& t);

// Where llama.cpp puts m's weights stored as ft on isa: the buffers beside the CPU's own.
struct WeightBuffers {
  double repack_bytes = 0;  // the repack buffer: as many bytes as the weights it holds
  double amx_bytes = 0;     // the AMX buffer
  double amx_weights = 0;   // the bytes the weights in the AMX buffer have in the file
  double unmapped_bytes = 0;  // moved weights before the first or after the last one the CPU buffer keeps
};
WeightBuffers weight_buffers(const ModelSpec& m, const FileType& ft, RepackIsa isa);

// The buffers for a context of context_tokens per sequence; all zero when spec.buffers is false. Requires vocab
// for the logits (a model without one counts none).
Result<RuntimeBuffers> runtime_buffers(const ModelSpec& m, const FileType& ft, const KvCacheType& t,
                                       std::uint64_t context_tokens, const KvCacheSettings& s, const RuntimeSpec& spec,
                                       const RuntimeOptions& o);

// What the KV planner (plan_kv, max_context) takes off memory - reserved so that one sequence's cache gets its
// share: the weights and the buffers, then 1/parallel of what is left for each sequence. At parallel 1 it is
// weights + buffers.
double sequence_fixed_bytes(double memory_bytes, double reserved_bytes, double weight_bytes, const RuntimeBuffers& b,
                            std::uint32_t parallel);

// The KV cache of every sequence at a context of context_tokens each: parallel x kv_cache_bytes (each sequence
// keeps its own cache of the context), what the memory stacks of kv and report draw beside the weights.
double sequences_cache_bytes(const ModelSpec& m, const KvCacheType& t, std::uint64_t context_tokens,
                             const KvCacheSettings& s, std::uint32_t parallel);

}  // namespace edgeplan
