// Driver for the llama.cpp ground-truth checks (scripts/llama-check compiles it against llama.h, ggml.h and
// gguf.h of the pinned llama.cpp and links its prebuilt libraries). The files it writes hold their tensors in the
// order llama.cpp's tools write them (by block, then by name). Subcommands:
//   write OUT.gguf LAYERS HIDDEN HEADS KV_HEADS FFN VOCAB TIED WTYPE [all-types]
//       a llama-shaped GGUF with random weights (WTYPE f16 or f32 for the matrices; norms f32); TIED 1 leaves
//       out output.weight; all-types adds one 256 x 2 tensor of every ggml type llama.cpp defines (data zero)
//   write-hybrid OUT.gguf ARCH LAYERS HIDDEN HEADS KV_HEADS FFN VOCAB ATTN_EVERY
//       a hybrid GGUF with random F16 weights, every ATTN_EVERY-th layer attending (layer i when
//       (i + 1) % ATTN_EVERY == 0) and the others keeping a constant state, as src/models/<ARCH>.cpp
//       load_arch_tensors reads them: ARCH lfm2 (short convolutions, l_cache 3), granitehybrid (Mamba-2: inner
//       2 x HIDDEN, state 64, one group, heads of 64, d_conv 4) or qwen3next (gated delta nets: HEADS / 2 key and
//       HEADS value heads of 64, d_conv 4; every layer an MoE of 4 experts of FFN, 2 used, and a shared expert)
//   quantize IN OUT FTYPE [imatrix] [output=TYPE] [tensor=PATTERN=TYPE ...]
//       llama_model_quantize into file type FTYPE (llama-quantize's name); imatrix passes an importance matrix
//       of ones for every quantized tensor (llama.cpp refuses some targets without one); output=TYPE stores the
//       output matrix in ggml type TYPE (llama-quantize's --output-tensor-type), tensor=PATTERN=TYPE the tensors
//       whose names PATTERN (a regular expression) matches (llama-quantize's --tensor-type)
//   bytes FILE
//       the file's tensors as gguf.h reads them: "total BYTES", then "TYPE COUNT BYTES" per ggml type
//   reorder IN OUT NAME...
//       IN's tensors written to OUT in another order (as a converter's own order would): the named ones first, in
//       the order given, then the others in IN's order; the metadata as it is
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ggml.h"
#include "gguf.h"
#include "llama.h"

#include "tensor_order.h"

