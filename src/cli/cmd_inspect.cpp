// edgeplan inspect: what a model file holds (a Hugging Face config.json): architecture, parameters, tensor
// bytes by ggml type under llama.cpp's rules for --quant, context length and KV bytes per token.
#include <map>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/units.hpp"
#include "edgeplan/io/model_file.hpp"

namespace edgeplan::cli {
namespace {

struct InspectOptions {
  std::string file, quant = "Q4_K_M";
};

struct TypeTotal {
  std::int64_t tensors = 0;
  double params = 0;
  double bytes = 0;
};

}  // namespace

Runner setup_inspect(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  app.add_option("file", o->file, "Model file: a Hugging Face config.json")->required();
  app.add_option("--quant", o->quant, "Format whose llama.cpp tensor types to apply, e.g. Q4_K_M")->capture_default_str();
  return [o](const Context& ctx) {
    io::Report r;
    r.command = "inspect";
    if (!io::is_model_file(o->file)) {
      throw UsageError(fmt::format("inspect: '{}' is not a model file (expected a config.json)", o->file));
    }
    const ModelSpec m = ctx.model(o->file, r.inputs);
    const FileType& ft = need_format(o->quant);
    r.inputs["quant"] = ft.name;

    std::map<std::string_view, TypeTotal> by_type;
    double bytes = 0, active = 0;
    for (const TypedTensor& t : typed_tensors(m, ft)) {
      TypeTotal& total = by_type[t.type->name];
      total.tensors += 1;
      total.params += static_cast<double>(t.shape.row_length * t.shape.rows);
      total.bytes += t.bytes;
      bytes += t.bytes;
      active += t.bytes * active_fraction(m, t.shape);
    }
    io::Table table{"types", {{"type", "type"},
                              {"tensors", "tensors", 0},
                              {"params", "params", 0, true},
                              {"bytes", "bytes", 0, true},
                              {"share (%)", "share_percent", 1}}, {}};
    for (const auto& [name, total] : by_type) {
      table.add({std::string(name), total.tensors, total.params, total.bytes, 100 * total.bytes / bytes});
    }
    r.tables.push_back(std::move(table));

    const double params = *param_count(m);
    const double kv = kv_bytes_per_token(m, *find_kv_type("f16"));
    r.results["arch"] = m.arch;
    r.results["params"] = params;
    r.results["weights_bytes"] = bytes;
    r.results["bits_per_weight"] = bytes * 8 / params;
    if (m.moe) {
      r.results["active_params"] = *active_param_count(m);
      r.results["active_bytes"] = active;
    }
    if (m.context_tokens) r.results["context_length"] = *m.context_tokens;
    r.results["kv_bytes_per_token_f16"] = kv;

    r.title = fmt::format("inspect: {} ({})", m.name, o->file);
    r.header.push_back(fmt::format("architecture {}: {} layers, hidden {}, {} heads / {} KV heads of {}, ffn {}, vocab {}{}",
                                   m.arch, m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn, *m.vocab,
                                   m.tied_embeddings ? " (tied embeddings)" : ""));
    r.header.push_back(fmt::format("{:.3f} B parameters; {} under llama.cpp's rules: {:.2f} GB ({:.3f} bits/weight)",
                                   params / 1e9, ft.name, bytes / units::kGB, bytes * 8 / params));
    if (m.moe) {
      r.header.push_back(fmt::format("mixture of experts: {} experts, {} used per token{}{}: {:.3f} B active parameters, "
                                     "{:.2f} GB read per token",
                                     m.moe->experts, m.moe->used,
                                     m.moe->shared_experts ? fmt::format(", {} shared", m.moe->shared_experts) : "",
                                     m.moe->dense_layers ? fmt::format(", {} dense layers first", m.moe->dense_layers) : "",
                                     *active_param_count(m) / 1e9, active / units::kGB));
    }
    std::string kv_how = m.mla ? fmt::format(" (latent attention: {} values per layer)", m.mla->kv_lora_rank + m.mla->rope_dim)
                               : "";
    if (m.sliding_window) {
      kv_how = fmt::format(" if every layer were global; sliding window {} tokens in {} of every {} layers",
                           m.sliding_window->window_tokens, m.sliding_window->pattern - 1, m.sliding_window->pattern);
    }
    r.header.push_back(fmt::format("context length {}; KV cache {} B per token in f16{}",
                                   m.context_tokens ? std::to_string(*m.context_tokens) : "not stated", kv, kv_how));
    return r;
  };
}

}  // namespace edgeplan::cli
