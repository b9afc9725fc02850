// Ground-truth driver for the KV-cache and split-file checks (check-kv, check-split): llama.cpp itself, through
// the prebuilt libraries of node-llama-cpp 3.21.1 (llama.h, ggml.h, gguf.h of that release).
//
//   kvctx-llama write OUT.gguf LAYERS HIDDEN HEADS KV_HEADS HEAD_DIM FFN VOCAB [SHARDS [ARCH]]
//       A llama-shaped model (its metadata keys under ARCH, default llama: another architecture that loads llama's
//       tensors, as mistral3 does) with random F16 weights (F32 norms), no vocabulary (tokenizer.ggml.model "none", llama.vocab_size),
//       its tensors in the order llama.cpp's tools write them (by block, then by name; weight_name_comparer).
//       With SHARDS > 1 also writes it split as llama.cpp's gguf-split does (tools/gguf-split/gguf-split.cpp,
//       split_strategy): OUT minus ".gguf" + "-0000i-of-0000n.gguf" (llama_split_path), every metadata key in
//       shard 1 only, split.no (u16), split.count (u16) and split.tensors.count (i32) in each, the tensors
//       dealt out in order. The prebuilt libraries have no split writer (gguf-split is a tool), so gguf.h
//       writes the shards.
//   kvctx-llama size MODEL.gguf
//       Loads the model (the first shard of a split model loads them all) and prints llama_model_size: the
//       bytes of its tensors.
//   kvctx-llama kv MODEL.gguf N_CTX TYPE_K TYPE_V
//       Creates a context (flash attention on, as llama.cpp turns it on for a quantized V cache) with those cache
//       types and prints the bytes of the K and V tensors llama.cpp allocates for the cache (read as
//       llama-kv-cache.cpp allocates them, through ggml_backend_alloc_ctx_tensors_from_buft, which this
//       program interposes) and the size of the buffer holding them.
// Exit 0 on success; 1 with a message on stderr otherwise.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-backend.h"
#include "ggml.h"
#include "gguf.h"
#include "llama.h"

#include "load_backends.h"
#include "tensor_order.h"

static int fail(const char* what) {
  fprintf(stderr, "kvctx-llama: %s\n", what);
  return 1;
}

// ---- write ------------------------------------------------------------------------------------------------

enum { kMaxTensors = 512 };

struct model_writer {
  struct ggml_context* ctx;
  struct ggml_tensor* tensors[kMaxTensors];
  int n;
  uint64_t seed;
};

static float next_random(struct model_writer* w) {
  w->seed = w->seed * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((w->seed >> 40) & 0xffff) / 65536.0f - 0.5f;
}

static void add_tensor(struct model_writer* w, const char* name, enum ggml_type type, int64_t ne0, int64_t ne1) {
  struct ggml_tensor* t = ne1 > 0 ? ggml_new_tensor_2d(w->ctx, type, ne0, ne1) : ggml_new_tensor_1d(w->ctx, type, ne0);
  ggml_set_name(t, name);
  const int64_t n = ggml_nelements(t);
  for (int64_t i = 0; i < n; ++i) {
    const float x = next_random(w) * 0.1f;
    if (type == GGML_TYPE_F16) {
      ((ggml_fp16_t*)t->data)[i] = ggml_fp32_to_fp16(x);
    } else {
      ((float*)t->data)[i] = 1.0f + x;
    }
  }
  w->tensors[w->n++] = t;
}

// llama.cpp's tensor order (tensor_order.h), for qsort.
static int llama_order(const void* a, const void* b) {
  return llama_tensor_order(ggml_get_name(*(struct ggml_tensor* const*)a), ggml_get_name(*(struct ggml_tensor* const*)b));
}

static void set_u32(struct gguf_context* g, const char* arch, const char* key, int v) {
  char name[128];
  snprintf(name, sizeof name, "%s.%s", arch, key);
  gguf_set_val_u32(g, name, (uint32_t)v);
}

static void set_metadata(struct gguf_context* g, const char* arch, int layers, int hidden, int heads, int kv_heads,
                         int head_dim, int ffn, int vocab) {
  gguf_set_val_str(g, "general.architecture", arch);
  gguf_set_val_str(g, "general.name", "kvctx-tiny");
  gguf_set_val_u32(g, "general.file_type", 1);  // LLAMA_FTYPE_MOSTLY_F16
  set_u32(g, arch, "block_count", layers);
  set_u32(g, arch, "context_length", 4096);
  set_u32(g, arch, "embedding_length", hidden);
  set_u32(g, arch, "feed_forward_length", ffn);
  set_u32(g, arch, "attention.head_count", heads);
  set_u32(g, arch, "attention.head_count_kv", kv_heads);
  set_u32(g, arch, "attention.key_length", head_dim);
  set_u32(g, arch, "attention.value_length", head_dim);
  set_u32(g, arch, "rope.dimension_count", head_dim);
  char eps[128];
  snprintf(eps, sizeof eps, "%s.attention.layer_norm_rms_epsilon", arch);
  gguf_set_val_f32(g, eps, 1e-5f);
  set_u32(g, arch, "vocab_size", vocab);  // read with tokenizer.ggml.model "none"
  gguf_set_val_str(g, "tokenizer.ggml.model", "none");
}

