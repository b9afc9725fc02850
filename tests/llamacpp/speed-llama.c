// Driver for check-speed: llama.cpp's own prompt and generation rates on the CPU, timed as llama-bench times its
// pp and tg tests (the npm package ships no llama-bench), through llama.h.
//   speed-llama MODEL.gguf THREADS PROMPT GEN REPS
// Loads the model on the CPU, makes a context of PROMPT + GEN tokens with one batch and micro-batch of PROMPT
// tokens and THREADS threads for both, then REPS + 1 times (the first a warm-up, not counted): clears the cache,
// decodes a PROMPT-token prompt of fixed pseudo-random tokens in one llama_decode (pp), then GEN tokens one
// llama_decode each (tg). Prints "pp TOK_PER_S tg TOK_PER_S" with the best rate of each over the counted runs.
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "load_backends.h"

static void quiet(enum ggml_log_level level, const char* text, void* user) {
  (void)user;
  if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int fail(const char* why) {
  fprintf(stderr, "speed-llama: %s\n", why);
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 6) return fail("usage: speed-llama MODEL.gguf THREADS PROMPT GEN REPS");
  const int threads = atoi(argv[2]), prompt = atoi(argv[3]), gen = atoi(argv[4]), reps = atoi(argv[5]);
  if (threads < 1 || prompt < 1 || gen < 1 || reps < 1) return fail("THREADS, PROMPT, GEN and REPS must be above 0");
  llama_log_set(quiet, NULL);
  load_backends();
  struct llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  struct llama_model* m = llama_model_load_from_file(argv[1], mp);
  if (!m) return fail("llama.cpp could not load the model");
  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = (uint32_t)(prompt + gen);
  cp.n_batch = (uint32_t)prompt;
  cp.n_ubatch = (uint32_t)prompt;
  cp.n_threads = threads;
  cp.n_threads_batch = threads;
  struct llama_context* c = llama_init_from_model(m, cp);
  if (!c) return fail("llama.cpp refused the context");
  const int32_t vocab = llama_vocab_n_tokens(llama_model_get_vocab(m));

  struct llama_batch batch = llama_batch_init(prompt, 0, 1);
  double best_pp = 0, best_tg = 0;
  unsigned seed = 1;
  for (int r = 0; r <= reps; ++r) {
    llama_memory_clear(llama_get_memory(c), true);
    batch.n_tokens = prompt;
    for (int i = 0; i < prompt; ++i) {
      seed = seed * 1103515245u + 12345u;
      batch.token[i] = (llama_token)((seed >> 8) % (unsigned)vocab);
      batch.pos[i] = i;
      batch.n_seq_id[i] = 1;
      batch.seq_id[i][0] = 0;
      batch.logits[i] = i == prompt - 1;
    }
    double start = now_s();
    if (llama_decode(c, batch) != 0) return fail("llama_decode failed on the prompt");
    llama_synchronize(c);
    const double pp = prompt / (now_s() - start);
    start = now_s();
    for (int i = 0; i < gen; ++i) {
      batch.n_tokens = 1;
      batch.token[0] = (llama_token)(i % vocab);
      batch.pos[0] = prompt + i;
      batch.n_seq_id[0] = 1;
      batch.seq_id[0][0] = 0;
      batch.logits[0] = 1;
      if (llama_decode(c, batch) != 0) return fail("llama_decode failed on a generated token");
    }
    llama_synchronize(c);
    const double tg = gen / (now_s() - start);
    if (r > 0 && pp > best_pp) best_pp = pp;
    if (r > 0 && tg > best_tg) best_tg = tg;
  }
  printf("pp %.3f tg %.3f\n", best_pp, best_tg);
  llama_batch_free(batch);
  llama_free(c);
  llama_model_free(m);
  return 0;
}
