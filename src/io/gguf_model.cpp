// GGUF model file -> ModelSpec: the shape from the {arch}.* metadata keys
// (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md, "Standardized key-value pairs"),
// the weight bytes from the file's own tensor infos (never the tensor data).
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/limits.hpp"
#include "edgeplan/io/model_file.hpp"
#include "edgeplan/util/names.hpp"
#include "edgeplan/io/text.hpp"

namespace edgeplan::io {
namespace {

struct Meta {
  const GgufFile& file;
  std::string arch;
  std::string display;

  [[noreturn]] void fail(const std::string& what) const { throw std::runtime_error(display + ": " + what); }

  // A count stored as an integer or a per-layer array of integers (the largest entry).
  // Refused outside `range` (core/limits.hpp) before it is narrowed.
  std::optional<std::uint32_t> optional_count(const std::string& suffix, CountRange range) const {
    const std::string key = arch + "." + suffix;
    const GgufValue* v = file.find(key);
    if (!v) return std::nullopt;
    std::optional<std::uint64_t> n = v->as_uint();
    if (const auto* items = std::get_if<GgufArray>(&v->value)) {
      if (!items->holds_integers()) fail(key + " must hold whole numbers");
      for (std::uint64_t i = 0; i < items->length; ++i) {
        const auto x = items->as_uint(i);
        if (!x) fail(key + " must hold whole numbers");
        n = std::max(n.value_or(0), *x);
      }
    }
    if (!n || *n < range.min) fail(fmt::format("{} must be a whole number of at least {}", key, range.min));
    if (*n > range.max) fail(fmt::format("{} must be at most {} (got {})", key, range.max, *n));
    return static_cast<std::uint32_t>(*n);
  }

