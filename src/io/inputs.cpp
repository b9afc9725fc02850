#include "edgeplan/io/inputs.hpp"

#include "edgeplan/core/place.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::io {

Json to_json(const DeviceSpec& d) {
  Json j = Json::object();
  j["memory_gib"] = d.memory_bytes / units::kGiB;
  j["reserved_gib"] = d.reserved_bytes / units::kGiB;
  j["bandwidth_gbps"] = d.bandwidth_bytes_per_s / units::kGBps;
  j["utilization"] = d.utilization;
  j["per_token_overhead_ms"] = d.per_token_overhead_s * units::kMsPerS;
  if (d.prefill) {
    j["prefill"] = {{"tflops", d.prefill->peak_flops / 1e12},
                    {"efficiency", d.prefill->efficiency},
                    {"quantized_efficiency", d.prefill->quantized_efficiency}};
  }
  j["kv_cache"] = {{"pad_tokens", d.kv_cache.pad_tokens}, {"ubatch_tokens", d.kv_cache.ubatch_tokens}};
  if (!d.units.empty()) {
    Json all = Json::object();
    for (const auto& [kind, u] : d.units) {
      Json unit = Json::object();
      if (u.int8_ops_per_s) unit["int8_tops"] = *u.int8_ops_per_s / 1e12;
      if (u.fp16_flops_per_s) unit["fp16_tflops"] = *u.fp16_flops_per_s / 1e12;
      unit["bandwidth_gbps"] = u.bandwidth_bytes_per_s / units::kGBps;
      unit["ops"] = Json::array();
      for (OpKind k : u.ops) unit["ops"].push_back(to_string(k));
      all[to_string(kind)] = std::move(unit);
    }
    j["units"] = std::move(all);
  }
  if (d.link) {
    j["link"] = {{"bandwidth_gbps", d.link->bandwidth_bytes_per_s / units::kGBps},
                 {"latency_us", d.link->latency_s * units::kUsPerS}};
  }
  if (d.storage) {
    j["storage"] = {{"read_gbps", d.storage->read_bytes_per_s / units::kGBps},
                    {"page_kib", d.storage->page_bytes / units::kKiB},
                    {"page_fault_us", d.storage->page_fault_s * units::kUsPerS},
                    {"readahead_kib", static_cast<double>(d.storage->readahead_pages) * d.storage->page_bytes / units::kKiB}};
  }
  if (d.lora) j["lora"] = {{"swap_fixed_us", d.lora->swap_fixed_s * units::kUsPerS}};
  if (const auto& t = d.thermal) {
    j["thermal"] = {{"model", to_string(t->model)}, {"onset_s", t->onset_s}, {"derate", t->derate},
                    {"cooldown_s", t->cooldown_s}};
  }
  if (const auto& p = d.power) {
    j["power"] = {{"active_w", p->active_w}, {"idle_w", p->idle_w}, {"battery_wh", p->battery_wh}};
  }
  return j;
}

Json to_json(const ModelSpec& m) {
  Json j = Json::object();
  j["arch"] = m.arch;
  if (auto p = param_count(m)) j["params"] = *p;
  if (m.moe) j["active_params"] = *active_param_count(m);
  j["layers"] = m.layers;
  j["hidden"] = m.hidden;
  j["heads"] = m.heads;
  j["kv_heads"] = m.kv_heads;
  j["head_dim"] = m.head_dim;
  j["ffn"] = m.ffn;
  if (m.vocab) j["vocab"] = *m.vocab;
  j["tied_embeddings"] = m.tied_embeddings;
  if (m.context_tokens) j["context_length"] = *m.context_tokens;
  if (m.moe) {
    j["moe"] = {{"experts", m.moe->experts}, {"used", m.moe->used}, {"expert_ffn", m.moe->expert_ffn},
                {"shared_experts", m.moe->shared_experts}, {"dense_layers", m.moe->dense_layers}};
  }
  if (m.mla) {
    j["mla"] = {{"kv_lora_rank", m.mla->kv_lora_rank}, {"q_lora_rank", m.mla->q_lora_rank},
                {"rope_dim", m.mla->rope_dim}, {"nope_dim", m.mla->nope_dim}, {"v_head_dim", m.mla->v_head_dim}};
  }
  if (m.sliding_window) {
    j["sliding_window"] = {{"window_tokens", m.sliding_window->window_tokens}, {"pattern", m.sliding_window->pattern}};
  }
  j["lora_shapes"] = m.lora_shapes == LoraShapes::chapter ? "chapter" : "real";
  return j;
}

}  // namespace edgeplan::io
