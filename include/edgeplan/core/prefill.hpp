// Compute-bound prefill: the prompt's tokens go through the weight matrices together, so prefill is
// limited by matmul throughput, not bandwidth.
//   FLOPs(S) = 2 x S x matmul_params + 2 x S x (S + 1) x attention layers x heads x head_dim
// (2 FLOPs per multiply-add over the weight matrices for every token; causal attention QK^T and AV at
// position i cost 4 x i x heads x head_dim per layer, summed over i = 1..S). The LM head runs once, for the
// last token, and is left out.
//   time = FLOPs / (peak_flops x efficiency);  tok/s = S / time
// (efficiency for float weights, quantized_efficiency for quantized ones: llama-bench pp512 on Apple GPUs runs
// Q8_0 / Q4_0 about 11% slower than F16. A quantized ggml type may have an efficiency of its own, which overrides
// quantized_efficiency for the matrices stored in it: llama.cpp's CPU backend runs each type's own integer dot
// product, ggml_vec_dot_q4_0_q8_0, ..._q8_0_q8_0, ..._q4_K_q8_K in ggml/src/ggml-cpu/arch/*/quants.c, or its AMX
// GEMMs in ggml-cpu/amx/mmq.cpp, whose speeds differ 1.6x between Q4_0 and Q8_0 on an AVX2 core and 2x between
// Q4_K and Q6_K on AMX. Each matrix runs at its own type's efficiency under the file type's rules (a Q4_K_M file
// keeps attn_v and ffn_down of some layers in Q6_K), so the weights' efficiency is the blend
//   efficiency = W / sum over types (W_type / efficiency_type)
// W the prompt matrices' weights, W_type those stored in each type: the types' times add up.)
// With an attention_efficiency, the attention term runs at it instead (a runtime's attention over the KV cache
// runs in fp16/fp32 whatever the weights, llama.cpp's CPU flash attention at a fraction of its quantized GEMMs'
// rate; bench measures it):
//   time = (FLOPs - attention) / (peak_flops x efficiency) + attention / (peak_flops x attention_efficiency)
// Source: the walkthrough's FLOP table (QKV 6SD^2, attention output 2SD^2, FFN 16SD^2 for MHA) generalised to
// GQA; efficiency fitted to llama-bench pp512 (docs/accuracy.md). Documented in docs/model.md, "prefill".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "edgeplan/core/model.hpp"

namespace edgeplan {

// The quantized ggml types a [prefill] may give an efficiency of its own (docs/profiles.md, "Device").
inline constexpr std::array<std::string_view, 10> kPrefillTypes{"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0",
                                                                "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"};

struct PrefillSpec {
  double peak_flops = 0;   // peak matmul throughput of the unit the runtime prefills on, FLOP/s
  double efficiency = 1;   // achieved fraction of the peak with float weights (F16, BF16, F32), (0, 1]
  double quantized_efficiency = 1;  // the same with quantized weights (dequantization costs), (0, 1]
  // Per ggml weight type (kPrefillTypes, same order): an efficiency overriding quantized_efficiency, (0, 1].
  std::array<std::optional<double>, kPrefillTypes.size()> type_efficiency{};
  // The attention term's own efficiency, (0, 1]; unset: attention runs at the weights' efficiency.
  std::optional<double> attention_efficiency{};
};

// Index of a ggml type name in kPrefillTypes; nullopt for a type without an efficiency of its own.
std::optional<std::size_t> prefill_type_index(std::string_view ggml_type);

// The efficiency matrices stored as `type` run at: efficiency for float ones, the type's own where given, else
// quantized_efficiency.
double prefill_efficiency(const PrefillSpec& unit, const GgmlType& type);
// The efficiency of a prompt's matrices together (matmul_weights): their weights over the sum of each type's weights
// over its efficiency. Without weights (a model of no stated size), the first type's.
double prefill_efficiency(const PrefillSpec& unit, std::span<const TypedWeights> matmuls);

// Parameters of the matrices every prompt token multiplies: the decoder blocks' weight matrices (prompt_matmul;
// expert stacks at used / experts) when the tensor list is known, else the stated params.
double matmul_params(const ModelSpec& m);

double prefill_flops(const ModelSpec& m, std::uint64_t prompt_tokens);
// The attention term of prefill_flops: 2 x S x (S + 1) x attention layers x heads x head_dim.
double attention_flops(const ModelSpec& m, std::uint64_t prompt_tokens);

struct PrefillResult {
  double flops = 0;      // for the whole prompt
  double seconds = 0;    // time to process it (time to first token, without the first decode step)
  double tok_per_s = 0;  // prompt tokens per second
};

// Prefill of m stored as ft, its matrices at their types' efficiencies (matmul_weights(m, ft)).
PrefillResult prefill(const PrefillSpec& unit, const ModelSpec& m, const FileType& ft, std::uint64_t prompt_tokens);
// The same from the prompt's FLOPs (prefill_flops), their attention term (attention_flops) and the matrices' types
// (WeightSize::matmuls), for callers that evaluate one model on many devices.
PrefillResult prefill(const PrefillSpec& unit, double flops, double attention, std::span<const TypedWeights> matmuls,
                      std::uint64_t prompt_tokens);

}  // namespace edgeplan
