// The device profile's [kv_cache] section: how the runtime pads and caps the KV cache (llama.cpp by default).
#include "edgeplan/io/profiles.hpp"

namespace edgeplan::io {

void read_device_kv_cache(Fields& f, DeviceSpec& d) {
  if (auto k = f.table("kv_cache")) {
    d.kv_cache.pad_tokens = k->optional_count("pad_tokens", {1, limits::kContextTokens}).value_or(d.kv_cache.pad_tokens);
    d.kv_cache.ubatch_tokens = k->optional_count("ubatch_tokens", {1, limits::kPromptTokens}).value_or(d.kv_cache.ubatch_tokens);
    k->finish();
  }
}

}  // namespace edgeplan::io
