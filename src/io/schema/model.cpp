// The model profile's schema (docs/profiles.md, "Model"): one row per key. Stated sizes ([formats.NAME]) are a
// table of named entries, each with the rows of a size.
#include <algorithm>

#include <fmt/format.h>

#include "edgeplan/core/formats.hpp"
#include "edgeplan/core/limits.hpp"
#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/util/names.hpp"
#include "edgeplan/util/text.hpp"

namespace edgeplan::io::schema {
namespace {

using M = ModelSpec;
using MR = Row<M>;

std::vector<std::string> file_type_names() {
  std::vector<std::string> names;
  for (const FileType& t : file_types()) names.emplace_back(t.name);
  return names;
}

// An optional size of entry `name` ([formats.Q4_K_M]).
template <auto member>
MR format_size(std::string_view key, bool (*written)(const M&) = nullptr) {
  return MR{.key = key, .range = Range::positive, .echo = false, .written = written, .integral = member != &FormatSize::bits_per_weight,
            .set_in = [](M& m, std::string_view name, const Value& v) { m.formats.at(std::string(name)).*member = number(v); },
            .get_in = [](const M& m, std::string_view name) -> std::optional<Value> {
              if (const auto& x = m.formats.at(std::string(name)).*member) return *x;
              return std::nullopt;
            }};
}

std::vector<std::string> ggml_type_names() {
  std::vector<std::string> names;
  for (const GgmlType& t : ggml_types()) names.emplace_back(t.name);
  return names;
}

// One "TYPE=WEIGHTS" item of a format's matrices by type: the type and the weights, or nullopt when malformed.
std::optional<TypedWeights> typed_weights_item(std::string_view item) {
  const std::size_t eq = item.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  const GgmlType* type = find_ggml_type(item.substr(0, eq));
  const std::optional<double> w = util::parse_number(item.substr(eq + 1));
  if (!type || !w || !(*w > 0) || *w > limits::kWeightBytes) return std::nullopt;
  return TypedWeights{type, *w};
}

// The items of prompt_weights and token_weights: "TYPE=WEIGHTS", each type once.
std::optional<std::string> typed_weights_list(const M&, const Value& v) {
  const auto& items = std::get<std::vector<std::string>>(v);
  if (items.empty()) return "must list at least one \"TYPE=WEIGHTS\" (leave the key out for llama.cpp's tensor rules)";
  std::vector<const GgmlType*> seen;
  for (const std::string& item : items) {
    const std::string_view name = std::string_view(item).substr(0, item.find('='));
    if (item.find('=') != std::string::npos && !find_ggml_type(name)) {
      return fmt::format("holds \"{}\": {} is not a ggml type{}", item, name,
                         util::did_you_mean(name, ggml_type_names()));
    }
    const std::optional<TypedWeights> t = typed_weights_item(item);
    if (!t) {
      return fmt::format("holds \"{}\": expected \"TYPE=WEIGHTS\", a ggml type and its weights above 0 and at most "
                         "2^60, e.g. \"Q4_K=6476005376\"", item);
    }
    if (std::find(seen.begin(), seen.end(), t->type) != seen.end()) return fmt::format("lists {} twice", t->type->name);
    seen.push_back(t->type);
  }
  return std::nullopt;
}

// A format's matrices by type ([formats.F] prompt_weights, token_weights), as "TYPE=WEIGHTS" items.
template <auto member>
MR typed_weights(std::string_view key) {
  return MR{.key = key, .type = Type::strings, .check = typed_weights_list, .echo = false,
            .set_in = [](M& m, std::string_view name, const Value& v) {
              std::vector<TypedWeights>& out = m.formats.at(std::string(name)).*member;
              out.clear();
              for (const std::string& item : std::get<std::vector<std::string>>(v)) {
                out.push_back(*typed_weights_item(item));
              }
            },
            .get_in = [](const M& m, std::string_view name) -> std::optional<Value> {
              const std::vector<TypedWeights>& in = m.formats.at(std::string(name)).*member;
              if (in.empty()) return std::nullopt;
              std::vector<std::string> items;
              for (const TypedWeights& t : in) items.push_back(fmt::format("{}={}", t.type->name, t.weights));
              return items;
            }};
}

// A format's active bytes (a MoE file's) come with its bytes and do not exceed them.
bool active_within(const FormatSize& size) {
  return !size.active_bytes || (size.bytes && *size.active_bytes <= *size.bytes);
}

Entries<M> format_entries() {
  return {.placeholder = "F",
          .refuse = [](std::string_view name) -> std::string {
            if (find_file_type(name)) return {};
            return "is not a known format" + util::did_you_mean(name, file_type_names());
          },
          .open = [](M& m, std::string_view name) { m.formats.emplace(std::string(name), FormatSize{}); },
          .names = [](const M& m) {
            std::vector<std::string> out;
            for (const auto& [name, size] : m.formats) out.push_back(name);
            return out;
          },
          .one_of = {"bits_per_weight", "bytes"},
          .check = [](const M& m, std::string_view name) -> std::optional<std::pair<std::string_view, std::string>> {
            if (!active_within(m.formats.at(std::string(name)))) {
              return std::pair<std::string_view, std::string>{"active_bytes", "needs bytes and must not exceed it"};
            }
            return std::nullopt;
          },
          .consistent = [](const M& m) {
            return std::all_of(m.formats.begin(), m.formats.end(), [](const auto& f) { return active_within(f.second); });
          }};
}

void echo_params(const M& m, Node& j) {
  if (auto p = param_count(m)) j["params"] = Node::count(*p);
  if (m.moe) j["active_params"] = Node::count(*active_param_count(m));
}

void mla_needs_deepseek2(Fields& f, M& m) {
  if (m.mla.has_value() != (m.arch == "deepseek2")) {
    f.fail("arch", m.mla ? "must be \"deepseek2\" for a model with [mla]" : "\"deepseek2\" needs an [mla] section");
  }
  if (m.generic_of && m.arch != "llama" && m.arch != "granitehybrid" && m.arch != "deepseek2") {
    f.fail("arch", "must be a base of the generic rule (llama, granitehybrid or deepseek2) with generic_of");
  }
}

// The hybrid architectures and their state: LFM2's short convolutions, Granite's Mamba-2, Qwen3-Next's delta nets.
std::optional<StateKind> hybrid_state(const std::string& arch) {
  if (arch == "lfm2" || arch == "lfm2moe") return StateKind::shortconv;
  if (arch == "granitehybrid") return StateKind::mamba2;
  if (arch == "qwen3next") return StateKind::gated_delta_net;
  return std::nullopt;
}

bool state_consistent(const M& m) {
  const std::optional<StateKind> kind = hybrid_state(m.arch);
  return m.state ? kind == m.state->kind && !m.sliding_window : !kind;
}

void state_needs_hybrid(Fields& f, M& m) {
  if (state_consistent(m)) return;
  if (m.state && m.sliding_window) f.fail("state", "cannot be combined with [sliding_window]");
  const std::optional<StateKind> kind = hybrid_state(m.arch);
  if (!kind) f.fail("arch", fmt::format("\"{}\" has no state layers: remove [state]", m.arch));
  f.fail("arch", fmt::format("\"{}\" needs [state] with kind = \"{}\"", m.arch, to_string(*kind)));
}

void params_or_vocab(Fields& f, M& m) {
  if (!m.vocab && !m.params) f.fail({}, "needs params or vocab (to count its weights)");
}

// A required count at the top of the profile, stored in `member`.
template <std::uint32_t M::*member>
MR top_count(std::string_view key, CountRange range) {
  return MR{.key = key, .type = Type::count, .required = true, .counts = range,
           .set = [](M& m, const Value& v) { m.*member = count(v); },
           .get = [](const M& m) -> std::optional<Value> { return std::int64_t{m.*member}; }};
}

// A count of the optional section `section`, stored in `member`; optional ones default to 0 and are written
// only when not 0.
template <auto section, auto member>
MR section_count(std::string_view key, CountRange range, bool required) {
  return MR{.key = key, .type = Type::count, .required = required, .counts = range,
           .set = [](M& m, const Value& v) { (*(m.*section)).*member = count(v); },
           .get = [](const M& m) -> std::optional<Value> { return std::int64_t{(*(m.*section)).*member}; },
           .written = required ? nullptr : +[](const M& m) { return (*(m.*section)).*member > 0; }};
}

Schema<M> make_model() {
  Schema<M> s{"model", {}};
  s.sections.push_back({.name = "", .rows = {
      MR{.key = "description", .type = Type::string, .set = ignore<M>, .get = none<M>, .echo = false},
      MR{.key = "source", .type = Type::string, .set = ignore<M>, .get = none<M>, .echo = false},
      MR{.key = "arch", .type = Type::choice, .choices = [] { return architectures(); },
        .set = [](M& m, const Value& v) { m.arch = text(v); },
        .get = [](const M& m) -> std::optional<Value> { return m.arch; }},
  }, .echo_custom = echo_params});
  s.sections.push_back({"", {
      // Echoed as the count of the model's weights (echo_params): stated, or from its tensors.
      MR{.key = "params", .range = Range::positive,
        .set = [](M& m, const Value& v) { m.params = number(v); },
        .get = [](const M& m) -> std::optional<Value> {
          if (m.params) return *m.params;
          return std::nullopt;
        },
        .echo = false, .written = [](const M& m) { return !m.vocab; }, .integral = true},
      top_count<&M::layers>("layers", layers_range),
      top_count<&M::hidden>("hidden", width_range),
      top_count<&M::heads>("heads", heads_range),
      MR{.key = "kv_heads", .type = Type::count, .required = true, .counts = heads_range,
        .set = [](M& m, const Value& v) { m.kv_heads = count(v); },
        .get = [](const M& m) -> std::optional<Value> { return std::int64_t{m.kv_heads}; },
        .check = [](const M& m, const Value& v) -> std::optional<std::string> {
          if (m.heads % count(v) == 0) return std::nullopt;
          return fmt::format("({}) must divide model.heads ({})", count(v), m.heads);
        }},
      top_count<&M::head_dim>("head_dim", head_dim_range),
      top_count<&M::ffn>("ffn", width_range),
      MR{.key = "vocab", .type = Type::count, .counts = vocab_range,
        .set = [](M& m, const Value& v) { m.vocab = count(v); },
        .get = [](const M& m) -> std::optional<Value> {
          if (m.vocab) return std::int64_t{*m.vocab};
          return std::nullopt;
        }},
      MR{.key = "tied_embeddings", .type = Type::boolean,
        .set = [](M& m, const Value& v) { m.tied_embeddings = std::get<bool>(v); },
        .get = [](const M& m) -> std::optional<Value> { return m.tied_embeddings; }},
      MR{.key = "qkv_bias", .type = Type::boolean,
        .set = [](M& m, const Value& v) { m.qkv_bias = std::get<bool>(v); },
        .get = [](const M& m) -> std::optional<Value> { return m.qkv_bias; },
        .echo = false, .written = [](const M& m) { return m.qkv_bias; }},
      MR{.key = "rope_freqs", .type = Type::boolean,
        .set = [](M& m, const Value& v) { m.rope_freqs = std::get<bool>(v); },
        .get = [](const M& m) -> std::optional<Value> { return m.rope_freqs; },
        .echo = false, .written = [](const M& m) { return m.rope_freqs; }},
      MR{.key = "context_length", .type = Type::count, .counts = context_range,
        .set = [](M& m, const Value& v) { m.context_tokens = count(v); },
        .get = [](const M& m) -> std::optional<Value> {
          if (m.context_tokens) return std::int64_t{*m.context_tokens};
          return std::nullopt;
        }},
  }});
  s.sections.push_back({"moe", {
      section_count<&M::moe, &MoeSpec::experts>("experts", experts_range, true),
      [] {
        MR r = section_count<&M::moe, &MoeSpec::used>("used", used_range, true);
        r.check = [](const M& m, const Value& v) -> std::optional<std::string> {
          if (count(v) <= m.moe->experts) return std::nullopt;
          return fmt::format("({}) must not exceed model.moe.experts ({})", count(v), m.moe->experts);
        };
        return r;
      }(),
      section_count<&M::moe, &MoeSpec::expert_ffn>("expert_ffn", width_range, true),
      section_count<&M::moe, &MoeSpec::shared_experts>("shared_experts", optional_experts_range, false),
      [] {
        MR r = section_count<&M::moe, &MoeSpec::dense_layers>("dense_layers", dense_layers_range, false);
        r.check = [](const M& m, const Value& v) -> std::optional<std::string> {
          if (count(v) < m.layers) return std::nullopt;
          return fmt::format("({}) must be less than model.layers ({})", count(v), m.layers);
        };
        return r;
      }(),
  }, [](M& m) { m.moe.emplace(); }, [](const M& m) { return m.moe.has_value(); }});
  s.sections.push_back({"mla", {
      section_count<&M::mla, &MlaSpec::kv_lora_rank>("kv_lora_rank", width_range, true),
      section_count<&M::mla, &MlaSpec::q_lora_rank>("q_lora_rank", optional_width_range, false),
      section_count<&M::mla, &MlaSpec::rope_dim>("rope_dim", head_dim_range, true),
      section_count<&M::mla, &MlaSpec::nope_dim>("nope_dim", head_dim_range, true),
      section_count<&M::mla, &MlaSpec::v_head_dim>("v_head_dim", head_dim_range, true),
  }, [](M& m) { m.mla.emplace(); }, [](const M& m) { return m.mla.has_value(); }, mla_needs_deepseek2});
  s.sections.push_back({"sliding_window", {
      section_count<&M::sliding_window, &SlidingWindow::window_tokens>("window_tokens", context_range, true),
      section_count<&M::sliding_window, &SlidingWindow::pattern>("pattern", pattern_range, true),
  }, [](M& m) { m.sliding_window.emplace(); }, [](const M& m) { return m.sliding_window.has_value(); }});
  s.sections.push_back({"state", {
      MR{.key = "kind", .type = Type::choice, .required = true,
        .choices = [] { return std::vector<std::string>{"shortconv", "mamba2", "gated_delta_net"}; },
        .set = [](M& m, const Value& v) {
          m.state->kind = text(v) == "shortconv" ? StateKind::shortconv
                          : text(v) == "mamba2"  ? StateKind::mamba2
                                                 : StateKind::gated_delta_net;
        },
        .get = [](const M& m) -> std::optional<Value> { return std::string(to_string(m.state->kind)); }},
      [] {
        MR r = section_count<&M::state, &StateSpec::layers>("layers", layers_range, true);
        r.check = [](const M& m, const Value& v) -> std::optional<std::string> {
          if (count(v) < m.layers) return std::nullopt;
          return fmt::format("({}) must be less than model.layers ({}): at least one layer keeps a KV cache", count(v), m.layers);
        };
        return r;
      }(),
      section_count<&M::state, &StateSpec::conv_kernel>("conv_kernel", pattern_range, true),
      section_count<&M::state, &StateSpec::inner>("inner", optional_width_range, false),
      section_count<&M::state, &StateSpec::state_dim>("state_dim", optional_width_range, false),
      section_count<&M::state, &StateSpec::groups>("groups", optional_experts_range, false),
      section_count<&M::state, &StateSpec::heads>("heads", optional_experts_range, false),
  }, [](M& m) { m.state.emplace(); }, [](const M& m) { return m.state.has_value(); }, state_needs_hybrid});
  s.sections.push_back({.name = "", .rows = {
      MR{.key = "kv_shared_layers", .type = Type::count, .counts = dense_layers_range,
        .set = [](M& m, const Value& v) { m.kv_shared_layers = count(v); },
        .get = [](const M& m) -> std::optional<Value> { return std::int64_t{m.kv_shared_layers}; },
        .check = [](const M& m, const Value& v) -> std::optional<std::string> {
          if (count(v) < attention_layers(m)) return std::nullopt;
          return fmt::format("({}) must be less than the layers with attention ({})", count(v), attention_layers(m));
        },
        .echo = false, .written = [](const M& m) { return m.kv_shared_layers > 0; }},
      MR{.key = "per_layer_embd", .type = Type::count, .counts = optional_width_range,
        .set = [](M& m, const Value& v) { m.per_layer_embd = count(v); },
        .get = [](const M& m) -> std::optional<Value> { return std::int64_t{m.per_layer_embd}; },
        .echo = false, .written = [](const M& m) { return m.per_layer_embd > 0; }},
      MR{.key = "lora_shapes", .type = Type::choice, .choices = [] { return std::vector<std::string>{"real", "chapter"}; },
        .set = [](M& m, const Value& v) { m.lora_shapes = text(v) == "chapter" ? LoraShapes::chapter : LoraShapes::real; },
        .get = [](const M& m) -> std::optional<Value> {
          return std::string(m.lora_shapes == LoraShapes::chapter ? "chapter" : "real");
        },
        .written = [](const M& m) { return m.lora_shapes == LoraShapes::chapter; }},
      MR{.key = "reference", .type = Type::boolean,
        .set = [](M& m, const Value& v) { m.reference = std::get<bool>(v); },
        .get = [](const M& m) -> std::optional<Value> { return m.reference; },
        .echo = false, .written = [](const M& m) { return m.reference; }},
      MR{.key = "generic_of", .type = Type::choice,
        .choices = [] { return llama_cpp_architectures(); },
        .set = [](M& m, const Value& v) { m.generic_of = text(v); },
        .get = [](const M& m) -> std::optional<Value> {
          if (m.generic_of) return *m.generic_of;
          return std::nullopt;
        }},
      MR{.key = "file_format", .type = Type::choice,
        .choices = file_type_names,
        .set = [](M& m, const Value& v) { m.file_format = text(v); },
        .get = [](const M& m) -> std::optional<Value> {
          if (m.file_format) return *m.file_format;
          return std::nullopt;
        },
        .echo = false},
  }, .after = params_or_vocab});
  // The sizes an import states ([formats.Q4_K_M]): not echoed; active_bytes written for a MoE model only; a GGUF
  // file's matrices by type where it was read from one.
  s.sections.push_back({.name = "formats",
                        .rows = {format_size<&FormatSize::bits_per_weight>("bits_per_weight"),
                                 format_size<&FormatSize::bytes>("bytes"),
                                 format_size<&FormatSize::active_bytes>("active_bytes",
                                                                        [](const M& m) { return m.moe.has_value(); }),
                                 typed_weights<&FormatSize::prompt_matmuls>("prompt_weights"),
                                 typed_weights<&FormatSize::token_matmuls>("token_weights")},
                        .entries = format_entries()});
  s.also_consistent = [](const M& m) {
    return m.mla.has_value() == (m.arch == "deepseek2") && state_consistent(m) &&
           (!m.generic_of || m.arch == "llama" || m.arch == "granitehybrid" || m.arch == "deepseek2");
  };
  return s;
}

}  // namespace

const Schema<ModelSpec>& model_schema() {
  static const Schema<ModelSpec> s = make_model();
  return s;
}

}  // namespace edgeplan::io::schema
