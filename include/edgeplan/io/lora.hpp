// A LoRA adapter read from a GGUF file (general.type = "adapter", adapter.type = "lora"): the lora_a
// [d_in x rank] / lora_b [rank x d_out] pairs and their bytes, for core/lora.hpp. Layout: llama.cpp's
// convert_lora_to_gguf.py (https://github.com/ggml-org/llama.cpp/blob/master/convert_lora_to_gguf.py).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "edgeplan/core/lora.hpp"
#include "edgeplan/util/result.hpp"
#include "edgeplan/io/gguf.hpp"

namespace edgeplan::io {

struct GgufLora {
  std::vector<LoraMatrix> matrices;  // one per lora_a / lora_b pair, in file order
  std::optional<double> alpha;       // adapter.lora.alpha, when present
};

// Fails, naming `display`, when the file is not a LoRA adapter or a lora_a has no matching lora_b.
Result<GgufLora> read_lora_adapter(const GgufFile& f, const std::string& display);

}  // namespace edgeplan::io
