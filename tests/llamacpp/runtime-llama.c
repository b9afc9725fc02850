// Ground-truth driver for check-runtime: the buffers llama.cpp allocates for a context, read from its own log
// (the prebuilt libraries of node-llama-cpp 3.21.1; llama.h of that release).
//
//   runtime-llama MODEL.gguf N_CTX TYPE_K TYPE_V N_UBATCH FLASH_ATTN N_SEQ MMAP
//       Loads the model on the CPU (MMAP 1 or 0: llama_model_params.load_mode mmap or none), creates a context with n_ctx N_CTX
//       (llama.cpp's -c: all sequences together), those cache types, n_batch 2048 and n_ubatch N_UBATCH (its
//       defaults), FLASH_ATTN on|off|auto and n_seq_max N_SEQ, and prints one line
//         kv BYTES compute BYTES output BYTES repack BYTES model BYTES n_ctx N
//       the sizes llama.cpp logs as "KV buffer size" (src/llama-kv-cache.cpp), "compute buffer size" and
//       "output buffer size" (src/llama-context.cpp, sched_reserve and the constructor) and "model buffer size"
//       (src/llama-model.cpp; CPU_REPACK's line is the repack buffer, AMX's the amx buffer printed last, the others
//       the model), each summed over
//       buffers and converted from the MiB it prints with two decimals (so to within 5,243 bytes), then
//         rs BYTES
//       the recurrent-state buffer of a hybrid model (the one llama.cpp logs as "RS buffer size",
//       src/llama-memory-recurrent.cpp) to the byte: the size of the buffer allocated just before that line; 0
//       for a model without state layers, and
//         amx BYTES
//       the AMX buffer (ggml-cpu/amx: on a CPU with AMX, the sapphirerapids build of ggml-cpu), 0 without.
// Exit 0 on success; 1 with a message on stderr otherwise.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"
#include "llama.h"

#include "load_backends.h"

static double g_kv, g_output, g_repack, g_model, g_amx;

static double g_sched;  // the compute buffer to the byte: what the scheduler last reported

// llama-context.cpp (sched_reserve) reads the compute buffer's size through this ggml-backend function after
// reserving the worst-case graph: keep the figure, then return it.
size_t ggml_backend_sched_get_buffer_size(ggml_backend_sched_t sched, ggml_backend_t backend) {
  typedef size_t (*size_fn)(ggml_backend_sched_t, ggml_backend_t);
  static size_fn real = NULL;
  if (!real) real = (size_fn)dlsym(RTLD_NEXT, "ggml_backend_sched_get_buffer_size");
  const size_t size = real(sched, backend);
  g_sched = (double)size;
  return size;
}

static double g_rs;          // the recurrent-state buffer to the byte
static double g_last_alloc;  // the buffer ggml_backend_alloc_ctx_tensors_from_buft allocated last

// llama_memory_recurrent allocates its r and s tensors through this ggml-alloc function and then logs the
// buffer's size in MiB: keep the size of each buffer, then return it.
ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context* ctx, ggml_backend_buffer_type_t buft) {
  typedef ggml_backend_buffer_t (*alloc_fn)(struct ggml_context*, ggml_backend_buffer_type_t);
  static alloc_fn real = NULL;
  if (!real) real = (alloc_fn)dlsym(RTLD_NEXT, "ggml_backend_alloc_ctx_tensors_from_buft");
  ggml_backend_buffer_t buf = real(ctx, buft);
  g_last_alloc = buf ? (double)ggml_backend_buffer_get_size(buf) : 0;
  return buf;
}

static int fail(const char* what) {
  fprintf(stderr, "runtime-llama: %s\n", what);
  return 1;
}

// The MiB figure after " = " on a line holding `what`, added to *sum.
static void take(const char* text, const char* what, double* sum) {
  const char* at = strstr(text, what);
  if (!at) return;
  const char* eq = strstr(at, " = ");
  if (eq) *sum += atof(eq + 3) * 1024.0 * 1024.0;
}

static void capture(enum ggml_log_level level, const char* text, void* user) {
  (void)user;
  if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
  take(text, " KV buffer size", &g_kv);
  take(text, " output buffer size", &g_output);
  if (strstr(text, " RS buffer size")) g_rs += g_last_alloc;
  if (strstr(text, "model buffer size")) {
    take(text, "model buffer size", strstr(text, "CPU_REPACK") ? &g_repack : strstr(text, " AMX ") ? &g_amx : &g_model);
  }
}

static enum ggml_type type_named(const char* name) {
  for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
    const char* n = ggml_type_name((enum ggml_type)t);
    if (n && strcmp(n, name) == 0) return (enum ggml_type)t;
  }
  return GGML_TYPE_COUNT;
}

int main(int argc, char** argv) {
  if (argc < 9) return fail("usage: runtime-llama MODEL.gguf N_CTX TYPE_K TYPE_V N_UBATCH on|off|auto N_SEQ MMAP");
  const enum ggml_type k = type_named(argv[3]), v = type_named(argv[4]);
  if (k == GGML_TYPE_COUNT || v == GGML_TYPE_COUNT) return fail("unknown cache type");
  llama_log_set(capture, NULL);
  load_backends();
  struct llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  mp.load_mode = atoi(argv[8]) != 0 ? LLAMA_LOAD_MODE_MMAP : LLAMA_LOAD_MODE_NONE;
  struct llama_model* m = llama_model_load_from_file(argv[1], mp);
  if (!m) return fail("llama.cpp could not load the model");
  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = (uint32_t)atoi(argv[2]);
  cp.n_ubatch = (uint32_t)atoi(argv[5]);
  cp.n_seq_max = (uint32_t)atoi(argv[7]);
  cp.type_k = k;
  cp.type_v = v;
  cp.flash_attn_type = strcmp(argv[6], "on") == 0    ? LLAMA_FLASH_ATTN_TYPE_ENABLED
                       : strcmp(argv[6], "off") == 0 ? LLAMA_FLASH_ATTN_TYPE_DISABLED
                                                     : LLAMA_FLASH_ATTN_TYPE_AUTO;
  struct llama_context* c = llama_init_from_model(m, cp);
  if (!c) return fail("llama.cpp refused the context");
  printf("kv %.0f compute %.0f output %.0f repack %.0f model %.0f n_ctx %u rs %.0f amx %.0f\n", g_kv, g_sched, g_output,
         g_repack, g_model, llama_n_ctx(c), g_rs, g_amx);
  llama_free(c);
  llama_model_free(m);
  return 0;
}
