#include "edgeplan/core/model.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <climits>
#include <cctype>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "edgeplan/core/limits.hpp"

namespace edgeplan {
namespace {

std::string block(int i, const char* what) { return "blk." + std::to_string(i) + "." + what; }

// How an architecture lays out its blocks: llama's (every layer attention + FFN), or a hybrid's (attention
// layers and state layers, each with an FFN).
enum class Layout { transformer, hybrid };

// What an architecture adds to the llama layout.
struct ArchTraits {
  std::string_view name;
  bool qk_norm;     // attn_q_norm / attn_k_norm of head_dim (Qwen3, Gemma 3, LFM2, Qwen3-Next)
  bool post_norms;  // attn_post_norm / ffn_post_norm (Gemma 2/3/3n)
  bool fused;       // attn_qkv and a gate+up ffn_up of 2 x ffn rows, no ffn_gate (Phi-3)
  bool mla;         // multi-head latent attention tensors (DeepSeek V2/V3)
  Layout layout = Layout::transformer;
  // The graph marks the last hidden state of every token a graph output of its own (llm_graph_result::t_h_nextn,
  // the input of a multi-token-prediction head) and takes the output rows from it with a GET_ROWS into a new
  // tensor: src/models/openai-moe.cpp (gpt-oss), src/models/qwen3next.cpp.
  bool hidden_output = false;
};

constexpr ArchTraits kArchs[] = {
    {"llama", false, false, false, false},  {"qwen2", false, false, false, false},
    {"qwen3", true, false, false, false},   {"qwen3moe", true, false, false, false},
    {"gemma2", false, true, false, false},  {"gemma3", true, true, false, false},
    {"phi3", false, false, true, false},    {"deepseek2", false, false, false, true},
    {"smollm3", false, false, false, false}, {"gpt-oss", false, false, false, false, Layout::transformer, true},
    {"gemma3n", true, true, false, false},
    {"lfm2", true, false, false, false, Layout::hybrid},      {"lfm2moe", true, false, false, false, Layout::hybrid},
    {"granitehybrid", false, false, false, false, Layout::hybrid}, {"qwen3next", true, false, false, false, Layout::hybrid, true},
};

// Gemma 3n's AltUp streams and LAuReL rank (transformers' Gemma3nTextConfig: altup_num_inputs 4, laurel_rank 64;
// GGUF gemma3n.altup.num_inputs, gemma3n.laurel_rank).
constexpr std::uint64_t kGemma3nAltup = 4, kGemma3nLaurelRank = 64;

const ArchTraits& traits(const std::string& arch) {
  for (const ArchTraits& t : kArchs) {
    if (t.name == arch) return t;
  }
  return kArchs[0];  // loaders accept only architectures(); a hand-built spec falls back to llama
}

MixContext mix_of(const ModelSpec& m) {
  const std::uint32_t experts = m.moe ? m.moe->experts : 0;
  // llama.cpp's model type 70B (src/models/llama.cpp and qwen2.cpp, load_arch_hparams): 80 layers, and for
  // llama grouped-query attention without 8 experts (the same depth with full attention is 65B).
  const bool size_70b = m.layers == 80 && ((m.arch == "llama" && experts != 8 && m.heads != m.kv_heads) ||
                                           m.arch == "qwen2");
  // llama-quant counts attn_v tensors (n_attention_wv): the attention layers; Qwen3-Next's delta nets add an attn_qkv.
  const std::uint32_t attn_v = m.arch == "qwen3next" ? m.layers : attention_layers(m);
  return MixContext{m.layers, m.heads, m.kv_heads, experts, m.tied_embeddings, size_70b, attn_v};
}

void attention_tensors(const ModelSpec& m, const ArchTraits& a, int i, std::vector<TensorShape>& out) {
  const std::uint64_t h = m.hidden, q = std::uint64_t{m.heads} * m.head_dim,
                      kv = std::uint64_t{m.kv_heads} * m.head_dim;
  if (a.mla) {
    const MlaSpec& l = *m.mla;
    const std::uint64_t qk = std::uint64_t{m.heads} * (l.nope_dim + l.rope_dim);
    if (l.q_lora_rank > 0) {
      out.push_back({block(i, "attn_q_a.weight"), TensorRole::other, i, h, l.q_lora_rank});
      out.push_back({block(i, "attn_q_a_norm.weight"), TensorRole::norm, i, l.q_lora_rank, 1});
      out.push_back({block(i, "attn_q_b.weight"), TensorRole::attn_q, i, l.q_lora_rank, qk});
    } else {
      out.push_back({block(i, "attn_q.weight"), TensorRole::attn_q, i, h, qk});
    }
    out.push_back({block(i, "attn_kv_a_mqa.weight"), TensorRole::other, i, h, std::uint64_t{l.kv_lora_rank} + l.rope_dim});
    out.push_back({block(i, "attn_kv_a_norm.weight"), TensorRole::norm, i, l.kv_lora_rank, 1});
    out.push_back({block(i, "attn_kv_b.weight"), TensorRole::attn_kv_b, i, l.kv_lora_rank,
                   std::uint64_t{m.heads} * (l.nope_dim + l.v_head_dim)});
    out.push_back({block(i, "attn_output.weight"), TensorRole::attn_output, i, std::uint64_t{m.heads} * l.v_head_dim, h});
    return;
  }
  if (a.fused) {
    out.push_back({block(i, "attn_qkv.weight"), TensorRole::attn_qkv, i, h, q + 2 * kv});
  } else {
    // Qwen3-Next's attn_q also carries the output gate: 2 x heads x head_dim rows.
    out.push_back({block(i, "attn_q.weight"), TensorRole::attn_q, i, h, m.arch == "qwen3next" ? 2 * q : q});
    out.push_back({block(i, "attn_k.weight"), TensorRole::attn_k, i, h, kv});
    out.push_back({block(i, "attn_v.weight"), TensorRole::attn_v, i, h, kv});
  }
  if (m.qkv_bias) {
    out.push_back({block(i, "attn_q.bias"), TensorRole::bias, i, q, 1});
    out.push_back({block(i, "attn_k.bias"), TensorRole::bias, i, kv, 1});
    out.push_back({block(i, "attn_v.bias"), TensorRole::bias, i, kv, 1});
  }
  if (a.qk_norm) {
    out.push_back({block(i, "attn_q_norm.weight"), TensorRole::norm, i, m.head_dim, 1});
    out.push_back({block(i, "attn_k_norm.weight"), TensorRole::norm, i, m.head_dim, 1});
  }
  out.push_back({block(i, "attn_output.weight"), TensorRole::attn_output, i, q, h});
  if (m.arch == "gpt-oss") {
    out.push_back({block(i, "attn_output.bias"), TensorRole::bias, i, h, 1});
    out.push_back({block(i, "attn_sinks.weight"), TensorRole::norm, i, m.heads, 1});  // one sink logit per head
  }
}

// The state layers of a hybrid model (llama.cpp's load_arch_tensors of lfm2, granitehybrid, qwen3next).
void state_tensors(const ModelSpec& m, int i, std::vector<TensorShape>& out) {
  const StateSpec& st = *m.state;
  const std::uint64_t h = m.hidden, inner = st.inner, conv = inner + 2ull * st.groups * st.state_dim;
  switch (st.kind) {
    case StateKind::shortconv:
      out.push_back({block(i, "shortconv.conv.weight"), TensorRole::unquantized, i, st.conv_kernel, h});
      out.push_back({block(i, "shortconv.in_proj.weight"), TensorRole::other, i, h, 3 * h});
      out.push_back({block(i, "shortconv.out_proj.weight"), TensorRole::other, i, h, h});
      return;
    case StateKind::mamba2:
      out.push_back({block(i, "ssm_in.weight"), TensorRole::other, i, h, inner + conv + st.heads});
      out.push_back({block(i, "ssm_conv1d.weight"), TensorRole::unquantized, i, st.conv_kernel, conv});
      out.push_back({block(i, "ssm_conv1d.bias"), TensorRole::bias, i, conv, 1});
      out.push_back({block(i, "ssm_dt.bias"), TensorRole::bias, i, st.heads, 1});
      out.push_back({block(i, "ssm_a"), TensorRole::unquantized, i, 1, st.heads});
      out.push_back({block(i, "ssm_d"), TensorRole::unquantized, i, 1, st.heads});
      out.push_back({block(i, "ssm_norm.weight"), TensorRole::norm, i, inner / std::max(st.groups, 1u), st.groups});
      out.push_back({block(i, "ssm_out.weight"), TensorRole::other, i, inner, h});
      return;
    case StateKind::gated_delta_net:
      // q, k (key heads x key width each) and v (inner) in attn_qkv, the output gate z in attn_gate.
      out.push_back({block(i, "attn_qkv.weight"), TensorRole::attn_qkv, i, h, conv});
      out.push_back({block(i, "attn_gate.weight"), TensorRole::other, i, h, inner});
      out.push_back({block(i, "ssm_conv1d.weight"), TensorRole::unquantized, i, st.conv_kernel, conv});
      out.push_back({block(i, "ssm_dt.bias"), TensorRole::bias, i, st.heads, 1});
      out.push_back({block(i, "ssm_a"), TensorRole::unquantized, i, st.heads, 1});
      out.push_back({block(i, "ssm_ba.weight"), TensorRole::other, i, h, 2ull * st.heads});
      out.push_back({block(i, "ssm_norm.weight"), TensorRole::norm, i, inner / std::max(st.heads, 1u), 1});
      out.push_back({block(i, "ssm_out.weight"), TensorRole::other, i, inner, h});
      return;
  }
}

void ffn_tensors(const ModelSpec& m, const ArchTraits& a, int i, std::vector<TensorShape>& out) {
  const std::uint64_t h = m.hidden, f = m.ffn;
  const bool dense = !m.moe || static_cast<std::uint32_t>(i) < m.moe->dense_layers;
  if (dense && a.fused) {
    out.push_back({block(i, "ffn_up.weight"), TensorRole::ffn_up, i, h, 2 * f});
    out.push_back({block(i, "ffn_down.weight"), TensorRole::ffn_down, i, f, h});
    return;
  }
  if (dense) {
    out.push_back({block(i, "ffn_gate.weight"), TensorRole::ffn_gate, i, h, f});
    out.push_back({block(i, "ffn_up.weight"), TensorRole::ffn_up, i, h, f});
    out.push_back({block(i, "ffn_down.weight"), TensorRole::ffn_down, i, f, h});
    return;
  }
  const MoeSpec& e = *m.moe;
  const std::uint64_t ef = e.expert_ffn, n = e.experts;
  const bool gpt_oss = m.arch == "gpt-oss";
  out.push_back({block(i, "ffn_gate_inp.weight"), TensorRole::router, i, h, n});
  if (gpt_oss) out.push_back({block(i, "ffn_gate_inp.bias"), TensorRole::bias, i, n, 1});
  if (m.arch == "lfm2moe") out.push_back({block(i, "exp_probs_b.bias"), TensorRole::bias, i, n, 1});
  out.push_back({block(i, "ffn_gate_exps.weight"), TensorRole::ffn_gate, i, h, ef * n, e.experts});
  out.push_back({block(i, "ffn_up_exps.weight"), TensorRole::ffn_up, i, h, ef * n, e.experts});
  out.push_back({block(i, "ffn_down_exps.weight"), TensorRole::ffn_down, i, ef, h * n, e.experts});
  if (gpt_oss) {  // one bias per expert, read like its expert
    out.push_back({block(i, "ffn_gate_exps.bias"), TensorRole::bias, i, ef, n, e.experts});
    out.push_back({block(i, "ffn_up_exps.bias"), TensorRole::bias, i, ef, n, e.experts});
    out.push_back({block(i, "ffn_down_exps.bias"), TensorRole::bias, i, h, n, e.experts});
  }
  if (m.arch == "qwen3next") out.push_back({block(i, "ffn_gate_inp_shexp.weight"), TensorRole::norm, i, h, 1});
  if (e.shared_experts > 0) {
    const std::uint64_t sf = ef * e.shared_experts;
    out.push_back({block(i, "ffn_gate_shexp.weight"), TensorRole::ffn_gate, i, h, sf});
    out.push_back({block(i, "ffn_up_shexp.weight"), TensorRole::ffn_up, i, h, sf});
    out.push_back({block(i, "ffn_down_shexp.weight"), TensorRole::ffn_down, i, sf, h});
  }
}

// Bytes of m's tensors `typed` (total and read per token); with `matrices_only`, of its 2-D weight matrices alone.
std::pair<double, double> tensor_rule_bytes(const ModelSpec& m, std::span<const TypedTensor> typed,
                                            bool matrices_only = false) {
  double total = 0, active = 0;
  for (const TypedTensor& t : typed) {
    if (matrices_only && t.shape.rows == 1) continue;
    total += t.bytes;
    active += t.bytes * active_fraction(m, t.shape);
  }
  return {total, active};
}

bool same_name(const std::string& a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
  });
}

}  // namespace