static int write_model(int argc, char** argv) {
  if (argc < 10) return fail("write OUT.gguf LAYERS HIDDEN HEADS KV_HEADS HEAD_DIM FFN VOCAB [SHARDS [ARCH]]");
  const char* out = argv[2];
  const int layers = atoi(argv[3]), hidden = atoi(argv[4]), heads = atoi(argv[5]), kv_heads = atoi(argv[6]);
  const int head_dim = atoi(argv[7]), ffn = atoi(argv[8]), vocab = atoi(argv[9]);
  const int shards = argc > 10 ? atoi(argv[10]) : 1;
  const char* arch = argc > 11 ? argv[11] : "llama";
  if (layers < 1 || layers * 9 + 3 > kMaxTensors || shards < 1 || shards > layers * 9 + 3) return fail("bad shape");

  const size_t f16 = 2;
  const size_t bytes = f16 * ((size_t)vocab * hidden * 2 + (size_t)layers * ((size_t)hidden * heads * head_dim * 2 +
                                                                            (size_t)hidden * kv_heads * head_dim * 2 +
                                                                            (size_t)hidden * ffn * 3)) +
                       4 * (size_t)hidden * (2 * layers + 1) + (size_t)(layers * 9 + 3) * ggml_tensor_overhead() + (1 << 20);
  struct ggml_init_params params = {bytes, NULL, false};
  struct model_writer w = {ggml_init(params), {0}, 0, 42};
  if (!w.ctx) return fail("ggml_init failed");
  char name[64];
  add_tensor(&w, "token_embd.weight", GGML_TYPE_F16, hidden, vocab);
  for (int i = 0; i < layers; ++i) {
    snprintf(name, sizeof name, "blk.%d.attn_norm.weight", i);
    add_tensor(&w, name, GGML_TYPE_F32, hidden, 0);
    snprintf(name, sizeof name, "blk.%d.attn_q.weight", i);
    add_tensor(&w, name, GGML_TYPE_F16, hidden, (int64_t)heads * head_dim);
    snprintf(name, sizeof name, "blk.%d.attn_k.weight", i);
    add_tensor(&w, name, GGML_TYPE_F16, hidden, (int64_t)kv_heads * head_dim);
    snprintf(name, sizeof name, "blk.%d.attn_v.weight", i);
    add_tensor(&w, name, GGML_TYPE_F16, hidden, (int64_t)kv_heads * head_dim);
    snprintf(name, sizeof name, "blk.%d.attn_output.weight", i);
    add_tensor(&w, name, GGML_TYPE_F16, (int64_t)heads * head_dim, hidden);
    snprintf(name, sizeof name, "blk.%d.ffn_norm.weight", i);
    add_tensor(&w, name, GGML_TYPE_F32, hidden, 0);
    snprintf(name, sizeof name, "blk.%d.ffn_gate.weight", i);
    add_tensor(&w, name, GGML_TYPE_F16, hidden, ffn);
    snprintf(name, sizeof name, "blk.%d.ffn_up.weight", i);
    add_tensor(&w, name, GGML_TYPE_F16, hidden, ffn);
    snprintf(name, sizeof name, "blk.%d.ffn_down.weight", i);
    add_tensor(&w, name, GGML_TYPE_F16, ffn, hidden);
  }
  add_tensor(&w, "output_norm.weight", GGML_TYPE_F32, hidden, 0);
  add_tensor(&w, "output.weight", GGML_TYPE_F16, hidden, vocab);

  qsort(w.tensors, (size_t)w.n, sizeof w.tensors[0], llama_order);  // the order llama.cpp's tools write
  struct gguf_context* whole = gguf_init_empty();
  set_metadata(whole, arch, layers, hidden, heads, kv_heads, head_dim, ffn, vocab);
  for (int i = 0; i < w.n; ++i) gguf_add_tensor(whole, w.tensors[i]);
  if (!gguf_write_to_file(whole, out, false)) return fail("cannot write the model");

  if (shards > 1) {
    const size_t len = strlen(out);
    if (len < 6 || strcmp(out + len - 5, ".gguf") != 0) return fail("OUT must end in .gguf");
    char prefix[4096], path[4200];
    snprintf(prefix, sizeof prefix, "%.*s", (int)(len - 5), out);
    const int per_shard = (w.n + shards - 1) / shards;
    for (int s = 0; s < shards; ++s) {
      struct gguf_context* g = gguf_init_empty();
      if (s == 0) gguf_set_kv(g, whole);  // every metadata key in the first shard only
      gguf_set_val_u16(g, "split.no", (uint16_t)s);
      gguf_set_val_u16(g, "split.count", (uint16_t)shards);
      gguf_set_val_i32(g, "split.tensors.count", w.n);
      for (int i = s * per_shard; i < w.n && i < (s + 1) * per_shard; ++i) gguf_add_tensor(g, w.tensors[i]);
      llama_split_path(path, sizeof path, prefix, s, shards);
      if (!gguf_write_to_file(g, path, false)) return fail("cannot write a shard");
      printf("%s\n", path);
      gguf_free(g);
    }
  }
  gguf_free(whole);
  ggml_free(w.ctx);
  return 0;
}

