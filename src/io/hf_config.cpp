// Hugging Face config.json -> ModelSpec (field names from transformers' configuration classes, e.g.
// https://github.com/huggingface/transformers/blob/main/src/transformers/models/llama/configuration_llama.py),
// and ModelSpec -> TOML model profile. Fields read: docs/profiles.md, "Model files".
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "edgeplan/core/kv.hpp"
#include "edgeplan/io/model_file.hpp"
#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/io/toml_text.hpp"
#include "edgeplan/io/http.hpp"
#include "edgeplan/io/input_file.hpp"
#include "edgeplan/io/tensors.hpp"
#include "edgeplan/util/names.hpp"
#include "edgeplan/io/text.hpp"

namespace edgeplan::io {
namespace {

struct ConfigError {
  std::string message;
};

// The config's settings: text_config's first, then the top level's.
class Config {
 public:
  Config(const nlohmann::json& root, std::string display) : root_(root), display_(std::move(display)) {
    if (auto it = root.find("text_config"); it != root.end() && it->is_object()) text_ = &*it;
  }

  const nlohmann::json* find(const std::string& key) const {
    for (const nlohmann::json* obj : {text_, &root_}) {
      if (!obj) continue;
      auto it = obj->find(key);
      if (it != obj->end() && !it->is_null()) return &*it;
    }
    return nullptr;
  }

  // A whole number in `range` (core/limits.hpp), refused outside it before it is narrowed.
  std::optional<std::uint32_t> optional_count(const std::string& key, CountRange range) const {
    const nlohmann::json* v = find(key);
    if (!v) return std::nullopt;
    // The JSON parser keeps every integer of 0 or more as unsigned: a signed one is negative.
    const auto shown = [&] { return clipped(v->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)); };
    if (!v->is_number_unsigned() || v->get<std::uint64_t>() < range.min) {
      fail(fmt::format("{} must be a whole number of at least {} (got {})", key, range.min, shown()));
    }
    if (v->get<std::uint64_t>() > range.max) fail(fmt::format("{} must be at most {} (got {})", key, range.max, shown()));
    return static_cast<std::uint32_t>(v->get<std::uint64_t>());
  }

  std::uint32_t count(const std::string& key, CountRange range) const {
    if (auto v = optional_count(key, range)) return *v;
    fail(key + " is missing");
  }

  std::optional<std::string> string(const std::string& key) const {
    const nlohmann::json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail(fmt::format("{} must be a string (got {})", key, clipped(v->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))));
    return v->get<std::string>();
  }

  bool boolean_or(const std::string& key, bool fallback) const {
    const nlohmann::json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail(fmt::format("{} must be true or false (got {})", key, clipped(v->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))));
    return v->get<bool>();
  }

  [[noreturn]] void fail(const std::string& what) const { throw ConfigError{display_ + ": " + what}; }

 private:
  const nlohmann::json& root_;
  const nlohmann::json* text_ = nullptr;
  std::string display_;
};

// A config.json model_type: the llama.cpp architecture it converts to, and the defaults its transformers
// configuration class gives the keys a config may leave out (transformers v4.53.0,
// src/transformers/models/<model>/configuration_<model>.py, the __init__ defaults of LlamaConfig,
// MistralConfig, MixtralConfig, Qwen2Config, Qwen3Config, Qwen3MoeConfig, Gemma2Config, Gemma3TextConfig,
// Phi3Config, DeepseekV2Config, DeepseekV3Config). head_dim 0: the class derives it, hidden / heads.
struct ModelType {
  std::string_view name, arch;
  bool tie_word_embeddings;
  std::uint32_t max_position_embeddings;
  std::uint32_t head_dim;
};
constexpr std::array kModelTypes{
    ModelType{"llama", "llama", false, 2048, 0},          ModelType{"mistral", "llama", false, 131072, 0},
    ModelType{"mixtral", "llama", false, 131072, 0},      ModelType{"qwen2", "qwen2", false, 32768, 0},
    ModelType{"qwen3", "qwen3", false, 32768, 128},       ModelType{"qwen3_moe", "qwen3moe", false, 32768, 0},
    ModelType{"gemma2", "gemma2", true, 8192, 256},       ModelType{"gemma3", "gemma3", true, 131072, 256},
    ModelType{"gemma3_text", "gemma3", true, 131072, 256}, ModelType{"phi3", "phi3", false, 4096, 0},
    ModelType{"deepseek_v2", "deepseek2", false, 2048, 0}, ModelType{"deepseek_v3", "deepseek2", false, 4096, 0},
    ModelType{"smollm3", "smollm3", true, 32768, 0},      ModelType{"gpt_oss", "gpt-oss", false, 131072, 64},
    ModelType{"lfm2", "lfm2", true, 128000, 0},           ModelType{"lfm2_moe", "lfm2moe", true, 128000, 0},
    ModelType{"granitemoehybrid", "granitehybrid", true, 4096, 0}, ModelType{"qwen3_next", "qwen3next", false, 32768, 256},
    ModelType{"gemma3n", "gemma3n", true, 32768, 256},    ModelType{"gemma3n_text", "gemma3n", true, 32768, 256},
};