const std::vector<std::string>& architectures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const ArchTraits& t : kArchs) v.emplace_back(t.name);
    return v;
  }();
  return names;
}

const std::vector<std::string>& llama_cpp_architectures() {
  // LLM_ARCH_NAMES of src/llama-arch.cpp in the llama.cpp release node-llama-cpp 3.21.1 bundles (without "clip",
  // a vision encoder, and "(unknown)"); tests/llamacpp/check-generic compares it with that source.
  static const std::vector<std::string> names{
      "llama", "llama4", "deci", "falcon", "grok", "gpt2", "gptj", "gptneox", "mpt", "baichuan", "starcoder",
      "refact", "bert", "modern-bert", "nomic-bert", "nomic-bert-moe", "neo-bert", "jina-bert-v2",
      "jina-bert-v3", "eurobert", "bloom", "stablelm", "qwen", "qwen2", "qwen2moe", "qwen2vl", "qwen3",
      "qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe", "qwen4exp", "phi2", "phi3",
      "phimoe", "plamo", "plamo2", "plamo3", "codeshell", "orion", "internlm2", "minicpm", "minicpm3", "gemma",
      "gemma2", "gemma3", "gemma3n", "gemma4", "gemma4-assistant", "gemma-embedding", "starcoder2", "mamba",
      "mamba2", "jamba", "falcon-h1", "xverse", "command-r", "cohere2", "cohere2moe", "dbrx", "olmo", "olmo2",
      "olmoe", "muse-glimmer", "openelm", "arctic", "deepseek", "deepseek2", "deepseek2-ocr", "deepseek32",
      "deepseek4", "chatglm", "glm4", "glm4moe", "glm-dsa", "bitnet", "t5", "t5encoder", "jais", "jais2",
      "nemotron", "nemotron_h", "nemotron_h_moe", "exaone", "exaone4", "exaone-moe", "rwkv6", "rwkv6qwen2",
      "rwkv7", "arwkv7", "granite", "granitemoe", "granitehybrid", "graniteswitch", "granite_swa", "chameleon",
      "wavtokenizer-dec", "plm", "bailingmoe", "bailingmoe2", "bailingmoe3", "dots1", "dots3note", "arcee",
      "afmoe", "laguna", "ernie4_5", "ernie4_5-moe", "hunyuan-moe", "hunyuan-dense", "hunyuan_vl", "hy_v3",
      "smollm3", "gpt-oss", "lfm2", "lfm2moe", "dream", "smallthinker", "llada", "llada-moe", "seed_oss",
      "grovemoe", "apertus", "minimax-01", "minimax-m2", "minimax-m3", "cogvlm", "rnd1", "pangu-embedded",
      "mistral3", "eagle3", "dflash", "mistral4", "paddleocr", "mimo2", "step35", "llama-embed", "maincoder",
      "kimi-linear", "kimi-k3", "talkie", "mellum", "nanbeige", "qwen3tts", "pockettts"};
  return names;
}

