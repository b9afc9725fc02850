// GGUF model file -> ModelSpec: the shape from the {arch}.* metadata keys
// (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md, "Standardized key-value pairs"),
// the weight bytes from the file's own tensor infos (never the tensor data).
#include <algorithm>
#include <utility>

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

  // Entries of a per-layer integer array that are 0 (0 when the key holds one number or is absent).
  std::uint32_t zero_entries(const std::string& suffix) const {
    const GgufValue* v = file.find(arch + "." + suffix);
    const auto* items = v ? std::get_if<GgufArray>(&v->value) : nullptr;
    std::uint32_t zeros = 0;
    for (std::uint64_t i = 0; items && i < items->length; ++i) zeros += items->as_uint(i) == 0 ? 1 : 0;
    return zeros;
  }
};

// The state layers of a hybrid: those with head_count_kv 0 (LFM2, Granite; llama.cpp's is_recr_impl), or all but
// every full_attention_interval-th (Qwen3-Next, default 4); their sizes from {arch}.shortconv.l_cache or
// {arch}.ssm.* (llama.cpp's load_arch_hparams of lfm2, granitehybrid, qwen3next).
StateSpec read_state(const Meta& meta, const ModelSpec& m) {
  StateSpec s;
  if (m.arch == "qwen3next") {
    s.layers = m.layers - m.layers / meta.optional_count("full_attention_interval", layers_range).value_or(4);
  } else {
    s.layers = meta.zero_entries("attention.head_count_kv");
  }
  if (s.layers == 0 || s.layers >= m.layers) {
    meta.fail(fmt::format("{}.attention.head_count_kv must give 0 to some layers (the state layers) and not to all", meta.arch));
  }
  if (m.arch == "lfm2" || m.arch == "lfm2moe") {
    s.kind = StateKind::shortconv;
    s.conv_kernel = meta.count("shortconv.l_cache", pattern_range);
    return s;
  }
  s.kind = m.arch == "granitehybrid" ? StateKind::mamba2 : StateKind::gated_delta_net;
  s.conv_kernel = meta.count("ssm.conv_kernel", pattern_range);
  s.inner = meta.count("ssm.inner_size", width_range);
  s.state_dim = meta.count("ssm.state_size", width_range);
  s.groups = meta.count("ssm.group_count", heads_range);
  s.heads = meta.count("ssm.time_step_rank", heads_range);
  return s;
}

const GgufTensor* tensor(const GgufFile& f, std::string_view name) {
  auto it = std::ranges::find_if(f.tensors, [&](const GgufTensor& t) { return t.name == name; });
  return it == f.tensors.end() ? nullptr : &*it;
}

// A tensor the architecture's list names (by its name within a block) must have the shape the metadata gives it:
// a file whose tensors contradict its own header is refused rather than costed by either.
void check_shape(const Meta& meta, std::span<const TensorShape> listed, const TensorShape& file, const GgufTensor& t) {
  const std::string_view part = in_block(file.name);
  for (const TensorShape& s : listed) {
    if ((s.layer < 0) != (file.layer < 0) || in_block(s.name) != part) continue;
    if (s.row_length != file.row_length || s.rows != file.rows) {
      meta.fail(fmt::format("tensor {} is [{}] but the metadata ({}.*) makes it {} x {}", clipped(t.name),
                            fmt::join(t.dims, ", "), meta.arch, s.row_length, s.rows));
    }
    return;
  }
}

// The base whose graph the generic rule costs an architecture by (docs/model.md, "Generic architectures"): deepseek2
// for latent attention (attention.kv_lora_rank), granitehybrid for Mamba-2 state layers (ssm.state_size, and layers
// whose attention.head_count_kv is 0), else llama.
std::string generic_base(const Meta& meta) {
  if (meta.file.find(meta.arch + ".attention.kv_lora_rank")) return "deepseek2";
  if (meta.file.find(meta.arch + ".ssm.state_size") && meta.zero_entries("attention.head_count_kv") > 0) {
    return "granitehybrid";
  }
  return "llama";
}

