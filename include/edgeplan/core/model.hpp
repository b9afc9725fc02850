// A model as the planners see it: the transformer's shape, and its weight bytes in a given format.
// Weight bytes come, in order of preference, from a size the profile states for that format (a measured
// file, or the reference chapter's 5.184 bits/weight for Q4_K_M), from llama.cpp's per-tensor rules applied
// to the model's tensor list (when the vocabulary is known), or from params x the format's effective bits.
// Documented in docs/model.md, section "Weight sizes".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "edgeplan/core/formats.hpp"
#include "edgeplan/core/result.hpp"

namespace edgeplan {

// A size the profile states for one format; exactly one of the two is set.
struct FormatSize {
  std::optional<double> bits_per_weight;  // bits per parameter, metadata included
  std::optional<double> bytes;            // total weight bytes
};

// How lora.hpp sizes a LoRA target: by its real shape, or as the reference chapter counts it.
enum class LoraShapes { real, chapter };

struct ModelSpec {
  std::string name;
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
  std::map<std::string, FormatSize> formats;  // stated sizes, keyed by file type name as given
  LoraShapes lora_shapes = LoraShapes::real;  // lora_shapes = "chapter" in the profile: the chapter's sizes
};

// One weight tensor: name as in GGUF, role for the type rules, layer (-1 outside the blocks), shape.
struct TensorShape {
  std::string name;
  TensorRole role;
  int layer;
  std::uint64_t row_length;  // ne0, the contiguous dimension
  std::uint64_t rows;        // product of the other dimensions
};

// The tensors of a llama-style decoder (Llama, Mistral, Qwen2 and relatives). Requires vocab.
std::vector<TensorShape> llama_tensors(const ModelSpec& m);

// Parameter count: from the tensor list when the vocabulary is known, else as stated.
std::optional<double> param_count(const ModelSpec& m);

// How a weight size was obtained.
enum class SizeSource { stated_bytes, stated_bits, tensor_rules, params_times_bits };
const char* to_string(SizeSource s);

struct WeightSize {
  double bytes = 0;            // total weight bytes
  double bits_per_weight = 0;  // bytes x 8 / params
  SizeSource source = SizeSource::params_times_bits;
};

// Weight bytes of model m stored as file type ft. Fails when the model states neither a size for ft,
// nor a vocabulary, nor a parameter count.
Result<WeightSize> weight_size(const ModelSpec& m, const FileType& ft);

// Effective bits per weight of a file type on a typical dense model: the per-tensor rules applied to the
// weight matrices of Llama-2-7B's shape (norm vectors left out, so F16 is exactly 16). Used when only a
// parameter count is known.
double effective_bits_per_weight(const FileType& ft);

}  // namespace edgeplan