bool is_sliding_layer(const ModelSpec& m, std::uint32_t layer) {
  if (!m.sliding_window || m.sliding_window->pattern == 0) return false;
  return layer % m.sliding_window->pattern != m.sliding_window->pattern - 1;
}

std::uint32_t attention_layers(const ModelSpec& m) { return m.layers - (m.state ? m.state->layers : 0); }

std::uint32_t kv_layers(const ModelSpec& m) { return attention_layers(m) - m.kv_shared_layers; }

bool keeps_hidden_output(const ModelSpec& m) { return traits(m.arch).hidden_output; }

bool has_qk_norm(const ModelSpec& m) { return traits(m.arch).qk_norm; }

const char* to_string(StateKind k) {
  switch (k) {
    case StateKind::shortconv: return "shortconv";
    case StateKind::mamba2: return "mamba2";
    case StateKind::gated_delta_net: return "gated_delta_net";
  }
  return "";
}

namespace {

// Gemma 3n's per-layer additions: the per-layer input gate and projection, AltUp's correction and prediction,
// LAuReL's low-rank residual (llama.cpp's llama_model_gemma3n::load_arch_tensors).
void gemma3n_layer_tensors(const ModelSpec& m, int i, std::vector<TensorShape>& out) {
  const std::uint64_t h = m.hidden, p = m.per_layer_embd, n = kGemma3nAltup, r = kGemma3nLaurelRank;
  out.push_back({block(i, "inp_gate.weight"), TensorRole::other, i, h, p});
  out.push_back({block(i, "proj.weight"), TensorRole::other, i, p, h});
  out.push_back({block(i, "post_norm.weight"), TensorRole::norm, i, h, 1});
  out.push_back({block(i, "altup_correct_coef.weight"), TensorRole::unquantized, i, n, n});
  out.push_back({block(i, "altup_correct_scale.weight"), TensorRole::norm, i, h, 1});
  out.push_back({block(i, "altup_predict_coef.weight"), TensorRole::unquantized, i, n, n * n});
  out.push_back({block(i, "altup_router.weight"), TensorRole::kept_f16, i, h, n});
  out.push_back({block(i, "altup_router_norm.weight"), TensorRole::norm, i, h, 1});
  out.push_back({block(i, "laurel_l.weight"), TensorRole::kept_f16, i, h, r});
  out.push_back({block(i, "laurel_r.weight"), TensorRole::kept_f16, i, r, h});
  out.push_back({block(i, "laurel_post_norm.weight"), TensorRole::norm, i, h, 1});
}

// Sets the layer count of the tensors from `from` on, and whether they stand for the last of `layers`.
void stand_for(std::vector<TensorShape>& out, std::size_t from, const LayerClass& c, std::uint32_t layers) {
  const bool last = c.count > 0 && c.first + (c.count - 1) * c.step + 1 == layers;
  for (std::size_t k = from; k < out.size(); ++k) {
    out[k].layer_count = c.count;
    out[k].last_layer = last;
  }
}

}  // namespace

