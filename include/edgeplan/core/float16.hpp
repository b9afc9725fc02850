// IEEE 754 half precision (fp16) and bfloat16 <-> fp32 conversions, for reading F16 / BF16 tensors and for
// the fp16 scales of ggml's Q8_0 and Q4_0 blocks. Round to nearest even, as numpy, ggml and safetensors
// writers do; NaN stays NaN, overflow goes to infinity.
#pragma once

#include <cstdint>

namespace edgeplan {

float f16_to_f32(std::uint16_t h);
std::uint16_t f32_to_f16(float f);
float bf16_to_f32(std::uint16_t b);
std::uint16_t f32_to_bf16(float f);

}  // namespace edgeplan
