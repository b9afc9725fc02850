// Compute-bound prefill: the prompt's tokens go through the weight matrices together, so prefill is
// limited by matmul throughput, not bandwidth.
//   FLOPs(S) = 2 x S x matmul_params + 2 x S x (S + 1) x attention layers x heads x head_dim
// (2 FLOPs per multiply-add over the weight matrices for every token; causal attention QK^T and AV at
// position i cost 4 x i x heads x head_dim per layer, summed over i = 1..S). The LM head runs once, for the
// last token, and is left out.
//   time = FLOPs / (peak_flops x efficiency);  tok/s = S / time
// (efficiency for float weights, quantized_efficiency for quantized ones: llama-bench pp512 on Apple GPUs runs
// Q8_0 / Q4_0 about 11% slower than F16.)
// Source: the walkthrough's FLOP table (QKV 6SD^2, attention output 2SD^2, FFN 16SD^2 for MHA) generalised to
// GQA; efficiency fitted to llama-bench pp512 (docs/accuracy.md). Documented in docs/model.md, "prefill".
#pragma once

#include <cstdint>

#include "edgeplan/core/model.hpp"

namespace edgeplan {

struct PrefillSpec {
  double peak_flops = 0;   // peak matmul throughput of the unit the runtime prefills on, FLOP/s
  double efficiency = 1;   // achieved fraction of the peak with float weights (F16, BF16, F32), (0, 1]
  double quantized_efficiency = 1;  // the same with quantized weights (dequantization costs), (0, 1]
};

// Parameters of the matrices every prompt token multiplies: the decoder blocks' weight matrices (without
// token_embd, the output matrix and 1-D tensors; expert stacks at used / experts) when the tensor list is
// known, else the stated params.
double matmul_params(const ModelSpec& m);

double prefill_flops(const ModelSpec& m, std::uint64_t prompt_tokens);

struct PrefillResult {
  double flops = 0;      // for the whole prompt
  double seconds = 0;    // time to process it (time to first token, without the first decode step)
  double tok_per_s = 0;  // prompt tokens per second
};

// Prefill of m stored as ft: quantized formats run at quantized_efficiency.
PrefillResult prefill(const PrefillSpec& unit, const ModelSpec& m, const FileType& ft, std::uint64_t prompt_tokens);
// The same from the prompt's FLOPs (prefill_flops), for callers that evaluate one model on many devices.
PrefillResult prefill(const PrefillSpec& unit, double flops, const FileType& ft, std::uint64_t prompt_tokens);

}  // namespace edgeplan