std::vector<TensorShape> llama_tensors(const ModelSpec& m) {
  const ArchTraits& a = traits(m.arch);
  const std::uint64_t h = m.hidden, v = m.vocab.value_or(0);
  std::vector<TensorShape> out;
  out.push_back({"token_embd.weight", TensorRole::token_embd, -1, h, v});
  if (m.arch == "gemma3n") {
    const std::uint64_t p = std::uint64_t{m.per_layer_embd} * m.layers;
    out.push_back({"altup_proj.weight", TensorRole::kept_f16, -1, h, h * (kGemma3nAltup - 1)});
    out.push_back({"altup_unembd_proj.weight", TensorRole::kept_f16, -1, h, h * (kGemma3nAltup - 1)});
    out.push_back({"per_layer_token_embd.weight", TensorRole::token_embd, -1, p, v});
    out.push_back({"per_layer_model_proj.weight", TensorRole::kept_f16, -1, h, p});
    out.push_back({"per_layer_proj_norm.weight", TensorRole::norm, -1, m.per_layer_embd, 1});
  }
  const bool hybrid = a.layout == Layout::hybrid;
  for (const LayerClass& c : layer_classes(m.layers, m.moe ? m.moe->dense_layers : 0)) {
    const std::size_t from = out.size();
    const int i = static_cast<int>(c.first);
    out.push_back({block(i, "attn_norm.weight"), TensorRole::norm, i, h, 1});
    if (!hybrid) attention_tensors(m, a, i, out);
    if (a.post_norms || m.arch == "gpt-oss" || m.arch == "qwen3next") {
      out.push_back({block(i, "post_attention_norm.weight"), TensorRole::norm, i, h, 1});
    }
    if (m.arch != "gpt-oss" && m.arch != "qwen3next") out.push_back({block(i, "ffn_norm.weight"), TensorRole::norm, i, h, 1});
    ffn_tensors(m, a, i, out);
    if (a.post_norms) out.push_back({block(i, "post_ffw_norm.weight"), TensorRole::norm, i, h, 1});
    if (m.arch == "gemma3n") gemma3n_layer_tensors(m, i, out);
    stand_for(out, from, c, m.layers);
  }
  if (hybrid) {
    // Attention layers numbered among themselves, as llama-quant counts attn_v (i_attention_wv of n_attention_wv).
    for (const LayerClass& c : layer_classes(attention_layers(m), 0)) {
      const std::size_t from = out.size();
      attention_tensors(m, a, static_cast<int>(c.first), out);
      stand_for(out, from, c, attention_layers(m));  // the last block taken to attend (Qwen3-Next's interval does)
    }
    const std::size_t from = out.size();
    state_tensors(m, 0, out);
    stand_for(out, from, {0, m.state->layers, 1}, m.state->layers + 1);  // never the last block
  }
  // LFM2 stores its final norm as token_embd_norm (llama-arch.cpp LLM_TENSOR_OUTPUT_NORM_LFM2).
  const bool lfm2 = m.arch == "lfm2" || m.arch == "lfm2moe";
  out.push_back({lfm2 ? "token_embd_norm.weight" : "output_norm.weight", TensorRole::norm, -1, h, 1});
  if (!m.tied_embeddings) out.push_back({"output.weight", TensorRole::output, -1, h, v});
  if (m.rope_freqs) out.push_back({"rope_freqs.weight", TensorRole::rope_freqs, -1, m.head_dim / 2, 1});
  return out;
}

