#include "edgeplan/io/inputs.hpp"

#include "edgeplan/core/units.hpp"

namespace edgeplan::io {

Json to_json(const DeviceSpec& d) {
  Json j = Json::object();
  j["memory_gib"] = d.memory_bytes / units::kGiB;
  j["reserved_gib"] = d.reserved_bytes / units::kGiB;
  j["bandwidth_gbps"] = d.bandwidth_bytes_per_s / units::kGBps;
  j["utilization"] = d.utilization;
  j["per_token_overhead_ms"] = d.per_token_overhead_s * units::kMsPerS;
  if (d.prefill_flop_per_s) j["prefill"] = {{"effective_tflops", *d.prefill_flop_per_s / 1e12}};
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
  if (auto p = param_count(m)) j["params"] = *p;
  j["layers"] = m.layers;
  j["hidden"] = m.hidden;
  j["heads"] = m.heads;
  j["kv_heads"] = m.kv_heads;
  j["head_dim"] = m.head_dim;
  j["ffn"] = m.ffn;
  if (m.vocab) j["vocab"] = *m.vocab;
  j["tied_embeddings"] = m.tied_embeddings;
  return j;
}

}  // namespace edgeplan::io