namespace {

struct FtypeName {
  const char* name;
  llama_ftype ftype;
};

// tools/quantize/quantize.cpp, QUANT_OPTIONS (without the aliases and COPY).
const FtypeName kFtypes[] = {
    {"Q1_0", LLAMA_FTYPE_MOSTLY_Q1_0},       {"Q2_0", LLAMA_FTYPE_MOSTLY_Q2_0},
    {"Q4_0", LLAMA_FTYPE_MOSTLY_Q4_0},       {"Q4_1", LLAMA_FTYPE_MOSTLY_Q4_1},
    {"MXFP4_MOE", LLAMA_FTYPE_MOSTLY_MXFP4_MOE}, {"Q5_0", LLAMA_FTYPE_MOSTLY_Q5_0},
    {"Q5_1", LLAMA_FTYPE_MOSTLY_Q5_1},       {"IQ2_XXS", LLAMA_FTYPE_MOSTLY_IQ2_XXS},
    {"IQ2_XS", LLAMA_FTYPE_MOSTLY_IQ2_XS},   {"IQ2_S", LLAMA_FTYPE_MOSTLY_IQ2_S},
    {"IQ2_M", LLAMA_FTYPE_MOSTLY_IQ2_M},     {"IQ1_S", LLAMA_FTYPE_MOSTLY_IQ1_S},
    {"IQ1_M", LLAMA_FTYPE_MOSTLY_IQ1_M},     {"TQ1_0", LLAMA_FTYPE_MOSTLY_TQ1_0},
    {"TQ2_0", LLAMA_FTYPE_MOSTLY_TQ2_0},     {"Q2_K", LLAMA_FTYPE_MOSTLY_Q2_K},
    {"Q2_K_S", LLAMA_FTYPE_MOSTLY_Q2_K_S},   {"IQ3_XXS", LLAMA_FTYPE_MOSTLY_IQ3_XXS},
    {"IQ3_S", LLAMA_FTYPE_MOSTLY_IQ3_S},     {"IQ3_M", LLAMA_FTYPE_MOSTLY_IQ3_M},
    {"IQ3_XS", LLAMA_FTYPE_MOSTLY_IQ3_XS},   {"Q3_K_S", LLAMA_FTYPE_MOSTLY_Q3_K_S},
    {"Q3_K_M", LLAMA_FTYPE_MOSTLY_Q3_K_M},   {"Q3_K_L", LLAMA_FTYPE_MOSTLY_Q3_K_L},
    {"IQ4_NL", LLAMA_FTYPE_MOSTLY_IQ4_NL},   {"IQ4_XS", LLAMA_FTYPE_MOSTLY_IQ4_XS},
    {"Q4_K_S", LLAMA_FTYPE_MOSTLY_Q4_K_S},   {"Q4_K_M", LLAMA_FTYPE_MOSTLY_Q4_K_M},
    {"Q5_K_S", LLAMA_FTYPE_MOSTLY_Q5_K_S},   {"Q5_K_M", LLAMA_FTYPE_MOSTLY_Q5_K_M},
    {"Q6_K", LLAMA_FTYPE_MOSTLY_Q6_K},       {"Q8_0", LLAMA_FTYPE_MOSTLY_Q8_0},
    {"F16", LLAMA_FTYPE_MOSTLY_F16},         {"BF16", LLAMA_FTYPE_MOSTLY_BF16},
    {"F32", LLAMA_FTYPE_ALL_F32},
};

int usage() {
  std::fprintf(stderr, "usage: llama-model write|write-hybrid|quantize|bytes|reorder ... (see the comment at the top of llama-model.cpp)\n");
  return 2;
}

void quiet(ggml_log_level level, const char* text, void*) {
  if (level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

// One tensor to write: its name, ggml's ne0 x ne1 x ne2 and type.
struct Spec {
  std::string name;
  int64_t ne0, ne1;
  ggml_type type;
  int64_t ne2 = 1;
};

// Writes specs with random weights (F32 vectors ones, matrices normal with sigma 0.02; other types zero) and the
// metadata already in g to out; frees g.
int save(const char* out, gguf_context* g, const std::vector<Spec>& specs) {
  size_t bytes = 0;
  for (const Spec& s : specs) bytes += ggml_row_size(s.type, s.ne0) * static_cast<size_t>(s.ne1 * s.ne2) + 256;
  ggml_init_params params{bytes + specs.size() * ggml_tensor_overhead() + (1 << 20), nullptr, false};
  ggml_context* ctx = ggml_init(params);
  std::mt19937 rng(15);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<ggml_tensor*> tensors;
  for (const Spec& s : specs) {
    ggml_tensor* t = s.ne2 > 1   ? ggml_new_tensor_3d(ctx, s.type, s.ne0, s.ne1, s.ne2)
                     : s.ne1 == 1 ? ggml_new_tensor_1d(ctx, s.type, s.ne0)
                                  : ggml_new_tensor_2d(ctx, s.type, s.ne0, s.ne1);
    ggml_set_name(t, s.name.c_str());
    const int64_t n = ggml_nelements(t);
    if (s.type == GGML_TYPE_F32) {
      auto* d = static_cast<float*>(t->data);
      for (int64_t k = 0; k < n; ++k) d[k] = s.ne1 == 1 ? 1.0f : normal(rng);
    } else if (s.type == GGML_TYPE_F16) {
      auto* d = static_cast<ggml_fp16_t*>(t->data);
      for (int64_t k = 0; k < n; ++k) d[k] = ggml_fp32_to_fp16(normal(rng));
    } else {
      std::memset(t->data, 0, ggml_nbytes(t));
    }
    tensors.push_back(t);
  }
  // In the order llama.cpp's tools write (tensor_order.h).
  std::stable_sort(tensors.begin(), tensors.end(), [](const ggml_tensor* a, const ggml_tensor* b) {
    return llama_tensor_order(a->name, b->name) < 0;
  });
  for (ggml_tensor* t : tensors) gguf_add_tensor(g, t);
  const bool ok = gguf_write_to_file(g, out, false);
  gguf_free(g);
  ggml_free(ctx);
  if (!ok) {
    std::fprintf(stderr, "llama-model: cannot write %s\n", out);
    return 1;
  }
  return 0;
}

int write(int argc, char** argv) {
  if (argc < 11) return usage();
  const char* out = argv[2];
  const int64_t layers = std::atoll(argv[3]), hidden = std::atoll(argv[4]), heads = std::atoll(argv[5]),
                kv_heads = std::atoll(argv[6]), ffn = std::atoll(argv[7]), vocab = std::atoll(argv[8]);
  const bool tied = std::atoi(argv[9]) != 0;
  const ggml_type wtype = std::strcmp(argv[10], "f32") == 0 ? GGML_TYPE_F32 : GGML_TYPE_F16;
  const bool all_types = argc > 11 && std::strcmp(argv[11], "all-types") == 0;
  const int64_t head_dim = hidden / heads;

  std::vector<Spec> specs{{"token_embd.weight", hidden, vocab, wtype}, {"output_norm.weight", hidden, 1, GGML_TYPE_F32}};
  if (!tied) specs.push_back({"output.weight", hidden, vocab, wtype});
  for (int64_t i = 0; i < layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    specs.push_back({b + "attn_norm.weight", hidden, 1, GGML_TYPE_F32});
    specs.push_back({b + "attn_q.weight", hidden, heads * head_dim, wtype});
    specs.push_back({b + "attn_k.weight", hidden, kv_heads * head_dim, wtype});
    specs.push_back({b + "attn_v.weight", hidden, kv_heads * head_dim, wtype});
    specs.push_back({b + "attn_output.weight", heads * head_dim, hidden, wtype});
    specs.push_back({b + "ffn_norm.weight", hidden, 1, GGML_TYPE_F32});
    specs.push_back({b + "ffn_gate.weight", hidden, ffn, wtype});
    specs.push_back({b + "ffn_up.weight", hidden, ffn, wtype});
    specs.push_back({b + "ffn_down.weight", ffn, hidden, wtype});
  }
  if (all_types) {
    for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
      const auto type = static_cast<ggml_type>(t);
      if (ggml_blck_size(type) == 0 || ggml_type_size(type) == 0) continue;  // an id ggml removed
      specs.push_back({std::string("extra.") + ggml_type_name(type) + ".weight", 256, 2, type});
    }
  }
  gguf_context* g = gguf_init_empty();
  gguf_set_val_str(g, "general.architecture", "llama");
  gguf_set_val_str(g, "general.name", "edgeplan-check");
  gguf_set_val_u32(g, "general.file_type", wtype == GGML_TYPE_F32 ? LLAMA_FTYPE_ALL_F32 : LLAMA_FTYPE_MOSTLY_F16);
  gguf_set_val_u32(g, "llama.context_length", 4096);
  gguf_set_val_u32(g, "llama.embedding_length", static_cast<uint32_t>(hidden));
  gguf_set_val_u32(g, "llama.block_count", static_cast<uint32_t>(layers));
  gguf_set_val_u32(g, "llama.feed_forward_length", static_cast<uint32_t>(ffn));
  gguf_set_val_u32(g, "llama.attention.head_count", static_cast<uint32_t>(heads));
  gguf_set_val_u32(g, "llama.attention.head_count_kv", static_cast<uint32_t>(kv_heads));
  gguf_set_val_u32(g, "llama.rope.dimension_count", static_cast<uint32_t>(head_dim));
  gguf_set_val_f32(g, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
  gguf_set_val_u32(g, "llama.vocab_size", static_cast<uint32_t>(vocab));
  return save(out, g, specs);
}

// Hybrid layouts (src/models/lfm2.cpp, granite-hybrid.cpp, qwen3next.cpp load_arch_hparams / load_arch_tensors).
int write_hybrid(int argc, char** argv) {
  if (argc < 11) return usage();
  const char* out = argv[2];
  const std::string arch = argv[3];
  const int64_t layers = std::atoll(argv[4]), hidden = std::atoll(argv[5]), heads = std::atoll(argv[6]),
                kv_heads = std::atoll(argv[7]), ffn = std::atoll(argv[8]), vocab = std::atoll(argv[9]),
                every = std::atoll(argv[10]);
  const bool lfm2 = arch == "lfm2", granite = arch == "granitehybrid", next = arch == "qwen3next";
  if (!lfm2 && !granite && !next) return usage();
  if (every < 2 || layers < every) return usage();
  const int64_t head_dim = hidden / heads, q_factor = next ? 2 : 1;  // qwen3next's attn_q holds the output gate too
  const ggml_type f16 = GGML_TYPE_F16, f32 = GGML_TYPE_F32;
  // The state's sizes: Mamba-2 inner 2 x hidden, state 64, one group, heads of 64; the delta net heads / 2 key and
  // heads value heads of 64 (ssm.state_size = head size, group_count = key heads, time_step_rank = value heads).
  const int64_t state = 64, groups = granite ? 1 : heads / 2, ssm_heads = granite ? 2 * hidden / 64 : heads;
  const int64_t inner = granite ? 2 * hidden : ssm_heads * state, conv = 4, experts = 4, used = 2;
  const auto attends = [&](int64_t i) { return (i + 1) % every == 0; };

  std::vector<Spec> specs{{"token_embd.weight", hidden, vocab, f16},
                          {lfm2 ? "token_embd_norm.weight" : "output_norm.weight", hidden, 1, f32},
                          {"output.weight", hidden, vocab, f16}};
  for (int64_t i = 0; i < layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    specs.push_back({b + "attn_norm.weight", hidden, 1, f32});
    if (attends(i)) {
      specs.push_back({b + "attn_q.weight", hidden, q_factor * heads * head_dim, f16});
      specs.push_back({b + "attn_k.weight", hidden, kv_heads * head_dim, f16});
      specs.push_back({b + "attn_v.weight", hidden, kv_heads * head_dim, f16});
      specs.push_back({b + "attn_output.weight", heads * head_dim, hidden, f16});
      if (!granite) {
        specs.push_back({b + "attn_q_norm.weight", head_dim, 1, f32});
        specs.push_back({b + "attn_k_norm.weight", head_dim, 1, f32});
      }
    } else if (lfm2) {
      specs.push_back({b + "shortconv.conv.weight", 3, hidden, f32});
      specs.push_back({b + "shortconv.in_proj.weight", hidden, 3 * hidden, f16});
      specs.push_back({b + "shortconv.out_proj.weight", hidden, hidden, f16});
    } else if (granite) {
      specs.push_back({b + "ssm_in.weight", hidden, 2 * inner + 2 * groups * state + ssm_heads, f16});
      specs.push_back({b + "ssm_conv1d.weight", conv, inner + 2 * groups * state, f32});
      specs.push_back({b + "ssm_conv1d.bias", inner + 2 * groups * state, 1, f32});  // build_mamba2_layer adds it
      specs.push_back({b + "ssm_dt.bias", ssm_heads, 1, f32});
      specs.push_back({b + "ssm_a", 1, ssm_heads, f32});
      specs.push_back({b + "ssm_d", 1, ssm_heads, f32});
      specs.push_back({b + "ssm_norm.weight", inner / groups, groups, f32});
      specs.push_back({b + "ssm_out.weight", inner, hidden, f16});
    } else {
      specs.push_back({b + "attn_qkv.weight", hidden, 2 * groups * state + inner, f16});
      specs.push_back({b + "attn_gate.weight", hidden, inner, f16});
      specs.push_back({b + "ssm_conv1d.weight", conv, 2 * groups * state + inner, f32});
      specs.push_back({b + "ssm_dt.bias", ssm_heads, 1, f32});
      specs.push_back({b + "ssm_a", ssm_heads, 1, f32});
      specs.push_back({b + "ssm_ba.weight", hidden, 2 * ssm_heads, f16});
      specs.push_back({b + "ssm_norm.weight", state, 1, f32});
      specs.push_back({b + "ssm_out.weight", inner, hidden, f16});
    }
    specs.push_back({b + (next ? "post_attention_norm.weight" : "ffn_norm.weight"), hidden, 1, f32});
    if (next) {
      specs.push_back({b + "ffn_gate_inp.weight", hidden, experts, f32});
      specs.push_back({b + "ffn_gate_exps.weight", hidden, ffn, f16, experts});
      specs.push_back({b + "ffn_up_exps.weight", hidden, ffn, f16, experts});
      specs.push_back({b + "ffn_down_exps.weight", ffn, hidden, f16, experts});
      specs.push_back({b + "ffn_gate_inp_shexp.weight", hidden, 1, f32});
      specs.push_back({b + "ffn_gate_shexp.weight", hidden, ffn, f16});
      specs.push_back({b + "ffn_up_shexp.weight", hidden, ffn, f16});
      specs.push_back({b + "ffn_down_shexp.weight", ffn, hidden, f16});
    } else {
      specs.push_back({b + "ffn_gate.weight", hidden, ffn, f16});
      specs.push_back({b + "ffn_up.weight", hidden, ffn, f16});
      specs.push_back({b + "ffn_down.weight", ffn, hidden, f16});
    }
  }
  gguf_context* g = gguf_init_empty();
  const auto key = [&](const char* k) { return arch + "." + k; };
  const auto u32 = [&](const char* k, int64_t v) { gguf_set_val_u32(g, key(k).c_str(), static_cast<uint32_t>(v)); };
  gguf_set_val_str(g, "general.architecture", arch.c_str());
  gguf_set_val_str(g, "general.name", "edgeplan-check");
  gguf_set_val_u32(g, "general.file_type", LLAMA_FTYPE_MOSTLY_F16);
  u32("context_length", 4096);
  u32("embedding_length", hidden);
  u32("block_count", layers);
  u32("feed_forward_length", ffn);
  u32("attention.head_count", heads);
  u32("rope.dimension_count", head_dim);
  u32("vocab_size", vocab);  // read with tokenizer.ggml.model "none"
  gguf_set_val_str(g, "tokenizer.ggml.model", "none");
  gguf_set_val_f32(g, key("attention.layer_norm_rms_epsilon").c_str(), 1e-5f);
  if (next) {  // the state layers are all but every full_attention_interval-th
    u32("attention.head_count_kv", kv_heads);
    u32("attention.key_length", head_dim);
    u32("attention.value_length", head_dim);
    u32("full_attention_interval", every);
    u32("expert_count", experts);
    u32("expert_used_count", used);
    u32("expert_feed_forward_length", ffn);
    u32("expert_shared_feed_forward_length", ffn);
  } else {  // a state layer is one with head_count_kv 0
    std::vector<uint32_t> per_layer(static_cast<size_t>(layers));
    for (int64_t i = 0; i < layers; ++i) per_layer[static_cast<size_t>(i)] = attends(i) ? static_cast<uint32_t>(kv_heads) : 0;
    gguf_set_arr_data(g, key("attention.head_count_kv").c_str(), GGUF_TYPE_UINT32, per_layer.data(), per_layer.size());
  }
  if (lfm2) {
    u32("shortconv.l_cache", 3);
  } else {
    u32("ssm.conv_kernel", conv);
    u32("ssm.inner_size", inner);
    u32("ssm.state_size", state);
    u32("ssm.time_step_rank", ssm_heads);
    u32("ssm.group_count", groups);
  }
  return save(out, g, specs);
}

int quantize(int argc, char** argv) {
  if (argc < 5) return usage();
  const FtypeName* f = nullptr;
  for (const FtypeName& x : kFtypes) {
    if (std::strcmp(x.name, argv[4]) == 0) f = &x;
  }
  if (!f) {
    std::fprintf(stderr, "llama-model: unknown file type %s\n", argv[4]);
    return 2;
  }
  bool with_imatrix = false;
  ggml_type output = GGML_TYPE_COUNT;
  std::vector<std::string> patterns;
  std::vector<llama_model_tensor_override> overrides;
  const auto type_named = [](const char* text) {
    for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
      const char* name = ggml_type_name(static_cast<ggml_type>(t));
      if (name && strcasecmp(name, text) == 0) return static_cast<ggml_type>(t);
    }
    return GGML_TYPE_COUNT;
  };
  for (int i = 5; i < argc; ++i) {
    const char* eq = std::strrchr(argv[i], '=');
    if (std::strcmp(argv[i], "imatrix") == 0) {
      with_imatrix = true;
    } else if (std::strncmp(argv[i], "output=", 7) == 0 && type_named(argv[i] + 7) != GGML_TYPE_COUNT) {
      output = type_named(argv[i] + 7);
    } else if (std::strncmp(argv[i], "tensor=", 7) == 0 && eq > argv[i] + 7 && type_named(eq + 1) != GGML_TYPE_COUNT) {
      patterns.emplace_back(argv[i] + 7, static_cast<size_t>(eq - (argv[i] + 7)));
      overrides.push_back({nullptr, type_named(eq + 1)});
    } else {
      std::fprintf(stderr, "llama-model: unknown option %s (imatrix, output=TYPE or tensor=PATTERN=TYPE)\n", argv[i]);
      return 2;
    }
  }
  for (size_t i = 0; i < patterns.size(); ++i) overrides[i].pattern = patterns[i].c_str();
  overrides.push_back({nullptr, GGML_TYPE_COUNT});
  // An importance matrix of ones: ne0 x ne2 values for every tensor of two or more dimensions.
  std::vector<std::string> names;
  std::vector<std::vector<float>> values;
  std::vector<llama_model_imatrix_data> imatrix;
  if (with_imatrix) {
    ggml_context* meta = nullptr;
    gguf_init_params gp{true, &meta};
    gguf_context* g = gguf_init_from_file(argv[2], gp);
    if (!g) return 1;
    for (int64_t i = 0; i < gguf_get_n_tensors(g); ++i) {
      const ggml_tensor* t = ggml_get_tensor(meta, gguf_get_tensor_name(g, i));
      if (ggml_n_dims(t) < 2) continue;
      names.emplace_back(t->name);
      values.emplace_back(static_cast<size_t>(t->ne[0] * t->ne[2]), 1.0f);
    }
    gguf_free(g);
    ggml_free(meta);
    for (size_t i = 0; i < names.size(); ++i) imatrix.push_back({names[i].c_str(), values[i].data(), values[i].size()});
    imatrix.push_back({nullptr, nullptr, 0});
  }
  llama_model_quantize_params p = llama_model_quantize_default_params();
  p.ftype = f->ftype;
  p.nthread = 2;
  if (with_imatrix) p.imatrix = imatrix.data();
  if (output != GGML_TYPE_COUNT) p.output_tensor_type = output;
  if (!patterns.empty()) p.tt_overrides = overrides.data();
  return llama_model_quantize(argv[2], argv[3], &p) == 0 ? 0 : 1;
}

int bytes(int argc, char** argv) {
  if (argc < 3) return usage();
  ggml_context* meta = nullptr;
  gguf_init_params gp{true, &meta};
  gguf_context* g = gguf_init_from_file(argv[2], gp);
  if (!g) {
    std::fprintf(stderr, "llama-model: cannot read %s\n", argv[2]);
    return 1;
  }
  std::map<std::string, std::pair<int, size_t>> by_type;
  size_t total = 0;
  for (int64_t i = 0; i < gguf_get_n_tensors(g); ++i) {
    const size_t b = gguf_get_tensor_size(g, i);
    auto& e = by_type[ggml_type_name(gguf_get_tensor_type(g, i))];
    ++e.first;
    e.second += b;
    total += b;
  }
  std::printf("total %zu\n", total);
  for (const auto& [name, e] : by_type) std::printf("%s %d %zu\n", name.c_str(), e.first, e.second);
  gguf_free(g);
  ggml_free(meta);
  return 0;
}

}  // namespace

int reorder(int argc, char** argv) {
  if (argc < 5) return usage();
  ggml_context* data = nullptr;
  gguf_init_params gp{false, &data};  // the tensors' data read too
  gguf_context* in = gguf_init_from_file(argv[2], gp);
  if (!in) {
    std::fprintf(stderr, "llama-model: cannot read %s\n", argv[2]);
    return 1;
  }
  std::vector<ggml_tensor*> order;
  for (int i = 4; i < argc; ++i) {
    ggml_tensor* t = ggml_get_tensor(data, argv[i]);
    if (!t) {
      std::fprintf(stderr, "llama-model: %s has no tensor %s\n", argv[2], argv[i]);
      return 1;
    }
    order.push_back(t);
  }
  for (int64_t i = 0; i < gguf_get_n_tensors(in); ++i) {
    ggml_tensor* t = ggml_get_tensor(data, gguf_get_tensor_name(in, i));
    if (std::find(order.begin(), order.end(), t) == order.end()) order.push_back(t);
  }
  gguf_context* out = gguf_init_empty();
  gguf_set_kv(out, in);
  for (ggml_tensor* t : order) gguf_add_tensor(out, t);
  const bool ok = gguf_write_to_file(out, argv[3], false);
  gguf_free(out);
  gguf_free(in);
  ggml_free(data);
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  llama_log_set(quiet, nullptr);
  ggml_log_set(quiet, nullptr);
  llama_backend_init();
  if (std::strcmp(argv[1], "write") == 0) return write(argc, argv);
  if (std::strcmp(argv[1], "write-hybrid") == 0) return write_hybrid(argc, argv);
  if (std::strcmp(argv[1], "quantize") == 0) return quantize(argc, argv);
  if (std::strcmp(argv[1], "bytes") == 0) return bytes(argc, argv);
  if (std::strcmp(argv[1], "reorder") == 0) return reorder(argc, argv);
  return usage();
}