// The names a hybrid's layer_types give its attention layers; every other entry is a state layer.
bool is_attention_type(const nlohmann::json& t) { return t == "full_attention" || t == "attention"; }

// Hybrid models: how many layers keep a state, from layer_types (LFM2, Granite 4.0 H), full_attn_idxs (LFM2's
// first configs) or full_attention_interval (Qwen3-Next: layer i attends when (i + 1) % interval == 0, as
// llama.cpp's llama_model_qwen3next::load_arch_hparams reads it).
std::uint32_t state_layer_count(const Config& c, std::uint32_t layers) {
  if (const nlohmann::json* types = c.find("layer_types")) {
    if (!types->is_array() || types->size() != layers) {
      c.fail(fmt::format("layer_types must be an array of {} strings (num_hidden_layers)", layers));
    }
    std::uint32_t state = 0;
    for (const auto& t : *types) state += is_attention_type(t) ? 0 : 1;
    return state;
  }
  if (const nlohmann::json* idxs = c.find("full_attn_idxs"); idxs && idxs->is_array()) {
    return layers - static_cast<std::uint32_t>(std::min<std::size_t>(idxs->size(), layers));
  }
  if (const auto interval = c.optional_count("full_attention_interval", layers_range)) return layers - layers / *interval;
  c.fail("layer_types is missing (which layers attend and which keep a state)");
}

// LFM2's FFN width as llama.cpp's converter computes it (convert_hf_to_gguf.py, LFM2Model._add_feed_forward_length):
// block_ff_dim, and with block_auto_adjust_ff_dim 2/3 of it, times block_ffn_dim_multiplier, rounded up to a
// multiple of block_multiple_of.
std::uint32_t lfm2_ffn(const Config& c) {
  const std::optional<std::uint32_t> block = c.optional_count("block_ff_dim", width_range);
  std::uint32_t ff = block ? *block : c.count("intermediate_size", width_range);
  if (!c.boolean_or("block_auto_adjust_ff_dim", false)) return ff;
  ff = 2 * ff / 3;
  if (const nlohmann::json* mult = c.find("block_ffn_dim_multiplier"); mult && mult->is_number()) {
    ff = static_cast<std::uint32_t>(mult->get<double>() * ff);
  }
  const std::uint32_t multiple = c.optional_count("block_multiple_of", width_range).value_or(1);
  return (ff + multiple - 1) / multiple * multiple;
}

// Qwen3-Next's every layer is a mixture of experts: llama.cpp's qwen3next reads no dense FFN (n_ff is only the
// fallback of an absent expert width), so intermediate_size may be left out and is then the experts' width.
std::uint32_t qwen3next_ffn(const Config& c) {
  return c.optional_count("intermediate_size", width_range).value_or(c.count("moe_intermediate_size", width_range));
}

// Gemma 3n states intermediate_size per layer: one width for every layer (E2B, E4B), or refused.
std::uint32_t per_layer_ffn(const Config& c) {
  const nlohmann::json* v = c.find("intermediate_size");
  if (!v || !v->is_array()) return c.count("intermediate_size", width_range);
  if (v->empty() || !(*v)[0].is_number_unsigned() || std::ranges::any_of(*v, [&](const auto& x) { return x != (*v)[0]; })) {
    c.fail("intermediate_size must be one whole number, or a list of one width repeated for every layer");
  }
  const std::uint64_t w = (*v)[0].get<std::uint64_t>();
  if (w < width_range.min || w > width_range.max) c.fail(fmt::format("intermediate_size must be from 1 to {}", width_range.max));
  return static_cast<std::uint32_t>(w);
}

