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
  if (d.storage) {
    j["storage"] = {{"read_gbps", d.storage->read_bytes_per_s / units::kGBps},
                    {"page_kib", d.storage->page_bytes / units::kKiB},
                    {"page_fault_us", d.storage->page_fault_s * units::kUsPerS},
                    {"readahead_kib", static_cast<double>(d.storage->readahead_pages) * d.storage->page_bytes / units::kKiB}};
  }
  if (d.lora) j["lora"] = {{"swap_fixed_us", d.lora->swap_fixed_s * units::kUsPerS}};
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
  j["lora_shapes"] = m.lora_shapes == LoraShapes::chapter ? "chapter" : "real";
  return j;
}

}  // namespace edgeplan::io
