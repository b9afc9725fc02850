// Shared by the llama.cpp drivers that write GGUF files (C and C++): the order llama.cpp's tools write tensors in,
// llama_model_loader's weight_name_comparer (src/llama-model-loader.cpp), which llama-quantize follows: by block
// ("blk.N.", those outside the blocks first), then by name. edgeplan's mapped-span model assumes it for the rules'
// tensor list (core/runtime.cpp, weight_buffers); a GGUF file's own tensors it takes in the file's order.
#pragma once

#include <stdio.h>
#include <string.h>

// The block of a tensor named "blk.N....": N; -1 for one outside the blocks.
static int llama_tensor_block(const char* name) {
  int b = -1;
  sscanf(name, "blk.%d.", &b);
  return b;
}

// Below, at or above 0 as tensor `x` comes before, with or after tensor `y`.
static int llama_tensor_order(const char* x, const char* y) {
  const int bx = llama_tensor_block(x), by = llama_tensor_block(y);
  if (bx != by) return bx < by ? -1 : 1;
  return strcmp(x, y);
}