double tensor_weights(const TensorShape& t) { return static_cast<double>(t.row_length * t.rows) * t.layer_count; }

std::string_view in_block(std::string_view name) {
  if (!name.starts_with("blk.")) return name;
  const std::size_t dot = name.find('.', 4);
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

namespace {

// The size m states for ft, or nullptr.
const FormatSize* stated_size(const ModelSpec& m, const FileType& ft) {
  const auto it = std::ranges::find_if(m.formats, [&](const auto& f) { return same_name(f.first, ft.name); });
  return it == m.formats.end() ? nullptr : &it->second;
}

}  // namespace

bool file_tensors(const ModelSpec& m, const FileType& ft) {
  const FormatSize* size = stated_size(m, ft);
  return size && size->tensors && !size->tensors->empty();
}

std::shared_ptr<const std::vector<TypedTensor>> typed_tensors(const ModelSpec& m, const FileType& ft) {
  if (file_tensors(m, ft)) return stated_size(m, ft)->tensors;
  const MixContext mix = mix_of(m);
  std::vector<TypedTensor> out;
  for (TensorShape& t : llama_tensors(m)) {
    const std::uint32_t layer = t.layer < 0 ? 0 : static_cast<std::uint32_t>(t.layer);
    const GgmlType* type = tensor_type(ft, t.role, layer, t.row_length, mix, t.routed_experts > 1);
    const double bytes = type ? static_cast<double>(*tensor_bytes(*type, t.row_length, t.rows)) * t.layer_count : 0;
    out.push_back({std::move(t), type, bytes});
  }
  return std::make_shared<const std::vector<TypedTensor>>(std::move(out));
}

namespace {

// typed_tensors(m, ft), or no tensors for a model without a vocabulary (a profile that states its sizes).
std::shared_ptr<const std::vector<TypedTensor>> typed_or_none(const ModelSpec& m, const FileType& ft) {
  return m.vocab ? typed_tensors(m, ft) : std::make_shared<const std::vector<TypedTensor>>();
}

}  // namespace

bool row_lookup(const ModelSpec& m, std::string_view tensor_name) {
  return tensor_name == "per_layer_token_embd.weight" || (tensor_name == "token_embd.weight" && !m.tied_embeddings);
}

double active_fraction(const ModelSpec& m, const TensorShape& t) {
  if (row_lookup(m, t.name)) return t.rows > 0 ? 1.0 / static_cast<double>(t.rows) : 0.0;  // the token's row
  if (t.routed_experts == 0 || !m.moe) return 1.0;
  return static_cast<double>(m.moe->used) / t.routed_experts;
}

bool prompt_matmul(const TensorShape& t) { return t.layer >= 0 && t.rows > 1; }

namespace {

// Adds w weights of `type` to its row of `out`, or a row at the end.
void add_weights(std::vector<TypedWeights>& out, const GgmlType* type, double w) {
  const auto row = std::find_if(out.begin(), out.end(), [&](const TypedWeights& x) { return x.type == type; });
  if (row == out.end()) {
    out.push_back({type, w});
  } else {
    row->weights += w;
  }
}

}  // namespace

std::vector<TypedWeights> matmul_weights(const ModelSpec& m, const FileType& ft, std::span<const TypedTensor> typed) {
  if (const FormatSize* size = stated_size(m, ft); size && !size->prompt_matmuls.empty()) return size->prompt_matmuls;
  if (!m.vocab) return {{find_ggml_type(ft.base), m.params.value_or(0)}};
  std::vector<TypedWeights> out;
  for (const TypedTensor& t : typed) {
    if (t.type && prompt_matmul(t.shape)) {
      add_weights(out, t.type, tensor_weights(t.shape) * active_fraction(m, t.shape));
    }
  }
  return out;
}

std::vector<TypedWeights> matmul_weights(const ModelSpec& m, const FileType& ft) {
  return matmul_weights(m, ft, *typed_or_none(m, ft));
}

std::vector<TypedWeights> token_matmul_weights(const ModelSpec& m, const FileType& ft) {
  if (const FormatSize* size = stated_size(m, ft); size && !size->token_matmuls.empty()) return size->token_matmuls;
  std::vector<TypedWeights> out;
  for (const auto tensors = typed_tensors(m, ft); const TypedTensor& t : *tensors) {
    if (t.type && t.shape.rows > 1 && !row_lookup(m, t.shape.name)) {
      add_weights(out, t.type, tensor_weights(t.shape) * active_fraction(m, t.shape));
    }
  }
  return out;
}

TensorShape file_tensor_shape(const ModelSpec& m, std::span<const TensorShape> listed, std::string_view name,
                              std::span<const std::uint64_t> dims) {
  TensorShape t{std::string(name), TensorRole::other, -1, dims.empty() ? 0 : dims[0], 1};
  for (std::size_t i = 1; i < dims.size(); ++i) t.rows *= dims[i];
  const std::string_view part = in_block(name);
  if (part.size() < name.size()) {
    const std::string_view number = name.substr(4, name.size() - part.size() - 5);  // between "blk." and "."
    std::uint32_t layer = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), layer);
    if (ec == std::errc() && end == number.data() + number.size() && layer <= INT32_MAX) {
      t.layer = static_cast<int>(layer);
      t.last_layer = layer + 1 == m.layers;
    }
  }
  if (name.find("_exps.") != std::string_view::npos && dims.size() >= 2) {
    t.routed_experts = static_cast<std::uint32_t>(std::min<std::uint64_t>(dims.back(), UINT32_MAX));
  }
  t.role = t.rows > 1 ? TensorRole::other : TensorRole::norm;
  for (const TensorShape& s : listed) {
    if ((s.layer < 0) == (t.layer < 0) && in_block(s.name) == part) {
      t.role = s.role;
      break;
    }
  }
  return t;
}