// The state layers of a hybrid model type, with their sizes (llama.cpp's converter: LFM2Model conv_L_cache;
// GraniteHybridModel mamba_d_conv, mamba_d_state, mamba_n_groups, mamba_n_heads, mamba_expand x hidden;
// Qwen3NextModel linear_conv_kernel_dim, linear_key_head_dim, linear_num_key_heads, linear_num_value_heads,
// linear_value_head_dim x linear_num_value_heads).
StateSpec read_state(const Config& c, const ModelSpec& m) {
  StateSpec s;
  s.layers = state_layer_count(c, m.layers);
  if (s.layers >= m.layers) c.fail("layer_types: at least one layer must be an attention layer");
  if (m.arch == "lfm2" || m.arch == "lfm2moe") {
    s.kind = StateKind::shortconv;
    s.conv_kernel = c.count("conv_L_cache", pattern_range);
  } else if (m.arch == "granitehybrid") {
    s.kind = StateKind::mamba2;
    s.conv_kernel = c.count("mamba_d_conv", pattern_range);
    s.state_dim = c.count("mamba_d_state", width_range);
    s.groups = c.count("mamba_n_groups", heads_range);
    s.heads = c.count("mamba_n_heads", heads_range);
    s.inner = c.optional_count("mamba_expand", CountRange{1, 64}).value_or(2) * m.hidden;
    if (s.inner % s.groups != 0) c.fail(fmt::format("mamba_n_groups ({}) must divide the inner width ({})", s.groups, s.inner));
  } else {
    s.kind = StateKind::gated_delta_net;
    s.conv_kernel = c.count("linear_conv_kernel_dim", pattern_range);
    s.state_dim = c.count("linear_key_head_dim", head_dim_range);
    s.groups = c.count("linear_num_key_heads", heads_range);
    s.heads = c.count("linear_num_value_heads", heads_range);
    s.inner = c.count("linear_value_head_dim", head_dim_range) * s.heads;
  }
  return s;
}

// Gemma2Config and Gemma3TextConfig: sliding_window 4096; Gemma3TextConfig: sliding_window_pattern 6.
constexpr std::uint32_t kGemmaSlidingWindow = 4096, kGemma3WindowPattern = 6;
// GptOssConfig: sliding_window 128; Gemma3nTextConfig: sliding_window 512.
constexpr std::uint32_t kGptOssSlidingWindow = 128, kGemma3nSlidingWindow = 512;

// The rope settings: rope_scaling, or transformers 5's rope_parameters (rope_theta, rope_type and the scaling keys
// in one object; rope_type "default" scales nothing); nullptr when neither is an object. `key` names the one read.
const nlohmann::json* rope_settings(const Config& c, std::string_view* key = nullptr) {
  for (const std::string_view name : {"rope_scaling", "rope_parameters"}) {
    if (const nlohmann::json* rope = c.find(std::string(name)); rope && rope->is_object()) {
      if (key) *key = name;
      return rope;
    }
  }
  return nullptr;
}

// The context the model was trained for: max_position_embeddings, extended by YaRN rope scaling (yarn_context).
std::uint32_t trained_context(const Config& c, std::uint32_t max_positions) {
  std::string_view key;
  const nlohmann::json* rope = rope_settings(c, &key);
  if (!rope) return max_positions;
  const std::string type = rope->value("rope_type", rope->value("type", std::string()));
  const auto factor = rope->find("factor");
  if (type != "yarn" || factor == rope->end() || !factor->is_number() || factor->get<double>() <= 1) return max_positions;
  const auto original = rope->find("original_max_position_embeddings");
  const double scaled = yarn_context(max_positions, original != rope->end() && original->is_number() ? original->get<double>() : 0,
                                     factor->get<double>());
  if (!(scaled <= context_range.max)) {
    c.fail(fmt::format("{}: the YaRN context ({:.0f}) is more than {}", key, scaled, context_range.max));
  }
  return static_cast<std::uint32_t>(scaled);
}

