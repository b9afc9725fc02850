// Driver for check-speed: the rate of llama.cpp's own CPU kernel for quantized matmuls, the figure `edgeplan
// bench` measures with its kernels of the same arithmetic, so the two can be set side by side kernel by kernel.
//   matmul-llama TYPE ROWS K TOKENS THREADS REPS [LAYERS]
// ROWS and K: one number each, or comma-separated lists of as many, at most 16 (the matrices of a decoder layer in
// the order its graph runs them: bench's one-token rates are a decoded token's matrices of a model), and LAYERS
// (default 1) times those matrices, each with weights of its own, at most 1,024 matrices in all. Makes each ROWS x K
// weight matrix of ggml type TYPE (Q4_0, Q8_0, Q4_K, Q6_K: fixed pseudo-random values quantized by
// ggml_quantize_chunk, 256 rows of them repeated: the speed does not depend on the values) and K x TOKENS fp32
// activations, places the weights as llama.cpp's model loader places them (select_weight_buft in
// llama-model-loader.cpp: the first of the CPU device's extra buffer types, then the plain CPU one, that supports a
// 512-token GGML_OP_MUL_MAT with them, tested on a zero-size buffer as weight_buft_supported does), so they are
// repacked (CPU_REPACK) or packed for AMX where llama.cpp would, and runs the graph of one matmul node per matrix, in
// order, on the CPU backend with THREADS threads REPS + 1 times (the first a warm-up). For one token each run
// follows a read of twice the weights' bytes of other memory (untimed), so that the weights come from DRAM as a
// decoded token's do. Prints "BUFFER_TYPE SECONDS": the weights' buffer type and the best time of the whole graph.
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

// Parses a comma-separated list of at most max numbers above 0 into out; returns how many, 0 when malformed.
static int parse_list(const char* text, long long* out, int max) {
  int n = 0;
  for (const char* p = text; *p;) {
    char* end = NULL;
    const long long v = strtoll(p, &end, 10);
    if (end == p || v < 1 || n == max || (*end != ',' && *end != '\0')) return 0;
    out[n++] = v;
    p = *end == ',' ? end + 1 : end;
  }
  return n;
}

enum { kMaxMatrices = 16, kMaxNodes = 1024 };  // kMaxNodes: within ggml's default graph of 2,048 nodes and leaves