ModelSpec read_model(const GgufFile& f, const std::string& name, const std::string& display, bool force_generic) {
  const std::optional<std::string> arch = f.string("general.architecture");
  if (!arch) throw std::runtime_error(display + ": general.architecture is missing");
  if (f.string("general.type") == "adapter") {
    throw std::runtime_error(display + ": is a LoRA adapter, not a model (pass it to `edgeplan lora --adapter`)");
  }
  const std::vector<std::string>& known = architectures();
  const std::vector<std::string>& loaded = llama_cpp_architectures();
  const bool modelled = std::ranges::find(known, *arch) != known.end();
  if (!modelled && std::ranges::find(loaded, *arch) == loaded.end()) {
    throw std::runtime_error(fmt::format("{}: architecture \"{}\" is not one llama.cpp loads (the release edgeplan is "
                                         "checked against: node-llama-cpp 3.21.1){}", display, clipped(*arch),
                                         util::did_you_mean(*arch, loaded)));
  }
  const Meta meta{f, *arch, display};
  ModelSpec m;
  m.name = name;
  m.arch = *arch;
  if (force_generic || !modelled) {
    m.arch = generic_base(meta);
    m.generic_of = *arch;
  }
  m.layers = meta.count("block_count", layers_range);
  m.hidden = meta.count("embedding_length", width_range);
  m.heads = meta.count("attention.head_count", heads_range);
  m.kv_heads = meta.optional_count("attention.head_count_kv", heads_range).value_or(m.heads);
  if (!f.find(*arch + ".attention.key_length") && m.hidden < m.heads) {
    meta.fail(fmt::format("{}.embedding_length ({}) must be at least {}.attention.head_count ({}) when "
                          "attention.key_length is not given", meta.arch, m.hidden, meta.arch, m.heads));
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
  // A window of 0 is none (llama.cpp's n_swa 0): Phi3MiniModel writes 0 when config.json states no sliding_window.
  if (auto window = meta.optional_count("attention.sliding_window", CountRange{0, context_range.max}); window && *window > 0) {
    // llama.cpp fixes the pattern for Gemma 2 (alternating) and Gemma 3 (one global in 6) unless stated.
    // gpt-oss alternates too (set_swa_pattern(2)) and Gemma 3n has one global layer in 5.
    const std::uint32_t fallback = m.arch == "gemma2" || m.arch == "gpt-oss" ? 2 : m.arch == "gemma3" ? 6 : m.arch == "gemma3n" ? 5 : 0;
    // Gemma 3n's converter writes the pattern as one boolean per layer: the fixed period stands for it.
    const GgufValue* stated = f.find(*arch + ".attention.sliding_window_pattern");
    const auto* flags = stated ? std::get_if<GgufArray>(&stated->value) : nullptr;
    const std::uint32_t pattern = flags && flags->element == GgufType::boolean
                                      ? fallback
                                      : meta.optional_count("attention.sliding_window_pattern", pattern_range).value_or(fallback);
    if (pattern > 0) m.sliding_window = SlidingWindow{*window, pattern};
  }
  if (m.arch == "lfm2" || m.arch == "lfm2moe" || m.arch == "granitehybrid" || m.arch == "qwen3next") {
    m.state = read_state(meta, m);
    if (m.sliding_window) meta.fail("a sliding window in a model with state layers is not supported");
  }
  if (m.arch == "gemma3n") {
    m.per_layer_embd = meta.count("embedding_length_per_layer_input", width_range);
    m.kv_shared_layers = meta.optional_count("attention.shared_kv_layers", dense_layers_range).value_or(0);
    if (m.kv_shared_layers >= m.layers) meta.fail("attention.shared_kv_layers must be less than block_count");
  }
  if (m.arch == "granitehybrid" && m.moe) {  // the shared expert's width, as a whole number of expert widths
    const std::uint32_t shared = meta.optional_count("expert_shared_feed_forward_length", optional_width_range).value_or(0);
    if (shared % m.moe->expert_ffn != 0) meta.fail("expert_shared_feed_forward_length must be a multiple of expert_feed_forward_length");
    m.moe->shared_experts = shared / m.moe->expert_ffn;
  }
  if (m.arch == "qwen3next" && m.moe) {
    const std::uint32_t shared = meta.optional_count("expert_shared_feed_forward_length", optional_width_range).value_or(m.moe->expert_ffn);
    if (shared % m.moe->expert_ffn != 0) meta.fail("expert_shared_feed_forward_length must be a multiple of expert_feed_forward_length");
    m.moe->shared_experts = shared / m.moe->expert_ffn;
  }
  // The file's own size for its file type: every tensor's bytes, and the bytes a decoded token reads of them.
  // Its tensors with the types the file stores them in (llama-quantize's --tensor-type and --output-tensor-type,
  // or a mix of its own, may depart from the rules), for the prompt's and a token's compute and the runtime's
  // buffers, in the file's order (by shard, then by their data offsets: the runtime's mapped spans).
  FormatSize size{std::nullopt, 0.0, 0.0};
  std::vector<TypedTensor> typed;
  typed.reserve(f.tensors.size());
  const std::vector<TensorShape> listed = llama_tensors(m);
  std::vector<const GgufTensor*> in_order;
  for (const GgufTensor& t : f.tensors) in_order.push_back(&t);
  std::ranges::stable_sort(in_order, {}, [](const GgufTensor* t) { return std::pair(t->shard, t->offset); });
  for (const GgufTensor* tensor : in_order) {
    const GgufTensor& t = *tensor;
    const double b = static_cast<double>(t.bytes);
    *size.bytes += b;
    TensorShape shape = file_tensor_shape(m, listed, t.name, t.dims);
    if (!m.generic_of) check_shape(meta, listed, shape, t);
    *size.active_bytes += b * active_fraction(m, shape);
    // read_gguf gives every tensor its type; a GgufFile made another way may leave it out (metadata alone).
    if (t.type && !t.dims.empty()) typed.push_back({std::move(shape), t.type, b, t.shard});
  }
  if (!typed.empty()) size.tensors = std::make_shared<const std::vector<TypedTensor>>(std::move(typed));
  if (const FileType* ft = gguf_file_type(f)) {
    FormatSize& stated = m.formats.emplace(std::string(ft->name), std::move(size)).first->second;
    m.file_format = std::string(ft->name);
    // By type, as a profile states them (model_profile_toml writes them): the file's tensors counted as the rules'.
    if (stated.tensors) {
      stated.prompt_matmuls = matmul_weights(m, *ft);
      stated.token_matmuls = token_matmul_weights(m, *ft);
    }
  }
  return m;
}

}  // namespace

const FileType* gguf_file_type(const GgufFile& f) {
  const GgufValue* v = f.find("general.file_type");
  const std::optional<std::uint64_t> id = v ? v->as_uint() : std::nullopt;
  return id && *id <= UINT32_MAX ? find_file_type_id(static_cast<std::uint32_t>(*id)) : nullptr;
}

std::string gguf_file_type_name(const GgufFile& f) {
  if (const FileType* t = gguf_file_type(f)) return std::string(t->name);
  const GgufValue* v = f.find("general.file_type");
  if (!v) return "not stated";
  const std::optional<std::uint64_t> id = v->as_uint();
  return fmt::format("{} (not a file type llama.cpp defines)", id ? std::to_string(*id) : "(not a whole number)");
}

Result<ModelSpec> model_from_gguf(const GgufFile& f, const std::string& name, const std::string& display,
                                  bool generic) {
  try {
    return read_model(f, name, display, generic);
  } catch (const std::runtime_error& e) {
    return Error{e.what()};
  }
}

}  // namespace edgeplan::io