// One global layer in every `pattern`, read from sliding_window_pattern or layer_types.
std::uint32_t window_pattern(const Config& c) {
  if (auto p = c.optional_count("sliding_window_pattern", pattern_range)) return *p;
  const nlohmann::json* types = c.find("layer_types");
  if (!types) return kGemma3WindowPattern;
  if (!types->is_array()) c.fail("layer_types must be an array of strings");
  std::uint32_t pattern = 0;
  for (std::size_t i = 0; i < types->size(); ++i) {
    if ((*types)[i] == "full_attention") {
      if (i + 1 > pattern_range.max) c.fail(fmt::format("layer_types: the pattern is longer than {}", pattern_range.max));
      pattern = static_cast<std::uint32_t>(i + 1);
      break;
    }
  }
  if (pattern < 2) c.fail("layer_types must start with sliding_attention layers followed by a full_attention one");
  for (std::size_t i = 0; i < types->size(); ++i) {
    const bool global = i % pattern == pattern - 1;
    if ((*types)[i] != (global ? "full_attention" : "sliding_attention")) {
      c.fail(fmt::format("layer_types[{}] breaks the pattern of one full_attention layer in every {}", i, pattern));
    }
  }
  return pattern;
}

ModelSpec read_config(const Config& c, const std::string& name) {
  ModelSpec m;
  m.name = name;
  const std::optional<std::string> type = c.string("model_type");
  if (!type) c.fail("model_type is missing");
  std::vector<std::string> known;
  const ModelType* mt = nullptr;
  for (const ModelType& t : kModelTypes) {
    known.emplace_back(t.name);
    if (t.name == *type) mt = &t;
  }
  if (!mt) {
    c.fail(fmt::format("model_type \"{}\" is not supported; supported: {}{}", clipped(*type), fmt::join(known, ", "),
                       util::did_you_mean(*type, known)));
  }
  m.arch = mt->arch;
  m.layers = c.count("num_hidden_layers", layers_range);
  m.hidden = c.count("hidden_size", width_range);
  m.heads = c.count("num_attention_heads", heads_range);
  m.kv_heads = c.optional_count("num_key_value_heads", heads_range).value_or(m.heads);
  if (m.heads % m.kv_heads != 0) {
    c.fail(fmt::format("num_key_value_heads ({}) must divide num_attention_heads ({})", m.kv_heads, m.heads));
  }
  if (!c.find("head_dim") && mt->head_dim == 0 && m.hidden < m.heads) {
    c.fail(fmt::format("hidden_size ({}) must be at least num_attention_heads ({}) when head_dim is not given", m.hidden,
                       m.heads));
  }
  m.head_dim = c.optional_count("head_dim", head_dim_range).value_or(mt->head_dim ? mt->head_dim : m.hidden / m.heads);
  m.ffn = m.arch == "lfm2"      ? lfm2_ffn(c)
          : m.arch == "gemma3n"   ? per_layer_ffn(c)
          : m.arch == "qwen3next" ? qwen3next_ffn(c)
                                  : c.count("intermediate_size", width_range);
  m.vocab = c.count("vocab_size", vocab_range);
  m.context_tokens = trained_context(c, c.optional_count("max_position_embeddings", context_range).value_or(mt->max_position_embeddings));
  // LFM2 names it tie_embedding.
  m.tied_embeddings = c.boolean_or("tie_word_embeddings", c.boolean_or("tie_embedding", mt->tie_word_embeddings));
  m.qkv_bias = m.arch == "qwen2";
  if (const nlohmann::json* rope = rope_settings(c)) {
    m.rope_freqs = m.arch == "llama" && rope->value("rope_type", std::string()) == "llama3";
  }
  if (*type == "mixtral" || *type == "gpt_oss") {
    m.moe = MoeSpec{c.count("num_local_experts", experts_range), c.count("num_experts_per_tok", used_range), m.ffn, 0, 0};
  } else if (*type == "qwen3_moe") {
    m.moe = MoeSpec{c.count("num_experts", experts_range), c.count("num_experts_per_tok", used_range), c.count("moe_intermediate_size", width_range), 0, 0};
  } else if (m.arch == "deepseek2") {
    m.moe = MoeSpec{c.count("n_routed_experts", experts_range), c.count("num_experts_per_tok", used_range), c.count("moe_intermediate_size", width_range),
                    c.optional_count("n_shared_experts", optional_experts_range).value_or(0),
                    c.optional_count("first_k_dense_replace", dense_layers_range).value_or(0)};
    m.mla = MlaSpec{c.count("kv_lora_rank", width_range), c.optional_count("q_lora_rank", optional_width_range).value_or(0),
                    c.count("qk_rope_head_dim", head_dim_range), c.count("qk_nope_head_dim", head_dim_range), c.count("v_head_dim", head_dim_range)};
    m.kv_heads = m.heads;
    m.head_dim = m.mla->v_head_dim;
  }
  else if (*type == "lfm2_moe") {
    m.moe = MoeSpec{c.count("num_experts", experts_range), c.count("num_experts_per_tok", used_range), c.count("moe_intermediate_size", width_range), 0,
                    c.optional_count("num_dense_layers", dense_layers_range).value_or(0)};
  } else if (*type == "granitemoehybrid" && c.optional_count("num_local_experts", optional_experts_range).value_or(0) > 1) {
    // The FFN is the experts' (intermediate_size) and a shared expert of shared_intermediate_size.
    m.moe = MoeSpec{c.count("num_local_experts", experts_range), c.count("num_experts_per_tok", used_range), m.ffn, 0, 0};
    const std::uint32_t shared = c.optional_count("shared_intermediate_size", optional_width_range).value_or(0);
    if (shared % m.ffn != 0) c.fail(fmt::format("shared_intermediate_size ({}) must be a multiple of intermediate_size ({})", shared, m.ffn));
    m.moe->shared_experts = shared / m.ffn;
  } else if (*type == "granitemoehybrid") {
    m.ffn = c.optional_count("shared_intermediate_size", width_range).value_or(m.ffn);  // a dense FFN of that width
  } else if (*type == "qwen3_next") {
    m.moe = MoeSpec{c.count("num_experts", experts_range), c.count("num_experts_per_tok", used_range), c.count("moe_intermediate_size", width_range), 0, 0};
    const std::uint32_t shared = c.optional_count("shared_expert_intermediate_size", optional_width_range).value_or(m.moe->expert_ffn);
    if (shared % m.moe->expert_ffn != 0) c.fail("shared_expert_intermediate_size must be a multiple of moe_intermediate_size");
    m.moe->shared_experts = shared / m.moe->expert_ffn;
  }
  if (m.moe && m.moe->used > m.moe->experts) c.fail("num_experts_per_tok exceeds the number of experts");
  if (m.moe && m.moe->dense_layers >= m.layers) c.fail("num_dense_layers must be less than num_hidden_layers");
  m.qkv_bias = m.qkv_bias || (m.arch == "gpt-oss" && c.boolean_or("attention_bias", true));
  if (m.arch == "gpt-oss") {  // GptOssConfig: sliding_window 128, sliding and full layers alternating
    m.sliding_window = SlidingWindow{c.optional_count("sliding_window", context_range).value_or(kGptOssSlidingWindow), 2};
  }
  if (m.arch == "gemma3n") {
    m.sliding_window = SlidingWindow{c.optional_count("sliding_window", context_range).value_or(kGemma3nSlidingWindow), window_pattern(c)};
    m.kv_shared_layers = c.optional_count("num_kv_shared_layers", dense_layers_range).value_or(0);
    if (m.kv_shared_layers >= m.layers) c.fail("num_kv_shared_layers must be less than num_hidden_layers");
    m.per_layer_embd = c.count("hidden_size_per_layer_input", width_range);
  }
  if (m.arch == "lfm2" || m.arch == "lfm2moe" || m.arch == "granitehybrid" || m.arch == "qwen3next") m.state = read_state(c, m);
  if (m.arch == "gemma2") {
    m.sliding_window = SlidingWindow{c.optional_count("sliding_window", context_range).value_or(kGemmaSlidingWindow), 2};
  }
  if (m.arch == "gemma3") {
    m.sliding_window = SlidingWindow{c.optional_count("sliding_window", context_range).value_or(kGemmaSlidingWindow), window_pattern(c)};
  }
  return m;
}

