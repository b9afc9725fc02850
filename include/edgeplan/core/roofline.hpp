// The roofline of decode and prefill on a device (Williams, Waterman, Patterson, "Roofline: an insightful visual
// performance model for multicore architectures", CACM 52(4), 2009): a kernel that does F FLOPs over B bytes of
// DRAM traffic has operational intensity I = F / B and attains at most min(peak FLOP/s, I x peak bandwidth).
//   decode, one token at context c:  F = prefill_flops(m, c + 1) - prefill_flops(m, c) + the LM head's 2 x hidden
//                                        x vocab (the one more token's matmuls and attention over c + 1 positions)
//                                    B = decode's bytes_per_token (the weights a token reads and its KV cache)
//   prefill of S tokens:             F = prefill_flops(m, S)
//                                    B = ceil(S / ubatch) x weight bytes (the runtime reads every weight once per
//                                        micro-batch; activations and the cache it writes are left out)
//   achieved FLOP/s = F / the time edgeplan models for it (decode's s_per_token, the prefill estimate's seconds)
//   the device's roofs: its peak DRAM bandwidth, and each [units.*] matmul peak (int8, fp16; one roof where a
//   unit's are equal), else the [prefill] peak; a roof turns flat at the ridge, I = peak / bandwidth.
// Documented in docs/model.md, "roofline".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edgeplan/core/decode.hpp"
#include "edgeplan/core/device.hpp"
#include "edgeplan/core/model.hpp"

namespace edgeplan {

// The work of one phase and the time edgeplan models for it.
struct RooflineWork {
  double flops = 0;
  double bytes = 0;    // DRAM traffic
  double seconds = 0;
};
double operational_intensity(const RooflineWork& w);  // FLOP per byte: flops / bytes
double achieved_flops_per_s(const RooflineWork& w);   // flops / seconds

// FLOPs of decoding one token after context_tokens tokens.
double decode_token_flops(const ModelSpec& m, std::uint64_t context_tokens);
// One decoded token at context_tokens, as decode (decode.hpp) models it in `d`.
RooflineWork decode_work(const ModelSpec& m, std::uint64_t context_tokens, const DecodeResult& d);
// The prefill of a prompt of prompt_tokens costing prompt_flops (prefill_flops), run in micro-batches of
// ubatch_tokens over weights of weight_bytes, taking `seconds`.
RooflineWork prefill_work(double prompt_flops, std::uint64_t prompt_tokens, std::uint32_t ubatch_tokens,
                          double weight_bytes, double seconds);

// Where a device's compute roofs come from.
enum class RoofSource {
  units,    // the matmul peaks of its [units.*]
  prefill,  // the peak of its [prefill] (the profile has no [units])
  none,     // neither: the bandwidth roof alone
};

struct ComputeRoof {
  std::string name;        // "gpu fp16", "npu int8", "gpu int8 = fp16" (equal peaks: one roof), "[prefill]"
  double flops_per_s = 0;  // peak (int8 ops count as FLOPs)
};

struct Roofs {
  double bandwidth_bytes_per_s = 0;  // peak DRAM bandwidth
  RoofSource source = RoofSource::none;
  std::vector<ComputeRoof> compute;  // units in unit_kinds() order, int8 before fp16 (one roof when they are equal)
};
Roofs device_roofs(const DeviceSpec& d);

// min(peak, intensity x bandwidth), FLOP/s.
double attainable_flops_per_s(double intensity, double bandwidth_bytes_per_s, double peak_flops_per_s);
// Where the roof turns flat: peak / bandwidth, FLOP per byte.
double ridge_intensity(double bandwidth_bytes_per_s, double peak_flops_per_s);

}  // namespace edgeplan
