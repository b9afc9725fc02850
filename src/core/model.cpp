#include "edgeplan/core/model.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace edgeplan {
namespace {

std::string block(int i, const char* what) { return "blk." + std::to_string(i) + "." + what; }

MixContext mix_of(const ModelSpec& m) {
  return MixContext{m.layers, m.heads, m.kv_heads, 0, m.tied_embeddings};
}

// Bytes of m's tensors stored as ft; with `matrices_only`, of its 2-D weight matrices alone.
double tensor_rule_bytes(const ModelSpec& m, const FileType& ft, bool matrices_only = false) {
  const MixContext mix = mix_of(m);
  double total = 0;
  for (const TensorShape& t : llama_tensors(m)) {
    if (matrices_only && t.rows == 1) continue;
    const std::uint32_t layer = t.layer < 0 ? 0 : static_cast<std::uint32_t>(t.layer);
    const GgmlType& type = tensor_type(ft, t.role, layer, t.row_length, mix);
    total += static_cast<double>(*tensor_bytes(type, t.row_length, t.rows));
  }
  return total;
}

bool same_name(const std::string& a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
  });
}

}  // namespace

std::vector<TensorShape> llama_tensors(const ModelSpec& m) {
  const std::uint64_t h = m.hidden, q = std::uint64_t{m.heads} * m.head_dim,
                      kv = std::uint64_t{m.kv_heads} * m.head_dim, f = m.ffn, v = m.vocab.value_or(0);
  std::vector<TensorShape> out;
  out.push_back({"token_embd.weight", TensorRole::token_embd, -1, h, v});
  for (int i = 0; i < static_cast<int>(m.layers); ++i) {
    out.push_back({block(i, "attn_norm.weight"), TensorRole::norm, i, h, 1});
    out.push_back({block(i, "attn_q.weight"), TensorRole::attn_q, i, h, q});
    out.push_back({block(i, "attn_k.weight"), TensorRole::attn_k, i, h, kv});
    out.push_back({block(i, "attn_v.weight"), TensorRole::attn_v, i, h, kv});
    if (m.qkv_bias) {
      out.push_back({block(i, "attn_q.bias"), TensorRole::bias, i, q, 1});
      out.push_back({block(i, "attn_k.bias"), TensorRole::bias, i, kv, 1});
      out.push_back({block(i, "attn_v.bias"), TensorRole::bias, i, kv, 1});
    }
    out.push_back({block(i, "attn_output.weight"), TensorRole::attn_output, i, q, h});
    out.push_back({block(i, "ffn_norm.weight"), TensorRole::norm, i, h, 1});
    out.push_back({block(i, "ffn_gate.weight"), TensorRole::ffn_gate, i, h, f});
    out.push_back({block(i, "ffn_up.weight"), TensorRole::ffn_up, i, h, f});
    out.push_back({block(i, "ffn_down.weight"), TensorRole::ffn_down, i, f, h});
  }
  out.push_back({"output_norm.weight", TensorRole::norm, -1, h, 1});
  if (!m.tied_embeddings) out.push_back({"output.weight", TensorRole::output, -1, h, v});
  if (m.rope_freqs) out.push_back({"rope_freqs.weight", TensorRole::rope_freqs, -1, m.head_dim / 2, 1});
  return out;
}

std::optional<double> param_count(const ModelSpec& m) {
  if (!m.vocab) return m.params;
  double n = 0;
  for (const TensorShape& t : llama_tensors(m)) n += static_cast<double>(t.row_length * t.rows);
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
  for (const auto& [name, size] : m.formats) {
    if (!same_name(name, ft.name)) continue;
    if (size.bytes) {
      const double bits = params ? *size.bytes * 8 / *params : 0;
      return WeightSize{*size.bytes, bits, SizeSource::stated_bytes};
    }
    if (size.bits_per_weight && params) {
      return WeightSize{*params * *size.bits_per_weight / 8, *size.bits_per_weight, SizeSource::stated_bits};
    }
  }
  if (m.vocab) {
    const double bytes = tensor_rule_bytes(m, ft);
    return WeightSize{bytes, bytes * 8 / *params, SizeSource::tensor_rules};
  }
  if (params) {
    const double bits = effective_bits_per_weight(ft);
    return WeightSize{*params * bits / 8, bits, SizeSource::params_times_bits};
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
    if (t.rows > 1) matrix_weights += static_cast<double>(t.row_length * t.rows);
  }
  return tensor_rule_bytes(llama2_7b, ft, true) * 8 / matrix_weights;
}

}  // namespace edgeplan