// The safetensors files of the checkpoint in `dir`: those model.safetensors.index.json maps tensors to, else
// model.safetensors, else every *.safetensors file there.
Result<std::vector<std::filesystem::path>> checkpoint_files(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::set<std::string> names;
  if (const fs::path index = dir / "model.safetensors.index.json"; fs::exists(index, ec)) {
    const auto text = read_input(index, kMaxConfigJsonBytes, "a safetensors index");
    if (!text) return Error{fmt::format("cannot read '{}': {}", index.string(), text.error().message)};
    try {
      const nlohmann::json j = nlohmann::json::parse(*text);
      const auto map = j.find("weight_map");
      if (!j.is_object() || map == j.end() || !map->is_object()) throw nlohmann::json::other_error::create(501, "", nullptr);
      for (const auto& [tensor, file] : map->items()) {
        if (!file.is_string() || file.get<std::string>().find('/') != std::string::npos) {
          throw nlohmann::json::other_error::create(501, "", nullptr);
        }
        names.insert(file.get<std::string>());
      }
    } catch (const nlohmann::json::exception&) {
      return Error{fmt::format("{}: expected a JSON object whose weight_map maps each tensor to a file beside it",
                               index.string())};
    }
  } else if (fs::is_regular_file(dir / "model.safetensors", ec)) {
    names.insert("model.safetensors");
  } else {
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (it->path().extension() == ".safetensors") names.insert(it->path().filename().string());
    }
  }
  std::vector<fs::path> out;
  for (const std::string& n : names) out.push_back(dir / n);
  return out;
}