std::optional<double> active_param_count(const ModelSpec& m) {
  if (!m.vocab) return m.params;
  double n = 0;
  for (const TensorShape& t : llama_tensors(m)) {
    n += tensor_weights(t) * (t.name == "token_embd.weight" ? 1.0 : active_fraction(m, t));
  }
  return n;
}

std::optional<double> param_count(const ModelSpec& m) {
  if (!m.vocab) return m.params;
  double n = 0;
  for (const TensorShape& t : llama_tensors(m)) n += tensor_weights(t);
  return n;
}

std::optional<double> quality_param_count(const ModelSpec& m) {
  if (!m.vocab) return m.params;
  double n = 0;
  for (const TensorShape& t : llama_tensors(m)) {
    if (t.name != "per_layer_token_embd.weight") n += tensor_weights(t);
  }
  return n;
}

const char* to_string(SizeSource s) {
  switch (s) {
    case SizeSource::stated_bytes: return "profile bytes";
    case SizeSource::stated_bits: return "profile bits/weight";
    case SizeSource::tensor_rules: return "llama.cpp tensor rules";
    case SizeSource::params_times_bits: return "params x effective bits";
  }
  return "";
}

double matmul_bits_per_weight(const WeightSize& w) {
  double weights = 0, bits = 0;
  for (const TypedWeights& t : w.matmuls) {
    weights += t.weights;
    bits += t.weights * t.type->bits_per_weight();
  }
  return weights > 0 ? bits / weights : w.bits_per_weight;
}

