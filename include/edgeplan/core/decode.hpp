// Bandwidth-bound decode: every generated token reads all weights (and, at context c, c tokens of KV
// cache) from DRAM once. time/token = max(bytes_read / (bandwidth x utilization), compute) + per_token_overhead,
// where compute is the token's matmuls at the device's one-token rates by weight type, and its attention over the
// cached context at the one-token attention rate where given ([decode]: decode_compute_s), or else at its prefill rate (prefill of a 1-token prompt), where known: a device whose compute is slow for its
// bandwidth (a few CPU cores on fast memory, a slow kernel for the weight type) decodes at its compute rate, the
// roofline's other bound.
// Source: reference chapter section 7.2 (memory.py); the overhead term follows the llama.cpp
// measurements in docs/accuracy.md. Documented in docs/model.md, section "decode".
#pragma once

#include "edgeplan/core/device.hpp"

namespace edgeplan {

struct DecodeInputs {
  double weight_bytes = 0;       // weights read per token
  double kv_bytes = 0;           // KV cache read per token (context x KV bytes per token); 0 ignores it
  double compute_s = 0;          // compute-bound time of the token's matmuls, s; 0 ignores it
};

struct DecodeResult {
  double bytes_per_token = 0;    // weights + KV read per token
  double ceiling_tok_per_s = 0;  // bandwidth x utilization / bytes_per_token (no overhead)
  double s_per_token = 0;        // max(bytes / effective bandwidth, compute_s) + per-token overhead
  double tok_per_s = 0;          // 1 / s_per_token
};

DecodeResult decode(const DeviceSpec& device, const DecodeInputs& in);

// The compute-bound time of one decoded token's matmuls at `rates`: every 2-D weight matrix the token multiplies
// (token_matmul_weights: the blocks' matrices, expert stacks at used / experts, and the output matrix: token_embd
// when tied; not an untied token_embd or per-layer embeddings, which a token looks up one row of; in a GGUF file's
// own types for its format) at 2 FLOPs per weight and its type's rate, a type without one at the slowest rate
// given. Without a tensor list: 2 x matmul_params(m) at the file type's base type. Zero when `rates` gives no
// matmul rate. Where `rates` gives an attention rate, plus the token's attention over `context_tokens` cached tokens
// (decode_attention_flops) at that rate.
double decode_compute_s(const DecodeRates& rates, const ModelSpec& m, const FileType& ft, std::uint64_t context_tokens);

// The one-token rate decode_compute_s runs a matrix of ggml type `type` at: its own, else the slowest `rates` gives
// (slowest_decode_rate; 0 when it gives none); `own` says which.
struct TypeRate {
  double flops_per_s = 0;
  bool own = false;
};
TypeRate decode_type_rate(const DecodeRates& rates, std::string_view type);
double slowest_decode_rate(const DecodeRates& rates);

// Decode's time for a token's work before the overhead: the larger of `bytes` over `bandwidth_bytes_per_s` (already
// times utilization) and `compute_s`.
double decode_work_s(double bytes, double bandwidth_bytes_per_s, double compute_s);

// The per-token overhead a measured run of a decoded token's weight matrices implies (`bench`): the run's time less
// decode_work_s for the same work, never below zero, times `scale` (a run over some of a model's layers: the
// model's layers over the run's).
double measured_overhead_s(double run_s, double bytes, double bandwidth_bytes_per_s, double compute_s, double scale);

// FLOPs of one decoded token's attention with `context_tokens` tokens in the cache: in every attention layer, each
// query head's dot products with the keys it sees and the weighted sum of their values, 2 x head_dim FLOPs each per
// key: 4 x heads x head_dim x keys, the keys being the context (a sliding layer's at most its window). llama.cpp
// skips the masked cells of the cache (ggml_compute_forward_flash_attn_ext_f16_one_chunk), so padding costs nothing.
double decode_attention_flops(const ModelSpec& m, std::uint64_t context_tokens);

// Time to first token: the prompt's prefill and one decode step (the one definition of `ttft_s`).
double ttft_s(double prefill_s, double decode_s_per_token);

// Draft cost ratio for speculative decoding: the draft's decode time per token over the target's on `device`
// (bytes and per-token overhead alike, so a fixed overhead makes a small draft relatively dearer). Without a
// device, bytes over bytes: what any device without per-token overhead gives.
double spec_draft_cost(const DeviceSpec* device, double draft_bytes, double target_bytes);

}  // namespace edgeplan