// Whether a checkpoint's tensor belongs to a vision or audio tower: llama.cpp keeps those apart (an mmproj file).
bool tower_tensor(const std::string& name) {
  for (const std::string_view part : {"vision", "audio", "multi_modal_projector", "visual."}) {
    if (name.find(part) != std::string::npos) return true;
  }
  return false;
}

// A safetensors checkpoint beside a config.json: its text model's tensors, by their headers alone, become the
// format of their dtype (BF16, F16 or F32: the one that holds most bytes) with the checkpoint's bytes, and that
// format the model's file format, as a GGUF file's is. Expert tensors count at used / experts of a decoded token,
// an untied embedding at one row (as model_from_gguf counts them). No checkpoint: nothing changes.
Result<bool> add_checkpoint(ModelSpec& m, const std::filesystem::path& dir) {
  auto files = checkpoint_files(dir);
  if (!files) return files.error();
  if (files->empty()) return false;
  std::map<std::string, double> by_dtype;
  std::vector<SafetensorsEntry> tensors;
  for (const std::filesystem::path& f : *files) {
    auto entries = read_safetensors_entries(f.string());
    if (!entries) return entries.error();
    for (SafetensorsEntry& e : *entries) {
      if (!tower_tensor(e.name)) tensors.push_back(std::move(e));
    }
  }
  const bool tied = std::ranges::none_of(tensors, [](const SafetensorsEntry& e) { return e.name == "lm_head.weight"; });
  double bytes = 0, active = 0;
  for (const SafetensorsEntry& e : tensors) {
    const double b = static_cast<double>(e.bytes);
    by_dtype[e.dtype] += b;
    bytes += b;
    if (m.moe && e.name.find(".experts.") != std::string::npos && e.name.find("shared") == std::string::npos) {
      active += b * m.moe->used / m.moe->experts;
    } else if (!tied && e.name.ends_with("embed_tokens.weight") && !e.shape.empty() && e.shape[0] > 0) {
      active += b / static_cast<double>(e.shape[0]);
    } else {
      active += b;
    }
  }
  const auto most = std::ranges::max_element(by_dtype, {}, [](const auto& kv) { return kv.second; });
  if (most == by_dtype.end()) return false;
  if (most->first != "BF16" && most->first != "F16" && most->first != "F32") {
    return Error{fmt::format("{}: the checkpoint's weights are mostly {} ({} of {} bytes), which no llama.cpp file "
                             "type matches; give its config.json alone (moved away from the weights) to cost it by "
                             "llama.cpp's rules at a --quant of your choice", dir.string(), most->first,
                             most->second, bytes)};
  }
  FormatSize& size = m.formats[most->first];
  size.bytes = bytes;
  size.active_bytes = active;
  m.file_format = most->first;
  return true;
}

}  // namespace

