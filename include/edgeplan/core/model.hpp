// A model as the planners see it: the transformer's shape, and its weight bytes in a given format.
// Weight bytes come, in order of preference, from a size the profile states for that format (a measured
// file, or the reference chapter's 5.184 bits/weight for Q4_K_M), from llama.cpp's per-tensor rules applied
// to the model's tensor list (when the vocabulary is known), or from params x the format's effective bits.
// The tensor list follows llama.cpp's GGUF layout per architecture (llama, qwen2, qwen3, qwen3moe, gemma2,
// gemma3, phi3, deepseek2, smollm3, gpt-oss, lfm2, lfm2moe, granitehybrid, qwen3next, gemma3n): extra norms,
// fused projections, mixture-of-experts stacks, multi-head latent attention, and the state layers of hybrid
// models (short convolutions, Mamba-2, gated delta nets) beside their attention layers. A mixture of experts holds every expert in memory but reads only the shared tensors and the
// active experts per decoded token (active bytes). Sources: llama.cpp's tensor shapes in src/llama-arch.cpp and
// src/llama-model.cpp (https://github.com/ggml-org/llama.cpp). Documented in docs/model.md, "Weight sizes", "real".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "edgeplan/core/formats.hpp"
#include "edgeplan/util/result.hpp"

namespace edgeplan {

// Weights of one ggml type among a set of weight matrices (a prompt token's, a decoded token's).
struct TypedWeights {
  const GgmlType* type = nullptr;
  double weights = 0;  // expert stacks at used / experts (active_fraction)
};

// One weight tensor: name as in GGUF, role for the type rules, layer (-1 outside the blocks), shape. A block
// tensor stands for itself in every layer of its layer_classes() class: name and layer are the first one's.
struct TensorShape {
  std::string name;
  TensorRole role;
  int layer;
  std::uint64_t row_length;  // ne0, the contiguous dimension
  std::uint64_t rows;        // product of the other dimensions
  std::uint32_t routed_experts = 0;  // > 0: a stack of that many routed experts, of which moe->used are read
  std::uint32_t layer_count = 1;     // layers this tensor stands for (1 outside the blocks)
  bool last_layer = false;           // it stands for the last block's (a hybrid's taken to be an attention layer)
};

// Weights of t in all the layers it stands for.
double tensor_weights(const TensorShape& t);

// A block tensor's name past its "blk.N." (which llama.cpp orders within the block); another name as it is.
std::string_view in_block(std::string_view name);

// A tensor with the ggml type llama.cpp stores it in for a file type (or a GGUF file stores it in).
struct TypedTensor {
  TensorShape shape;
  const GgmlType* type;    // nullptr: llama.cpp refuses the tensor in this file type (tensor_type)
  double bytes;            // in all the layers it stands for (0 when refused)
  std::uint32_t file = 0;  // a split GGUF model's shard holding it (0: one file, or the rules' list)
};

// A size the profile states for one format; exactly one of the two is set.
struct FormatSize {
  std::optional<double> bits_per_weight;  // bits per parameter, metadata included
  std::optional<double> bytes;            // total weight bytes
  std::optional<double> active_bytes;     // bytes a decoded token reads (a MoE file); with bytes only
  // A GGUF file's own tensor types, by type: the matrices a prompt token multiplies (matmul_weights) and those a
  // decoded token multiplies (token_matmul_weights), as a profile states them or as a GGUF file's tensors give
  // them. Empty: llama.cpp's tensor rules.
  std::vector<TypedWeights> prompt_matmuls = {}, token_matmuls = {};
  // A GGUF file's tensors as it stores them, one per tensor (file_tensor_shape) in the file's order (by shard, then
  // by their data offsets), read from the file itself: a profile does not carry them. typed_tensors gives them for
  // this format in place of the rules' list (so the runtime's repack and AMX buffers take the file's types, and its
  // mapped spans the file's order). Null: llama.cpp's tensor rules. Shared: a model is copied freely (a sweep, a
  // what-if), and a file may hold a million tensors.
  std::shared_ptr<const std::vector<TypedTensor>> tensors = {};
};

// Mixture of experts: routed experts stacked per layer, of which `used` run per token.
struct MoeSpec {
  std::uint32_t experts = 0;          // routed experts per MoE layer
  std::uint32_t used = 0;             // experts active per token (top-k)
  std::uint32_t expert_ffn = 0;       // feed-forward width of one expert
  std::uint32_t shared_experts = 0;   // always-active experts of width expert_ffn (DeepSeek), fused in one stack
  std::uint32_t dense_layers = 0;     // leading layers with a dense FFN of width ffn (DeepSeek first_k_dense_replace)
};

// Multi-head latent attention (DeepSeek V2/V3): K and V come from one compressed vector per token.
struct MlaSpec {
  std::uint32_t kv_lora_rank = 0;     // width of the compressed KV vector
  std::uint32_t q_lora_rank = 0;      // width of the compressed query (0: a plain attn_q)
  std::uint32_t rope_dim = 0;         // rotary part of each query/key head (qk_rope_head_dim)
  std::uint32_t nope_dim = 0;         // non-rotary part (qk_nope_head_dim)
  std::uint32_t v_head_dim = 0;       // width of one value head
};

// Interleaved sliding-window attention (Gemma 2/3): layer i is global when i % pattern == pattern - 1.
struct SlidingWindow {
  std::uint32_t window_tokens = 0;    // tokens a sliding layer attends to
  std::uint32_t pattern = 0;          // one global layer in every `pattern`
};

// What the layers of a hybrid model keep instead of a KV cache: a short causal convolution (LFM2), a Mamba-2
// block (Granite 4.0 H), or a gated delta net (Qwen3-Next). Each keeps a constant state per sequence.
enum class StateKind { shortconv, mamba2, gated_delta_net };
const char* to_string(StateKind k);

// Hybrid models: `layers` of the model's layers keep a constant recurrent state, the others a KV cache. In
// llama.cpp's hparams (src/llama-hparams.cpp n_embd_r / n_embd_s): conv_kernel = ssm_d_conv (LFM2:
// shortconv_l_cache), inner = ssm_d_inner, state_dim = ssm_d_state, groups = ssm_n_group, heads = ssm_dt_rank.
struct StateSpec {
  StateKind kind = StateKind::shortconv;
  std::uint32_t layers = 0;       // layers with a state instead of KV (at least one layer keeps KV)
  std::uint32_t conv_kernel = 0;  // width of the causal convolution (conv_L_cache, conv_kernel, linear_conv_kernel_dim)
  std::uint32_t inner = 0;        // Mamba-2: d_inner (expand x hidden); delta net: value heads x value head width
  std::uint32_t state_dim = 0;    // Mamba-2: d_state; delta net: key head width (0 for shortconv)
  std::uint32_t groups = 0;       // Mamba-2: n_groups; delta net: key heads (0 for shortconv)
  std::uint32_t heads = 0;        // Mamba-2: heads; delta net: value heads (0 for shortconv)
};

// llama.cpp architecture names edgeplan has tensor lists for (general.architecture in GGUF).
const std::vector<std::string>& architectures();
// Every architecture the pinned llama.cpp loads: a GGUF file of one edgeplan has no tensor list for is costed by
// the generic rule (ModelSpec::generic_of; docs/model.md, "Generic architectures").
const std::vector<std::string>& llama_cpp_architectures();
// How lora.hpp sizes a LoRA target: by its real shape, or as the reference chapter counts it.
enum class LoraShapes { real, chapter };

struct ModelSpec {
  std::string name;
  std::string arch = "llama";     // one of architectures()
  // The GGUF file's own architecture when the model is costed by the generic rule: `arch` is then the base whose
  // graph stands for it (llama, granitehybrid for state layers, deepseek2 for latent attention).
  std::optional<std::string> generic_of;
  std::optional<double> params;   // parameter count as stated by the profile
  std::uint32_t layers = 0;       // decoder blocks
  std::uint32_t hidden = 0;       // embedding width
  std::uint32_t heads = 0;        // query heads
  std::uint32_t kv_heads = 0;     // key/value heads (GQA)
  std::uint32_t head_dim = 0;     // width of one head
  std::uint32_t ffn = 0;          // feed-forward width (gate/up output, down input)
  std::optional<std::uint32_t> vocab;  // vocabulary; when known the tensor list is known
  bool tied_embeddings = false;   // output matrix shared with token_embd
  bool qkv_bias = false;          // q/k/v projections carry biases (Qwen2)
  bool rope_freqs = false;        // a rope_freqs tensor of head_dim/2 floats (Llama 3.1+ rope scaling)
  std::optional<std::uint32_t> context_tokens;  // trained context length, where known
  std::optional<MoeSpec> moe;      // mixture of experts; nullopt for a dense model
  std::optional<MlaSpec> mla;      // latent attention; replaces kv_heads x head_dim in the cache
  std::optional<SlidingWindow> sliding_window;  // interleaved sliding-window layers
  std::optional<StateSpec> state;  // hybrid: layers with a constant state instead of a KV cache
  std::uint32_t kv_shared_layers = 0;  // last layers reusing an earlier layer's KV (Gemma 3n num_kv_shared_layers)
  std::uint32_t per_layer_embd = 0;    // width of Gemma 3n's per-layer embeddings (hidden_size_per_layer_input)
  std::map<std::string, FormatSize> formats;  // stated sizes, keyed by file type name as given
  std::optional<std::string> file_format;     // the file type of the GGUF file it was read from (--quant's default)
  LoraShapes lora_shapes = LoraShapes::real;  // lora_shapes = "chapter" in the profile: the chapter's sizes
  bool reference = false;  // a textbook model no runtime ships (the chapter's): fit ranks it only when named
};

// The tensors of m as llama.cpp stores them for its architecture, one per layer class (in GGUF order within a
// layer) (so the list is as long for 1e8 layers as for 100). Requires vocab.
std::vector<TensorShape> llama_tensors(const ModelSpec& m);

// Layers that keep a KV cache of their own: all but the state layers and the layers sharing another's KV.
std::uint32_t kv_layers(const ModelSpec& m);
// Layers with attention (q/k/v/o tensors): all but the state layers.
std::uint32_t attention_layers(const ModelSpec& m);

// Whether llama.cpp's graph for m keeps the last hidden state of every token as a graph output of its own
// (llm_graph_result::t_h_nextn, for a multi-token-prediction head: gpt-oss, Qwen3-Next) beside the output rows
// it takes from it; ggml-alloc never frees a graph output, so the compute buffer holds both.
bool keeps_hidden_output(const ModelSpec& m);

// Whether m's attention normalizes each query and key head before RoPE (attn_q_norm / attn_k_norm).
bool has_qk_norm(const ModelSpec& m);

// Whether layer i of m attends through a sliding window (always false without one).
bool is_sliding_layer(const ModelSpec& m, std::uint32_t layer);

// m's tensors with their types under file type ft: a GGUF file's own where m was read from a file of format ft
// (FormatSize::tensors, in the file's order, shared with m: not copied), else llama.cpp's per-tensor rules. Requires
// vocab.
std::shared_ptr<const std::vector<TypedTensor>> typed_tensors(const ModelSpec& m, const FileType& ft);
// Whether typed_tensors(m, ft) gives a GGUF file's own tensors.
bool file_tensors(const ModelSpec& m, const FileType& ft);

// A GGUF file's tensor of m by its name and dimensions (ne0 first), in the terms of llama_tensors (`listed`, m's
// list): its role that of the tensor of the same name within a block (or outside the blocks) in the list (a matrix
// the list lacks is TensorRole::other, a vector TensorRole::norm), the layer of its `blk.N.` (last_layer for the
// last block), rows the product of the dimensions past the first, an expert stack's (`_exps.`) experts its last
// dimension.
TensorShape file_tensor_shape(const ModelSpec& m, std::span<const TensorShape> listed, std::string_view name,
                              std::span<const std::uint64_t> dims);

// Whether a decoded token looks up one row of t (llama.cpp's ggml_get_rows) rather than multiplying by it: an
// untied token_embd and Gemma 3n's per-layer embeddings (per_layer_token_embd); a tied token_embd is the output
// matrix too, which every token multiplies by whole.
bool row_lookup(const ModelSpec& m, std::string_view tensor_name);

// The 2-D weights of one tensor that a decoded token reads: one row of a lookup (row_lookup; none of a GGUF file's
// table of no rows), used / experts of an expert stack, or all of it. A GGUF file's tensors through
// file_tensor_shape.
double active_fraction(const ModelSpec& m, const TensorShape& t);

// Whether every prompt token multiplies t (prefill's matrices): the decoder blocks' weight matrices, not token_embd,
// the output matrix or 1-D tensors.
bool prompt_matmul(const TensorShape& t);

// The prompt matrices' weights (prompt_matmul; their sum is matmul_params) by the type ft stores them in, a row
// per type in the order first met: a GGUF file's own types where m was read from a file of format ft
// (FormatSize::prompt_matmuls), else from the tensor list under ft's rules (typed_tensors(m, ft), given), or all of
// the stated params at ft's base type without a vocabulary.
std::vector<TypedWeights> matmul_weights(const ModelSpec& m, const FileType& ft, std::span<const TypedTensor> typed);
std::vector<TypedWeights> matmul_weights(const ModelSpec& m, const FileType& ft);

// The weights of the matrices a decoded token multiplies, by type in the order first met: every tensor of two or
// more dimensions but a row lookup (row_lookup), expert stacks at used / experts; the output matrix (or a tied
// token_embd) among them. A GGUF file's own types where m was read from a file of format ft
// (FormatSize::token_matmuls), else ft's rules. Requires vocab.
std::vector<TypedWeights> token_matmul_weights(const ModelSpec& m, const FileType& ft);

// Parameters active per decoded token as model cards count them (Mixtral 8x7B's 12.9 B): every tensor, expert
// stacks at used / experts, Gemma 3n's per-layer embeddings at one row, and token_embd whole (the bytes a token
// reads, WeightSize::active_bytes, count one row of an untied one).
std::optional<double> active_param_count(const ModelSpec& m);

// Parameter count: from the tensor list when the vocabulary is known, else as stated.
std::optional<double> param_count(const ModelSpec& m);

// Parameters that count toward a model's quality: all but Gemma 3n's per-layer embeddings, a lookup table of
// one row per token that Google leaves out of the "effective" size it names the models by (E2B, E4B).
std::optional<double> quality_param_count(const ModelSpec& m);

// How a weight size was obtained.
enum class SizeSource { stated_bytes, stated_bits, tensor_rules, params_times_bits };
const char* to_string(SizeSource s);

struct WeightSize {
  double bytes = 0;            // total weight bytes (memory)
  double active_bytes = 0;     // bytes a decoded token reads (= bytes for a dense model)
  double bits_per_weight = 0;  // bytes x 8 / params
  SizeSource source = SizeSource::params_times_bits;
  std::vector<TypedWeights> matmuls;  // matmul_weights(m, ft): the types prefill runs the prompt's matrices at
};

// The mean bits per weight of the matrices a prompt token multiplies (WeightSize::matmuls, each at its type): what a
// copy of those matrices costs in the format; the whole file's bits per weight where the types are not known.
double matmul_bits_per_weight(const WeightSize& w);

// Weight bytes of model m stored as file type ft. Fails when the model states neither a size for ft,
// nor a vocabulary, nor a parameter count.
Result<WeightSize> weight_size(const ModelSpec& m, const FileType& ft);

// Effective bits per weight of a file type on a typical dense model: the per-tensor rules applied to the
// weight matrices of Llama-2-7B's shape (norm vectors left out, so F16 is exactly 16). Used when only a
// parameter count is known.
double effective_bits_per_weight(const FileType& ft);

}  // namespace edgeplan