Result<WeightSize> weight_size(const ModelSpec& m, const FileType& ft) {
  // The tensor list under ft's rules, made once (a sweep over model numbers sizes every combination).
  const std::shared_ptr<const std::vector<TypedTensor>> typed_list = typed_or_none(m, ft);
  const std::vector<TypedTensor>& typed = *typed_list;
  std::vector<TypedWeights> matmuls = matmul_weights(m, ft, typed);
  std::optional<double> params = m.params;  // param_count(m)
  if (m.vocab) {
    params = 0.0;
    for (const TypedTensor& t : typed) *params += tensor_weights(t.shape);
  }
  // The tensor rules' bytes (total, read per token), summed once: a stated size is read per token in their share
  // (expert stacks at used / experts, one row of a lookup table).
  const auto [rule_bytes, rule_active] = m.vocab ? tensor_rule_bytes(m, typed) : std::pair<double, double>{};
  const double share = rule_bytes > 0 ? rule_active / rule_bytes : 1.0;
  for (const auto& [name, size] : m.formats) {
    if (!same_name(name, ft.name)) continue;
    if (size.bytes) {
      const double bits = params ? *size.bytes * 8 / *params : 0;
      return WeightSize{*size.bytes, size.active_bytes.value_or(*size.bytes * share), bits, SizeSource::stated_bytes,
                        std::move(matmuls)};
    }
    if (size.bits_per_weight && params) {
      const double bytes = *params * *size.bits_per_weight / 8;
      return WeightSize{bytes, bytes * share, *size.bits_per_weight, SizeSource::stated_bits, std::move(matmuls)};
    }
  }
  if (!ft.quantize_target) {
    return Error{"model '" + m.name + "' has no size for " + std::string(ft.name) + ": llama-quantize does not make " +
                 std::string(ft.name) + " files, so edgeplan costs them only from the file itself (--model file.gguf)"};
  }
  if (m.vocab) {
    for (const TypedTensor& t : typed) {
      if (!t.type) {
        return Error{"model '" + m.name + "' cannot be quantized to " + std::string(ft.name) + ": llama.cpp refuses " +
                     t.shape.name + " (rows of " + std::to_string(t.shape.row_length) + " weights are not a multiple of the " +
                     std::string(ft.base) + " block, and it defines no fallback)"};
      }
    }
    if (rule_bytes > limits::kWeightBytes) {
      return Error{"model '" + m.name + "' would hold " + std::to_string(rule_bytes / 0x1p60) + " EiB of weights in " +
                   std::string(ft.name) + ": more than the 1 EiB edgeplan plans for (check its shape)"};
    }
    return WeightSize{rule_bytes, rule_active, rule_bytes * 8 / *params, SizeSource::tensor_rules, std::move(matmuls)};
  }
  if (params) {
    const double bits = effective_bits_per_weight(ft);
    return WeightSize{*params * bits / 8, *params * bits / 8, bits, SizeSource::params_times_bits, std::move(matmuls)};
  }
  return Error{"model '" + m.name + "' has no size for " + std::string(ft.name) +
               ": give params, vocab, or formats." + std::string(ft.name) + " in its profile"};
}

