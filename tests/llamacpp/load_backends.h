// Shared by the llama.cpp drivers: load the CPU backends, which llama.cpp ships as separate libraries (from
// LLAMA_LIB when set; scripts/llama-check sets it), then initialise llama.cpp.
#pragma once

#include <stdlib.h>

#include "ggml-backend.h"
#include "llama.h"

static void load_backends(void) {
  const char* lib = getenv("LLAMA_LIB");
  if (lib) {
    ggml_backend_load_all_from_path(lib);
  } else {
    ggml_backend_load_all();
  }
  llama_backend_init();
}
