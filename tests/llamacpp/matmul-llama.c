// Driver for check-speed: the rate of llama.cpp's own CPU kernel for one quantized matmul, the figure `edgeplan
// bench` measures with its kernels of the same arithmetic, so the two can be set side by side kernel by kernel.
//   matmul-llama TYPE ROWS K TOKENS THREADS REPS
// Makes a ROWS x K weight matrix of ggml type TYPE (Q4_0, Q8_0, Q4_K, Q6_K: fixed pseudo-random values quantized by
// ggml_quantize_chunk, 256 rows of them repeated: the speed does not depend on the values) and K x TOKENS fp32
// activations, places the weights as llama.cpp's model loader places them
// (select_weight_buft in llama-model-loader.cpp: the first of the CPU device's extra buffer types, then the plain
// CPU one, that supports a 512-token GGML_OP_MUL_MAT with them, tested on a zero-size buffer as
// weight_buft_supported does), so they are repacked (CPU_REPACK) or packed for AMX where llama.cpp would, and runs
// the one-node graph on the CPU backend with THREADS threads REPS + 1 times (the first a warm-up). Prints
// "BUFFER_TYPE SECONDS": the weights' buffer type and the best time.
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"

typedef void (*set_threads_fn)(ggml_backend_t, int);
typedef ggml_backend_buffer_type_t* (*extra_bufts_fn)(ggml_backend_dev_t);

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void quiet(enum ggml_log_level level, const char* text, void* user) {
  (void)user;
  if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static int fail(const char* why) {
  fprintf(stderr, "matmul-llama: %s\n", why);
  return 1;
}

// Whether llama.cpp would keep weights like w in buft: a 512-token matmul with them, on a zero-size buffer of it.
static int supports(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft, struct ggml_tensor* w) {
  struct ggml_init_params p = {4 * ggml_tensor_overhead(), NULL, true};
  struct ggml_context* ctx = ggml_init(p);
  struct ggml_tensor* b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, w->ne[0], 512);
  struct ggml_tensor* op = ggml_mul_mat(ctx, w, b);
  w->buffer = ggml_backend_buft_alloc_buffer(buft, 0);
  const int ok = ggml_backend_dev_supports_op(dev, op);
  ggml_backend_buffer_free(w->buffer);
  w->buffer = NULL;
  ggml_free(ctx);
  return ok;
}

int main(int argc, char** argv) {
  if (argc < 7) return fail("usage: matmul-llama TYPE ROWS K TOKENS THREADS REPS");
  enum ggml_type type = GGML_TYPE_COUNT;
  for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
    const char* name = ggml_type_name((enum ggml_type)t);
    if (name && strcasecmp(name, argv[1]) == 0) type = (enum ggml_type)t;
  }
  const long long rows = atoll(argv[2]), k = atoll(argv[3]), tokens = atoll(argv[4]);
  const int threads = atoi(argv[5]), reps = atoi(argv[6]);
  if (type == GGML_TYPE_COUNT) return fail("TYPE is not a ggml type name");
  if (rows < 1 || k < 1 || tokens < 1 || threads < 1 || reps < 1) return fail("ROWS, K, TOKENS, THREADS, REPS must be above 0");
  if (k % ggml_blck_size(type) != 0) return fail("K is not a multiple of the type's block");

  ggml_log_set(quiet, NULL);
  const char* lib = getenv("LLAMA_LIB");
  if (lib) ggml_backend_load_all_from_path(lib); else ggml_backend_load_all();
  ggml_backend_t cpu = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL);
  if (!cpu) return fail("no CPU backend");
  ggml_backend_dev_t dev = ggml_backend_get_device(cpu);
  ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
  set_threads_fn set_threads = (set_threads_fn)ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads");
  if (set_threads) set_threads(cpu, threads);

  struct ggml_init_params p = {8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
  struct ggml_context* weights = ggml_init(p);
  struct ggml_context* ctx = ggml_init(p);
  struct ggml_tensor* w = ggml_new_tensor_2d(weights, type, k, rows);
  struct ggml_tensor* x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, tokens);
  struct ggml_tensor* y = ggml_mul_mat(ctx, w, x);
  struct ggml_cgraph* graph = ggml_new_graph(ctx);
  ggml_build_forward_expand(graph, y);

  ggml_backend_buffer_type_t buft = ggml_backend_get_default_buffer_type(cpu);
  extra_bufts_fn extra = (extra_bufts_fn)ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts");
  for (ggml_backend_buffer_type_t* e = extra ? extra(dev) : NULL; e && *e; ++e) {
    if (supports(dev, *e, w)) {
      buft = *e;
      break;
    }
  }
  if (!ggml_backend_alloc_ctx_tensors_from_buft(weights, buft) || !ggml_backend_alloc_ctx_tensors(ctx, cpu)) {
    return fail("could not allocate the tensors");
  }

  const long long block_rows = rows < 256 ? rows : 256;
  const size_t row_bytes = ggml_row_size(type, k);
  float* f = malloc((size_t)block_rows * (size_t)k * sizeof(float));
  unsigned char* q = malloc(ggml_nbytes(w));
  float* a = malloc((size_t)k * (size_t)tokens * sizeof(float));
  if (!f || !q || !a) return fail("out of memory");
  unsigned s = 12345u;
  for (long long i = 0; i < block_rows * k; ++i) {
    s = s * 1664525u + 1013904223u;
    f[i] = (float)(s >> 8) / 8388608.0f - 1.0f;
  }
  ggml_quantize_chunk(type, f, q, 0, block_rows, k, NULL);
  for (long long r = block_rows; r < rows; ++r) memcpy(q + r * row_bytes, q + (r % block_rows) * row_bytes, row_bytes);
  ggml_backend_tensor_set(w, q, 0, ggml_nbytes(w));  // a repacking buffer repacks here
  for (long long i = 0; i < k * tokens; ++i) a[i] = (float)(i % 13) / 6.0f - 1.0f;
  ggml_backend_tensor_set(x, a, 0, (size_t)k * (size_t)tokens * sizeof(float));

  double best = 0;
  for (int r = 0; r <= reps; ++r) {
    const double start = now_s();
    if (ggml_backend_graph_compute(cpu, graph) != GGML_STATUS_SUCCESS) return fail("the matmul failed");
    const double took = now_s() - start;
    if (r > 0 && (best == 0 || took < best)) best = took;
  }
  printf("%s %.9f\n", ggml_backend_buft_name(buft), best);
  free(f);
  free(q);
  free(a);
  return 0;
}
