#include "edgeplan/core/model.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

#include "edgeplan/core/limits.hpp"

namespace edgeplan {
namespace {

std::string block(int i, const char* what) { return "blk." + std::to_string(i) + "." + what; }

// What an architecture adds to the llama layout.
struct ArchTraits {
  std::string_view name;
  bool qk_norm;     // attn_q_norm / attn_k_norm of head_dim (Qwen3, Gemma 3)
  bool post_norms;  // attn_post_norm / ffn_post_norm (Gemma 2/3)
  bool fused;       // attn_qkv and a gate+up ffn_up of 2 x ffn rows, no ffn_gate (Phi-3)
  bool mla;         // multi-head latent attention tensors (DeepSeek V2/V3)
};

constexpr ArchTraits kArchs[] = {
    {"llama", false, false, false, false},  {"qwen2", false, false, false, false},
    {"qwen3", true, false, false, false},   {"qwen3moe", true, false, false, false},
    {"gemma2", false, true, false, false},  {"gemma3", true, true, false, false},
    {"phi3", false, false, true, false},    {"deepseek2", false, false, false, true},
};

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
  return MixContext{m.layers, m.heads, m.kv_heads, experts, m.tied_embeddings, size_70b};
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
    out.push_back({block(i, "attn_q.weight"), TensorRole::attn_q, i, h, q});
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
  out.push_back({block(i, "ffn_gate_inp.weight"), TensorRole::router, i, h, n});
  out.push_back({block(i, "ffn_gate_exps.weight"), TensorRole::ffn_gate, i, h, ef * n, e.experts});
  out.push_back({block(i, "ffn_up_exps.weight"), TensorRole::ffn_up, i, h, ef * n, e.experts});
  out.push_back({block(i, "ffn_down_exps.weight"), TensorRole::ffn_down, i, ef, h * n, e.experts});
  if (e.shared_experts > 0) {
    const std::uint64_t sf = ef * e.shared_experts;
    out.push_back({block(i, "ffn_gate_shexp.weight"), TensorRole::ffn_gate, i, h, sf});
    out.push_back({block(i, "ffn_up_shexp.weight"), TensorRole::ffn_up, i, h, sf});
    out.push_back({block(i, "ffn_down_shexp.weight"), TensorRole::ffn_down, i, sf, h});
  }
}

// Bytes of m's tensors stored as ft (total and read per token); with `matrices_only`, of its 2-D weight
// matrices alone.
std::pair<double, double> tensor_rule_bytes(const ModelSpec& m, const FileType& ft, bool matrices_only = false) {
  double total = 0, active = 0;
  for (const TypedTensor& t : typed_tensors(m, ft)) {
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

bool is_sliding_layer(const ModelSpec& m, std::uint32_t layer) {
  if (!m.sliding_window || m.sliding_window->pattern == 0) return false;
  return layer % m.sliding_window->pattern != m.sliding_window->pattern - 1;
}

std::vector<TensorShape> llama_tensors(const ModelSpec& m) {
  const ArchTraits& a = traits(m.arch);
  const std::uint64_t h = m.hidden, v = m.vocab.value_or(0);
  std::vector<TensorShape> out;
  out.push_back({"token_embd.weight", TensorRole::token_embd, -1, h, v});
  for (const LayerClass& c : layer_classes(m.layers, m.moe ? m.moe->dense_layers : 0)) {
    const std::size_t from = out.size();
    const int i = static_cast<int>(c.first);
    out.push_back({block(i, "attn_norm.weight"), TensorRole::norm, i, h, 1});
    attention_tensors(m, a, i, out);
    if (a.post_norms) out.push_back({block(i, "post_attention_norm.weight"), TensorRole::norm, i, h, 1});
    out.push_back({block(i, "ffn_norm.weight"), TensorRole::norm, i, h, 1});
    ffn_tensors(m, a, i, out);
    if (a.post_norms) out.push_back({block(i, "post_ffw_norm.weight"), TensorRole::norm, i, h, 1});
    for (std::size_t k = from; k < out.size(); ++k) out[k].layer_count = c.count;
  }
  out.push_back({"output_norm.weight", TensorRole::norm, -1, h, 1});
  if (!m.tied_embeddings) out.push_back({"output.weight", TensorRole::output, -1, h, v});
  if (m.rope_freqs) out.push_back({"rope_freqs.weight", TensorRole::rope_freqs, -1, m.head_dim / 2, 1});
  return out;
}

double tensor_weights(const TensorShape& t) { return static_cast<double>(t.row_length * t.rows) * t.layer_count; }

std::vector<TypedTensor> typed_tensors(const ModelSpec& m, const FileType& ft) {
  const MixContext mix = mix_of(m);
  std::vector<TypedTensor> out;
  for (TensorShape& t : llama_tensors(m)) {
    const std::uint32_t layer = t.layer < 0 ? 0 : static_cast<std::uint32_t>(t.layer);
    const GgmlType* type = tensor_type(ft, t.role, layer, t.row_length, mix, t.routed_experts > 1);
    const double bytes = type ? static_cast<double>(*tensor_bytes(*type, t.row_length, t.rows)) * t.layer_count : 0;
    out.push_back({std::move(t), type, bytes});
  }
  return out;
}

double active_fraction(const ModelSpec& m, const TensorShape& t) {
  if (t.routed_experts == 0 || !m.moe) return 1.0;
  return static_cast<double>(m.moe->used) / t.routed_experts;
}

std::optional<double> active_param_count(const ModelSpec& m) {
  if (!m.vocab) return m.params;
  double n = 0;
  for (const TensorShape& t : llama_tensors(m)) n += tensor_weights(t) * active_fraction(m, t);
  return n;
}

std::optional<double> param_count(const ModelSpec& m) {
  if (!m.vocab) return m.params;
  double n = 0;
  for (const TensorShape& t : llama_tensors(m)) n += tensor_weights(t);
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

Result<WeightSize> weight_size(const ModelSpec& m, const FileType& ft) {
  const std::optional<double> params = param_count(m);
  // A stated size of a mixture of experts is read per token in the share the tensor rules give.
  double share = 1.0;
  if (m.moe && m.vocab) {
    const auto [bytes, active] = tensor_rule_bytes(m, ft);
    share = active / bytes;
  }
  for (const auto& [name, size] : m.formats) {
    if (!same_name(name, ft.name)) continue;
    if (size.bytes) {
      const double bits = params ? *size.bytes * 8 / *params : 0;
      return WeightSize{*size.bytes, size.active_bytes.value_or(*size.bytes * share), bits, SizeSource::stated_bytes};
    }
    if (size.bits_per_weight && params) {
      const double bytes = *params * *size.bits_per_weight / 8;
      return WeightSize{bytes, bytes * share, *size.bits_per_weight, SizeSource::stated_bits};
    }
  }
  if (!ft.quantize_target) {
    return Error{"model '" + m.name + "' has no size for " + std::string(ft.name) + ": llama-quantize does not make " +
                 std::string(ft.name) + " files, so edgeplan costs them only from the file itself (--model file.gguf)"};
  }
  if (m.vocab) {
    for (const TypedTensor& t : typed_tensors(m, ft)) {
      if (!t.type) {
        return Error{"model '" + m.name + "' cannot be quantized to " + std::string(ft.name) + ": llama.cpp refuses " +
                     t.shape.name + " (rows of " + std::to_string(t.shape.row_length) + " weights are not a multiple of the " +
                     std::string(ft.base) + " block, and it defines no fallback)"};
      }
    }
    const auto [bytes, active] = tensor_rule_bytes(m, ft);
    if (bytes > limits::kWeightBytes) {
      return Error{"model '" + m.name + "' would hold " + std::to_string(bytes / 0x1p60) + " EiB of weights in " +
                   std::string(ft.name) + ": more than the 1 EiB edgeplan plans for (check its shape)"};
    }
    return WeightSize{bytes, active, bytes * 8 / *params, SizeSource::tensor_rules};
  }
  if (params) {
    const double bits = effective_bits_per_weight(ft);
    return WeightSize{*params * bits / 8, *params * bits / 8, bits, SizeSource::params_times_bits};
  }
  return Error{"model '" + m.name + "' has no size for " + std::string(ft.name) +
               ": give params, vocab, or formats." + std::string(ft.name) + " in its profile"};
}

double effective_bits_per_weight(const FileType& ft) {
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
  return tensor_rule_bytes(llama2_7b, ft, true).first * 8 / matrix_weights;
}

}  // namespace edgeplan