namespace {

// effective_bits_per_weight worked out: the tensor rules over Llama-2-7B's tensors (some 300 of them).
double llama2_7b_bits_per_weight(const FileType& ft) {
  ModelSpec llama2_7b;
  llama2_7b.name = "llama-2-7b";
  llama2_7b.layers = 32;
  llama2_7b.hidden = 4096;
  llama2_7b.heads = 32;
  llama2_7b.kv_heads = 32;
  llama2_7b.head_dim = 128;
  llama2_7b.ffn = 11008;
  llama2_7b.vocab = 32000;
  double matrix_weights = 0;
  for (const TensorShape& t : llama_tensors(llama2_7b)) {
    if (t.rows > 1) matrix_weights += tensor_weights(t);
  }
  return tensor_rule_bytes(llama2_7b, *typed_tensors(llama2_7b, ft), true).first * 8 / matrix_weights;
}

}  // namespace

double effective_bits_per_weight(const FileType& ft) {
  // A constant of the file type, which a sweep over a model's numbers asks for on every combination: each of
  // file_types() is worked out once, when first asked for (any thread may store it: every one stores the same).
  const std::span<const FileType> all = file_types();
  // std::less orders pointers into different arrays too (the built-in < need not): a FileType made elsewhere
  // (a profile's own format) is worked out each time.
  const std::less<const FileType*> before;
  if (before(&ft, all.data()) || !before(&ft, all.data() + all.size())) return llama2_7b_bits_per_weight(ft);
  static std::vector<std::atomic<double>> known = [&] {
    std::vector<std::atomic<double>> v(all.size());
    for (std::atomic<double>& b : v) b.store(-1, std::memory_order_relaxed);
    return v;
  }();
  std::atomic<double>& slot = known[static_cast<std::size_t>(&ft - all.data())];
  double bits = slot.load(std::memory_order_relaxed);
  if (bits < 0) {
    bits = llama2_7b_bits_per_weight(ft);
    slot.store(bits, std::memory_order_relaxed);
  }
  return bits;
}

}  // namespace edgeplan