int main(int argc, char** argv) {
  if (argc < 7) return fail("usage: matmul-llama TYPE ROWS K TOKENS THREADS REPS [LAYERS]");
  enum ggml_type type = GGML_TYPE_COUNT;
  for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
    const char* name = ggml_type_name((enum ggml_type)t);
    if (name && strcasecmp(name, argv[1]) == 0) type = (enum ggml_type)t;
  }
  long long rows[kMaxMatrices], k[kMaxMatrices];
  const int matrices = parse_list(argv[2], rows, kMaxMatrices);
  const long long tokens = atoll(argv[4]);
  const int threads = atoi(argv[5]), reps = atoi(argv[6]), layers = argc > 7 ? atoi(argv[7]) : 1;
  if (type == GGML_TYPE_COUNT) return fail("TYPE is not a ggml type name");
  if (matrices == 0 || parse_list(argv[3], k, kMaxMatrices) != matrices) {
    return fail("ROWS and K must be lists of as many numbers above 0 (at most 16)");
  }
  if (tokens < 1 || threads < 1 || reps < 1 || layers < 1) return fail("TOKENS, THREADS, REPS, LAYERS must be above 0");
  if ((long long)matrices * layers > kMaxNodes) return fail("more than 1,024 matrices (the list's x LAYERS)");
  for (int i = 0; i < matrices; ++i) {
    if (k[i] % ggml_blck_size(type) != 0) return fail("K is not a multiple of the type's block");
  }

  ggml_log_set(quiet, NULL);
  const char* lib = getenv("LLAMA_LIB");
  if (lib) ggml_backend_load_all_from_path(lib); else ggml_backend_load_all();
  ggml_backend_t cpu = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL);
  if (!cpu) return fail("no CPU backend");
  ggml_backend_dev_t dev = ggml_backend_get_device(cpu);
  ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
  set_threads_fn set_threads = (set_threads_fn)ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads");
  if (set_threads) set_threads(cpu, threads);

  const size_t nodes = (size_t)matrices * (size_t)layers;
  struct ggml_init_params wp = {(nodes + 1) * ggml_tensor_overhead(), NULL, true};
  struct ggml_init_params p = {(2 * nodes + 2 * kMaxMatrices) * ggml_tensor_overhead() + ggml_graph_overhead(), NULL,
                               true};
  struct ggml_context* weights = ggml_init(wp);
  struct ggml_context* ctx = ggml_init(p);
  struct ggml_tensor* w[kMaxNodes];
  struct ggml_tensor* x[kMaxMatrices];
  for (int i = 0; i < matrices; ++i) x[i] = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k[i], tokens);
  struct ggml_cgraph* graph = ggml_new_graph(ctx);
  for (size_t n = 0; n < nodes; ++n) {
    const int i = (int)(n % (size_t)matrices);
    w[n] = ggml_new_tensor_2d(weights, type, k[i], rows[i]);
    ggml_build_forward_expand(graph, ggml_mul_mat(ctx, w[n], x[i]));
  }

  ggml_backend_buffer_type_t buft = ggml_backend_get_default_buffer_type(cpu);
  extra_bufts_fn extra = (extra_bufts_fn)ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts");
  for (ggml_backend_buffer_type_t* e = extra ? extra(dev) : NULL; e && *e; ++e) {
    if (supports(dev, *e, w[0])) {
      buft = *e;
      break;
    }
  }
  if (!ggml_backend_alloc_ctx_tensors_from_buft(weights, buft) || !ggml_backend_alloc_ctx_tensors(ctx, cpu)) {
    return fail("could not allocate the tensors");
  }

  size_t weight_bytes = 0;
  for (int i = 0; i < matrices; ++i) {
    const long long block_rows = rows[i] < 256 ? rows[i] : 256;
    const size_t row_bytes = ggml_row_size(type, k[i]);
    float* f = malloc((size_t)block_rows * (size_t)k[i] * sizeof(float));
    unsigned char* q = malloc(row_bytes * (size_t)rows[i]);
    float* a = malloc((size_t)k[i] * (size_t)tokens * sizeof(float));
    if (!f || !q || !a) return fail("out of memory");
    unsigned s = 12345u;
    for (long long j = 0; j < block_rows * k[i]; ++j) {
      s = s * 1664525u + 1013904223u;
      f[j] = (float)(s >> 8) / 8388608.0f - 1.0f;
    }
    ggml_quantize_chunk(type, f, q, 0, block_rows, k[i], NULL);
    for (long long r = block_rows; r < rows[i]; ++r) {
      memcpy(q + r * row_bytes, q + (r % block_rows) * row_bytes, row_bytes);
    }
    for (size_t n = (size_t)i; n < nodes; n += (size_t)matrices) {
      ggml_backend_tensor_set(w[n], q, 0, ggml_nbytes(w[n]));  // a repacking buffer repacks here
      weight_bytes += ggml_nbytes(w[n]);
    }
    for (long long j = 0; j < k[i] * tokens; ++j) a[j] = (float)(j % 13) / 6.0f - 1.0f;
    ggml_backend_tensor_set(x[i], a, 0, (size_t)k[i] * (size_t)tokens * sizeof(float));
    free(f);
    free(q);
    free(a);
  }

  // One token's weights come from DRAM: twice their bytes of other memory read before each run.
  const size_t evict_words = tokens == 1 ? 2 * weight_bytes / sizeof(unsigned long long) : 0;
  unsigned long long* evict = evict_words ? calloc(evict_words, sizeof(unsigned long long)) : NULL;
  if (evict_words && !evict) return fail("out of memory");
  volatile unsigned long long kept = 0;
  double best = 0;
  for (int r = 0; r <= reps; ++r) {
    unsigned long long sum = 0;
    for (size_t j = 0; j < evict_words; ++j) sum += evict[j];
    kept += sum;
    const double start = now_s();
    if (ggml_backend_graph_compute(cpu, graph) != GGML_STATUS_SUCCESS) return fail("the matmul failed");
    const double took = now_s() - start;
    if (r > 0 && (best == 0 || took < best)) best = took;
  }
  printf("%s %.9f\n", ggml_backend_buft_name(buft), best);
  free(evict);
  return 0;
}
