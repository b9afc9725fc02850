// edgeplan inspect: what a model file holds: architecture, parameters, tensor bytes by ggml type (a GGUF
// file's own tensors, read from its header; for a config.json, llama.cpp's rules for --quant), context
// length and KV bytes per token.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command.hpp"
#include "edgeplan/core/kv.hpp"
#include "edgeplan/util/units.hpp"
#include "edgeplan/io/gguf.hpp"
#include "edgeplan/io/model_file.hpp"
#include "edgeplan/io/model_store.hpp"

namespace edgeplan::cli {
namespace {

struct InspectOptions {
  std::string file, quant;
};

struct TypeTotal {
  std::int64_t tensors = 0;
  double params = 0;
  double bytes = 0;
};

// The type table's totals: by type, and over every type.
struct Totals {
  std::map<std::string_view, TypeTotal> by_type;
  double params = 0, bytes = 0, active = 0;

  // One tensor, or one in each of `tensors` layers.
  void add(std::string_view type, double tensor_params, double tensor_bytes, double active_bytes,
           std::int64_t tensors) {
    TypeTotal& total = by_type[type];
    total.tensors += tensors;
    total.params += tensor_params;
    total.bytes += tensor_bytes;
    params += tensor_params;
    bytes += tensor_bytes;
    active += active_bytes;
  }
};

// m's tensors under llama.cpp's rules for ft (one per layer class, standing for its layers).
Totals from_rules(const ModelSpec& m, const FileType& ft) {
  Totals out;
  for (const auto tensors = typed_tensors(m, ft); const TypedTensor& t : *tensors) {
    out.add(t.type->name, tensor_weights(t.shape), t.bytes, t.bytes * active_fraction(m, t.shape),
            t.shape.layer_count);
  }
  return out;
}

// A GGUF file's own tensors, as it stores them (whatever its file type says).
Totals from_gguf(const ModelSpec& m, const io::GgufFile& f) {
  Totals out;
  const std::vector<TensorShape> listed = llama_tensors(m);
  for (const io::GgufTensor& t : f.tensors) {
    const double bytes = static_cast<double>(t.bytes);
    out.add(t.type->name, static_cast<double>(t.dims[0]) * t.rows(), bytes,
            bytes * active_fraction(m, file_tensor_shape(m, listed, t.name, t.dims)), 1);
  }
  return out;
}

// Weights by type, in type order, with weights within a relative 1e-9 of each other taken as equal.
bool same_weights(std::vector<TypedWeights> a, std::vector<TypedWeights> b) {
  const auto by_type = [](const TypedWeights& x, const TypedWeights& y) { return x.type->name < y.type->name; };
  std::ranges::sort(a, by_type);
  std::ranges::sort(b, by_type);
  return std::ranges::equal(a, b, [](const TypedWeights& x, const TypedWeights& y) {
    return x.type == y.type && std::abs(x.weights - y.weights) <= 1e-9 * std::max(x.weights, y.weights);
  });
}

std::string weights_text(const std::vector<TypedWeights>& w) {
  std::vector<std::string> parts;
  for (const TypedWeights& t : w) {
    parts.push_back(fmt::format("{} {}", t.type->name, rounded_with_thousands(t.weights)));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Whether a GGUF file keeps its matrices in other types than llama.cpp's rules for its file type would
// (llama-quantize with --output-tensor-type or --tensor-type, or another tool's mix), and then a note naming both,
// since decode and prefill cost the file's; nullopt where no rules apply (a file type llama-quantize does not make,
// or a shape its rules refuse).
struct Departure {
  bool departs = false;
  std::string note;
};
std::optional<Departure> departure(const ModelSpec& m) {
  const FileType* ft = m.file_format ? find_file_type(*m.file_format) : nullptr;
  if (!ft || !ft->quantize_target) return std::nullopt;
  ModelSpec rules = m;
  rules.formats.clear();
  const Result<WeightSize> ruled_size = weight_size(rules, *ft);  // its matmuls: the rules' prompt matrices
  if (!ruled_size) return std::nullopt;
  const std::vector<TypedWeights> file = token_matmul_weights(m, *ft), ruled = token_matmul_weights(rules, *ft);
  if (same_weights(file, ruled) && same_weights(matmul_weights(m, *ft), ruled_size->matmuls)) return Departure{};
  return Departure{true, fmt::format("the file's matrices are not in the types llama.cpp's {} rules give: a decoded "
                                     "token multiplies {} weights (the rules: {}); decode and prefill cost them in "
                                     "the file's types",
                                     ft->name, weights_text(file), weights_text(ruled))};
}

}  // namespace

Runner setup_inspect(Options& opts) {
  auto o = std::make_shared<InspectOptions>();
  opts.add(Opt::file, o->file, "Model file: a GGUF file (by its content, whatever its name) or its URL, a Hugging Face "
                               "config.json, or a model in a store (ollama:, lmstudio:, hf:; see --model)").required();
  opts.add(Opt::quant, o->quant,
           "For a config.json: the format whose llama.cpp tensor types to apply (default Q4_K_M); a GGUF file has its "
           "own");
  return [o](const Context& ctx) {
    io::Report r;
    r.command = "inspect";
    // A model in a store (ollama:NAME, hf:ORG/REPO, ...) is its file.
    const io::ProfileText text = ctx.model_text(o->file);
    const std::string& file = text.origin;  // a model file's path
    if (!io::is_model_file(file)) {
      throw UsageError(fmt::format("inspect: '{}' is not a model file (expected a GGUF file or URL, a config.json, or "
                                   "a model in a store: ollama:, lmstudio:, hf:)", o->file));
    }
    const ModelSpec m = ctx.model(text, r.inputs);
    std::string size_rule;
    Totals totals;
    if (io::is_gguf_file(file)) {
      if (!o->quant.empty()) {
        throw UsageError(fmt::format("--quant: {} is a GGUF file: inspect shows its own tensor types (for a what-if in "
                                     "another format, give --quant to kv or decode)", o->file));
      }
      const io::GgufFile f = unwrap(io::read_gguf_model(file));
      totals = from_gguf(m, f);
      const std::string type_name = io::gguf_file_type_name(f);
      size_rule = fmt::format("the file's tensors (GGUF v{}, {} tensors, file type {}, data at byte {}{})", f.version,
                              f.tensors.size(), type_name, f.data_offset,
                              f.shards > 1 ? fmt::format(" of shard 1; {} shards", f.shards) : "");
      r.results["shards"] = f.shards;
      r.results["gguf_version"] = f.version;
      r.results["file_type"] = type_name;
      r.results["file_bytes"] = io::Node::count(f.file_bytes);
      if (const std::optional<Departure> d = departure(m)) {
        r.results["departs_from_rules"] = d->departs;
        if (d->departs) r.notes.push_back(d->note);
      }
    } else {
      const FileType& ft = need_format(o->quant.empty() ? "Q4_K_M" : o->quant);
      r.inputs["quant"] = ft.name;
      unwrap(weight_size(m, ft));  // a file type llama.cpp refuses for this shape is an error, not a table
      totals = from_rules(m, ft);
      size_rule = fmt::format("{} under llama.cpp's rules", ft.name);
    }
    const auto& [by_type, params, bytes, active] = totals;
    io::Table table{"types", {{"type", "type"},
                              {"tensors", "tensors", 0},
                              io::counted({"params", "params", 0, true}),
                              io::counted({"bytes", "bytes", 0, true}),
                              {"share (%)", "share_percent", 1}}, {}};
    for (const auto& [name, total] : by_type) {
      table.add({std::string(name), total.tensors, total.params, total.bytes, 100 * total.bytes / bytes});
    }
    r.tables.push_back(std::move(table));

    const double kv = kv_bytes_per_token(m, *find_kv_type("f16"));
    r.results["arch"] = m.arch;
    r.results["params"] = io::Node::count(params);
    r.results["weights_bytes"] = io::Node::count(bytes);
    r.results["bits_per_weight"] = bytes * 8 / params;
    if (m.moe) r.results["active_params"] = io::Node::count(*active_param_count(m));
    r.results["active_bytes"] = io::Node::count(active);
    if (m.context_tokens) r.results["context_length"] = *m.context_tokens;
    r.results["kv_bytes_per_token_f16"] = io::Node::count(kv);

    r.title = fmt::format("inspect: {} ({})", m.name, o->file);
    r.header.push_back(fmt::format("architecture {}: {} layers, hidden {}, {} heads / {} KV heads of {}, ffn {}, vocab {}{}",
                                   m.arch, m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn, *m.vocab,
                                   m.tied_embeddings ? " (tied embeddings)" : ""));
    r.header.push_back(fmt::format("{} parameters; weights from {}: {:.2f} GB ({:.3f} bits/weight)",
                                   rounded_with_thousands(params), size_rule, bytes / units::kGB, bytes * 8 / params));
    if (m.moe) {
      r.header.push_back(fmt::format("mixture of experts: {} experts, {} used per token{}{}: {:.3f} B active parameters, "
                                     "{:.2f} GB read per token",
                                     m.moe->experts, m.moe->used,
                                     m.moe->shared_experts ? fmt::format(", {} shared", m.moe->shared_experts) : "",
                                     m.moe->dense_layers ? fmt::format(", {} dense layers first", m.moe->dense_layers) : "",
                                     *active_param_count(m) / units::kGiga, active / units::kGB));
    } else if (active < bytes) {
      r.header.push_back(fmt::format("{:.2f} GB read per decoded token: a token looks up one row of {}",
                                     active / units::kGB,
                                     m.tied_embeddings ? "the per-layer embeddings" : "the token embeddings"));
    }
    std::string kv_how = m.mla ? fmt::format(" (latent attention: {} values per layer)", m.mla->kv_lora_rank + m.mla->rope_dim)
                               : "";
    if (m.sliding_window) {
      kv_how = fmt::format(" if every layer were global; sliding window {} tokens in {} of every {} layers",
                           m.sliding_window->window_tokens, m.sliding_window->pattern - 1, m.sliding_window->pattern);
    }
    if (m.kv_shared_layers > 0) kv_how += fmt::format("; the last {} layers reuse earlier layers' KV", m.kv_shared_layers);
    r.header.push_back(fmt::format("context length {}; KV cache {} B per token in f16{}",
                                   m.context_tokens ? std::to_string(*m.context_tokens) : "not stated", kv, kv_how));
    if (m.state) {
      r.header.push_back(fmt::format("hybrid: {} of {} layers keep a {} state instead of KV, {} B per sequence (F32)",
                                     m.state->layers, m.layers, to_string(m.state->kind), state_bytes(m)));
    }
    return r;
  };
}

}  // namespace edgeplan::cli
