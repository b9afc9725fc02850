// Quantization formats: the ggml tensor types (exact bytes per block) and the llama.cpp file types
// ("mixes" such as Q4_K_M, every llama-quantize target) with the per-tensor type rules of llama.cpp's
// quantizer. Source: llama.cpp as bundled with node-llama-cpp 3.21.1 (release tag v0.4.0): ggml's type traits
// (ggml/src/ggml.c, type_traits), the file types (include/llama.h, llama_ftype; tools/quantize/quantize.cpp,
// QUANT_OPTIONS) and src/llama-quant.cpp (llama_ftype_get_default_type, llama_tensor_get_type_impl,
// tensor_type_fallback, tensor_requires_imatrix). The test stage scripts/llama-check compares every figure
// with that llama.cpp. Documented in docs/model.md, section "Weight sizes".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace edgeplan {

// A ggml tensor type with its GGUF id and block layout.
struct GgmlType {
  std::string_view name;   // as ggml prints it: "Q4_K", "F16", ...
  std::uint32_t id;        // type id stored in GGUF tensor infos
  std::uint32_t block;     // weights per block
  std::uint32_t bytes;     // bytes per block
  [[nodiscard]] double bits_per_weight() const { return 8.0 * bytes / block; }
};

// All ggml types edgeplan knows (the table in docs/model.md, "Weight sizes"), in id order.
std::span<const GgmlType> ggml_types();
const GgmlType* find_ggml_type(std::string_view name);  // case-insensitive; nullptr when unknown
const GgmlType* find_ggml_type_id(std::uint32_t id);     // nullptr when unknown

// Bytes of a tensor of `row_length` x `rows` weights in type t; nullopt when the row length is not a
// multiple of the type's block (ggml cannot store it).
std::optional<std::uint64_t> tensor_bytes(const GgmlType& t, std::uint64_t row_length, std::uint64_t rows);

// A llama.cpp file type: the format a user asks for with --quant.
struct FileType {
  std::string_view name;       // "Q4_K_M"
  std::string_view base;       // ggml type of most 2-D weights (llama_ftype_get_default_type)
  std::uint32_t gguf_id;       // general.file_type value (llama_ftype)
  bool needs_imatrix = false;  // llama-quantize refuses it without an importance matrix; costed as made with one
  bool quantize_target = true; // llama-quantize makes it (NVFP4 files come from elsewhere: costed from the file only)
};

// Every llama.cpp file type, llama-quantize's targets in the order of its list, then the others.
std::span<const FileType> file_types();
bool is_quantized(const GgmlType& t);   // ggml_is_quantized: a block type (not F32, F16, BF16, F64 or the integers)
bool is_quantized(const FileType& ft);  // false for F32, F16 and BF16
const FileType* find_file_type(std::string_view name);  // case-insensitive; nullptr when unknown
const FileType* find_file_type_id(std::uint32_t gguf_id);  // by general.file_type; nullptr when unknown

// What a tensor is, for the per-tensor rules.
// attn_qkv is Phi-3's fused projection and attn_kv_b DeepSeek's latent-to-KV projection (llama.cpp treats both
// as attn_v); router is ffn_gate_inp (kept F32); other is a matrix the rules leave at the base type (MLA's
// other projections).
enum class TensorRole {
  token_embd, output, attn_q, attn_k, attn_v, attn_qkv, attn_kv_b, attn_output, ffn_gate, ffn_up, ffn_down,
  norm, bias, rope_freqs, router, other
};

// Shape facts of the model that the rules look at.
struct MixContext {
  std::uint32_t layers = 0;       // n in use_more_bits(i, n)
  std::uint32_t heads = 0;        // query heads
  std::uint32_t kv_heads = 0;     // key/value heads
  std::uint32_t experts = 0;      // routed experts (0 = dense)
  bool tied_embeddings = false;   // token_embd doubles as the output matrix
  bool size_70b = false;          // llama.cpp's LLM_TYPE_70B (80-layer Llama with GQA, 80-layer Qwen2): attn_v gets Q5_K
};

// llama.cpp's use_more_bits(i, n): the layers in which Q4_K_M / Q5_K_M give attn_v and ffn_down Q6_K.
bool use_more_bits(std::uint32_t layer, std::uint32_t layers);

// Layers that tensor_type treats alike: first, first + step, ... (count of them). The rules look at a layer
// only through thresholds and use_more_bits' cycle of 3.
struct LayerClass {
  std::uint32_t first = 0;  // the lowest layer of the class
  std::uint32_t count = 0;  // layers in the class
  std::uint32_t step = 1;   // 1, or 3 where use_more_bits cycles
};

// Layers 0..layers-1 in classes tensor_type treats alike, also split at `split` (a MoE's dense layers),
// in order of first layer: at most 27 classes whatever the layer count, so sizes cost O(1) in layers.
std::vector<LayerClass> layer_classes(std::uint32_t layers, std::uint32_t split);

// The ggml type llama.cpp stores a tensor in for file type ft. `layer` is ignored for non-layer tensors;
// `row_length` (weights per row) drives the fallbacks when the row is not a multiple of the type's block
// (a row no block type divides stays F16); `expert_stack` is a 3-D stack of routed experts (MXFP4_MOE).
// nullptr when llama.cpp refuses the tensor (Q1_0 of a row not a multiple of 128: no fallback is defined).
const GgmlType* tensor_type(const FileType& ft, TensorRole role, std::uint32_t layer, std::uint64_t row_length,
                            const MixContext& mix, bool expert_stack = false);

}  // namespace edgeplan
