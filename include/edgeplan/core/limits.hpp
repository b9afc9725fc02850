// Bounds of the whole numbers edgeplan reads from profiles, model files (config.json, GGUF metadata), request
// files and options. Each bound is far above every released model or device (the largest dense models have
// 126 layers, hidden 16384, FFN 53248, vocabularies of 262144 and contexts of 10M tokens; the largest mixtures
// 384 experts) and low enough that the products the planners form stay exact: the largest tensor, an expert
// stack of hidden x expert_ffn x experts weights, is at most 2^20 x 2^20 x 2^16 = 2^56 elements, below 2^64.
// Readers refuse a value outside its bound (an error naming the bound) before any narrowing conversion.
// Documented in docs/profiles.md, "Ranges of whole numbers".
#pragma once

#include <cstdint>

namespace edgeplan {

// Allowed values of a whole number: min <= v <= max.
struct CountRange {
  std::uint32_t min = 1;
  std::uint32_t max = 0;
};

namespace limits {

inline constexpr std::uint32_t kLayers = 1u << 16;          // decoder blocks
inline constexpr std::uint32_t kWidth = 1u << 20;           // hidden, ffn, expert_ffn, MLA ranks
inline constexpr std::uint32_t kHeads = 1u << 16;           // attention heads, key/value heads
inline constexpr std::uint32_t kHeadDim = 1u << 16;         // width of one head (and its rope / nope / value parts)
inline constexpr std::uint32_t kVocab = 1u << 24;           // vocabulary entries
inline constexpr std::uint32_t kExperts = 1u << 16;         // routed or shared experts
inline constexpr std::uint32_t kContextTokens = 1u << 30;   // a model's trained context, a sliding window
inline constexpr std::uint32_t kRequestTokens = 1'000'000'000;  // prompt or output tokens of one request
inline constexpr std::uint32_t kPromptTokens = 1u << 24;    // tokens of one prefill (--prompt, --seq, graph seq)
inline constexpr std::uint32_t kPageKiB = 1u << 20;         // a storage page or readahead window: 1 GiB
inline constexpr std::uint32_t kLoraRank = 1u << 16;        // rank of a LoRA adapter
// Weight bytes of one model in one format: 1 EiB. Shapes within the bounds above can still multiply past it
// (2^16 layers of 2^56-weight expert stacks); weight_size refuses them, so byte and page counts stay below 2^64.
inline constexpr double kWeightBytes = 0x1p60;

}  // namespace limits

// The ranges of the model shape counts, from 1 (or `min`) to their bound.
inline constexpr CountRange layers_range{1, limits::kLayers};
inline constexpr CountRange width_range{1, limits::kWidth};
inline constexpr CountRange heads_range{1, limits::kHeads};
inline constexpr CountRange head_dim_range{1, limits::kHeadDim};
inline constexpr CountRange vocab_range{1, limits::kVocab};
inline constexpr CountRange experts_range{2, limits::kExperts};     // routed experts: a mixture has 2 or more
inline constexpr CountRange used_range{1, limits::kExperts};        // experts active per token
inline constexpr CountRange optional_experts_range{0, limits::kExperts};  // shared experts, 0 for none
inline constexpr CountRange optional_width_range{0, limits::kWidth};      // q_lora_rank, 0 for a plain attn_q
inline constexpr CountRange dense_layers_range{0, limits::kLayers};
inline constexpr CountRange context_range{1, limits::kContextTokens};
inline constexpr CountRange pattern_range{2, limits::kLayers};      // sliding-window pattern

}  // namespace edgeplan