// ---- size and kv ------------------------------------------------------------------------------------------

static void quiet(enum ggml_log_level level, const char* text, void* user) {
  (void)user;
  if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static struct llama_model* load(const char* path) {
  llama_log_set(quiet, NULL);
  load_backends();
  struct llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  return llama_model_load_from_file(path, mp);
}

static uint64_t g_cache_tensor_bytes = 0;  // the K and V tensors of the cache (cache_k_l*, cache_v_l*)
static uint64_t g_cache_buffer_bytes = 0;  // the buffers holding them

// llama-kv-cache.cpp allocates the cache's tensors through this ggml-alloc function: count what it allocates
// when the context holds the cache's tensors, then call the real one.
ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context* ctx, ggml_backend_buffer_type_t buft) {
  typedef ggml_backend_buffer_t (*alloc_fn)(struct ggml_context*, ggml_backend_buffer_type_t);
  static alloc_fn real = NULL;
  if (!real) real = (alloc_fn)dlsym(RTLD_NEXT, "ggml_backend_alloc_ctx_tensors_from_buft");
  ggml_backend_buffer_t buf = real(ctx, buft);
  uint64_t cache = 0;
  for (struct ggml_tensor* t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
    if (t->view_src == NULL && strncmp(ggml_get_name(t), "cache_", 6) == 0) cache += ggml_nbytes(t);
  }
  if (cache > 0) {
    g_cache_tensor_bytes += cache;
    if (buf) g_cache_buffer_bytes += ggml_backend_buffer_get_size(buf);
  }
  return buf;
}

static enum ggml_type type_named(const char* name) {
  for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
    const char* n = ggml_type_name((enum ggml_type)t);
    if (n && strcmp(n, name) == 0) return (enum ggml_type)t;
  }
  return GGML_TYPE_COUNT;
}

static int model_size(int argc, char** argv) {
  if (argc < 3) return fail("size MODEL.gguf");
  struct llama_model* m = load(argv[2]);
  if (!m) return fail("llama.cpp could not load the model");
  printf("%" PRIu64 "\n", llama_model_size(m));
  llama_model_free(m);
  return 0;
}

static int kv_bytes(int argc, char** argv) {
  if (argc < 6) return fail("kv MODEL.gguf N_CTX TYPE_K TYPE_V");
  const enum ggml_type k = type_named(argv[4]), v = type_named(argv[5]);
  if (k == GGML_TYPE_COUNT || v == GGML_TYPE_COUNT) return fail("unknown cache type");
  struct llama_model* m = load(argv[2]);
  if (!m) return fail("llama.cpp could not load the model");
  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = (uint32_t)atoi(argv[3]);
  cp.n_batch = 512;
  cp.n_ubatch = 512;
  cp.n_seq_max = 1;
  cp.type_k = k;
  cp.type_v = v;
  cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_ENABLED;
  struct llama_context* c = llama_init_from_model(m, cp);
  if (!c) return fail("llama.cpp refused the context");
  printf("%" PRIu64 " %" PRIu64 " %u\n", g_cache_tensor_bytes, g_cache_buffer_bytes, llama_n_ctx(c));
  llama_free(c);
  llama_model_free(m);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "write") == 0) return write_model(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "size") == 0) return model_size(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "kv") == 0) return kv_bytes(argc, argv);
  return fail("usage: kvctx-llama write|size|kv ...");
}