  std::uint32_t count(const std::string& suffix, CountRange range) const {
    if (auto v = optional_count(suffix, range)) return *v;
    fail(arch + "." + suffix + " is missing");
  }
};

const GgufTensor* tensor(const GgufFile& f, std::string_view name) {
  auto it = std::ranges::find_if(f.tensors, [&](const GgufTensor& t) { return t.name == name; });
  return it == f.tensors.end() ? nullptr : &*it;
}

ModelSpec read_model(const GgufFile& f, const std::string& name, const std::string& display) {
  const std::optional<std::string> arch = f.string("general.architecture");
  if (!arch) throw std::runtime_error(display + ": general.architecture is missing");
  if (f.string("general.type") == "adapter") {
    throw std::runtime_error(display + ": is a LoRA adapter, not a model (pass it to `edgeplan lora --adapter`)");
  }
  const std::vector<std::string>& known = architectures();
  if (std::ranges::find(known, *arch) == known.end()) {
    throw std::runtime_error(fmt::format("{}: architecture \"{}\" is not supported; supported: {}{}", display, clipped(*arch),
                                         fmt::join(known, ", "), util::did_you_mean(*arch, known)));
  }
  const Meta meta{f, *arch, display};
  ModelSpec m;
  m.name = name;
  m.arch = *arch;
  m.layers = meta.count("block_count", layers_range);
  m.hidden = meta.count("embedding_length", width_range);
  m.heads = meta.count("attention.head_count", heads_range);
  m.kv_heads = meta.optional_count("attention.head_count_kv", heads_range).value_or(m.heads);
  if (!f.find(*arch + ".attention.key_length") && m.hidden < m.heads) {
    meta.fail(fmt::format("{}.embedding_length ({}) must be at least {}.attention.head_count ({}) when "
                          "attention.key_length is not given", m.arch, m.hidden, m.arch, m.heads));
  }
  m.head_dim = meta.optional_count("attention.key_length", head_dim_range).value_or(m.hidden / m.heads);
  m.ffn = meta.optional_count("feed_forward_length", width_range).value_or(0);
  m.context_tokens = meta.optional_count("context_length", context_range);
  if (const GgufValue* factor = f.find(*arch + ".rope.scaling.factor");
      m.context_tokens && factor && f.string(*arch + ".rope.scaling.type") == "yarn") {
    const double* x = std::get_if<double>(&factor->value);
    const double original = meta.optional_count("rope.scaling.original_context_length", context_range).value_or(0);
    if (x && *x > 1) {
      const double scaled = yarn_context(*m.context_tokens, original, *x);
      if (!(scaled <= context_range.max)) meta.fail(fmt::format("the YaRN context ({:.0f}) is more than {}", scaled, context_range.max));
      m.context_tokens = static_cast<std::uint32_t>(scaled);
    }
  }
  const GgufTensor* embd = tensor(f, "token_embd.weight");
  if (!embd || embd->dims.size() != 2) meta.fail("token_embd.weight (2-D) is missing");
  if (embd->dims[1] < vocab_range.min || embd->dims[1] > vocab_range.max) {
    meta.fail(fmt::format("token_embd.weight has {} rows: the vocabulary must be from {} to {}", embd->dims[1],
                          vocab_range.min, vocab_range.max));
  }
  m.vocab = static_cast<std::uint32_t>(embd->dims[1]);
  m.tied_embeddings = tensor(f, "output.weight") == nullptr;
  m.qkv_bias = tensor(f, "blk.0.attn_q.bias") != nullptr;
  m.rope_freqs = tensor(f, "rope_freqs.weight") != nullptr;
  if (auto experts = meta.optional_count("expert_count", optional_experts_range); experts && *experts > 1) {
    m.moe = MoeSpec{*experts, meta.count("expert_used_count", used_range),
                    meta.optional_count("expert_feed_forward_length", width_range).value_or(m.ffn),
                    meta.optional_count("expert_shared_count", optional_experts_range).value_or(0),
                    meta.optional_count("leading_dense_block_count", dense_layers_range).value_or(0)};
  }
  if (m.ffn == 0) m.ffn = m.moe ? m.moe->expert_ffn : meta.count("feed_forward_length", width_range);
  if (auto rank = meta.optional_count("attention.kv_lora_rank", width_range)) {
    const std::uint32_t rope = meta.count("rope.dimension_count", head_dim_range);
    const std::uint32_t key = meta.optional_count("attention.key_length_mla", head_dim_range).value_or(m.head_dim);
    const std::uint32_t value = meta.optional_count("attention.value_length_mla", head_dim_range)
                                    .value_or(meta.optional_count("attention.value_length", head_dim_range).value_or(m.head_dim));
    if (key <= rope) meta.fail("attention.key_length must exceed rope.dimension_count");
    m.mla = MlaSpec{*rank, meta.optional_count("attention.q_lora_rank", optional_width_range).value_or(0), rope, key - rope, value};
    m.kv_heads = m.heads;
    m.head_dim = value;
  }
  if (auto window = meta.optional_count("attention.sliding_window", context_range)) {
    // llama.cpp fixes the pattern for Gemma 2 (alternating) and Gemma 3 (one global in 6) unless stated.
    const std::uint32_t fallback = m.arch == "gemma2" ? 2 : m.arch == "gemma3" ? 6 : 0;
    const std::uint32_t pattern = meta.optional_count("attention.sliding_window_pattern", pattern_range).value_or(fallback);
    if (pattern > 0) m.sliding_window = SlidingWindow{*window, pattern};
  }
  // The file's own size for its file type: every tensor's bytes, expert stacks read at used / experts.
  double bytes = 0, active = 0;
  for (const GgufTensor& t : f.tensors) {
    const double b = static_cast<double>(t.bytes);
    bytes += b;
    active += m.moe && t.name.find("_exps.") != std::string::npos ? b * m.moe->used / m.moe->experts : b;
  }
  const auto ftype = f.find("general.file_type");
  const auto id = ftype ? ftype->as_uint() : std::nullopt;
  if (const FileType* ft = id && *id <= UINT32_MAX ? find_file_type_id(static_cast<std::uint32_t>(*id)) : nullptr) {
    m.formats.emplace(std::string(ft->name), FormatSize{std::nullopt, bytes, active});
    m.file_format = std::string(ft->name);
  }
  return m;
}

}  // namespace

Result<ModelSpec> model_from_gguf(const GgufFile& f, const std::string& name, const std::string& display) {
  try {
    return read_model(f, name, display);
  } catch (const std::runtime_error& e) {
    return Error{e.what()};
  }
}

}  // namespace edgeplan::io