bool is_gguf_file(const std::string& path) {
  if (path.ends_with(".gguf") || is_url(path)) return true;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, sizeof magic) && std::string_view(magic, sizeof magic) == "GGUF";
}

bool is_model_file(const std::string& name_or_path) {
  return name_or_path.ends_with(".json") || is_gguf_file(name_or_path);
}

Result<ModelSpec> model_from_hf_config(std::string_view json_text, const std::string& name, const std::string& display) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    return Error{fmt::format("{}: invalid JSON at byte {}: {}", display, e.byte,
                             std::string(e.what()).substr(std::string(e.what()).rfind(": ") + 2))};
  } catch (const nlohmann::json::out_of_range&) {  // a number past the double range: 1e999
    return Error{fmt::format("{}: invalid JSON: a number is out of range", display)};
  }
  if (!root.is_object()) return Error{display + ": expected a JSON object (a Hugging Face config.json)"};
  try {
    return read_config(Config(root, display), name);
  } catch (const ConfigError& e) {
    return Error{e.message};
  }
}

std::string model_file_name(const std::string& path) {
  const std::filesystem::path p(path);
  if (gguf_split_paths(path)) {  // a shard, PREFIX-0000i-of-0000n.gguf: the model's name is PREFIX's
    const std::string stem = p.stem().string();
    return stem.substr(0, stem.rfind('-', stem.rfind("-of-") - 1));
  }
  if (p.filename() == "config.json" && p.has_parent_path() && p.parent_path().has_filename()) {
    return p.parent_path().filename().string();
  }
  return p.stem().string();
}

Result<ProfileText> model_file_profile(const std::string& path, const std::string& name, bool generic) {
  if (is_gguf_file(path)) {
    auto file = read_gguf_model(path);
    if (!file) return file.error();
    auto m = model_from_gguf(*file, name.empty() ? model_file_name(path) : name, path, generic);
    if (!m) return m.error();
    ProfileText text{m->name, path, path, model_profile_toml(*m, path)};
    if (m->file_format) text.file_tensors = std::move(m->formats.at(*m->file_format).tensors);
    return text;
  }
  const auto text = read_input(path, kMaxConfigJsonBytes, "a config.json");
  if (!text) return Error{fmt::format("cannot read model file '{}': {}", path, text.error().message)};
  auto m = model_from_hf_config(*text, name.empty() ? model_file_name(path) : name, path);
  if (!m) return m.error();
  if (auto read = add_checkpoint(*m, std::filesystem::path(path).parent_path()); !read) return read.error();
  return ProfileText{m->name, path, path, model_profile_toml(*m, path)};
}

// The keys of the model's schema rows in the order of its sections, except [formats.NAME] before
// [sliding_window] (as imports have always been written).
std::string model_profile_toml(const ModelSpec& m, const std::string& source) {
  TomlText t;
  t.comment(fmt::format("{} (imported by edgeplan from {}).", m.name, source));
  t.set("description", fmt::format("{}{}: {} layers, hidden {}, {} / {} heads{}", m.name,
                                   m.generic_of ? fmt::format(" ({} by the generic rule, as {})", *m.generic_of, m.arch) : "",
                                   m.layers, m.hidden, m.heads,
                                   m.kv_heads, m.moe ? fmt::format(", {} experts (top {})", m.moe->experts, m.moe->used) : ""));
  t.set("source", source);
  const auto& model = schema::model_schema();
  for (const std::string_view name : {"", "moe", "mla"}) {
    for (const auto& s : model.sections) {
      if (s.name == name) schema::write_rows(s, m, t);
    }
  }
  static constexpr std::pair<std::string_view, std::string_view> kFileTypes[] = {
      {"prompt_weights", "the file's matrices by ggml type: those a prompt token multiplies (prefill)"},
      {"token_weights", "and those a decoded token multiplies (decode's compute term)"}};
  schema::write_rows(schema::section(model, "formats"), m, t, kFileTypes);
  schema::write_rows(schema::section(model, "sliding_window"), m, t);
  schema::write_rows(schema::section(model, "state"), m, t);
  return t.text();
}

}  // namespace edgeplan::io
