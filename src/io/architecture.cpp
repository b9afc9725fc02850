// The model profile's architecture keys: arch, context_length, [moe], [mla] and [sliding_window].
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "edgeplan/io/profiles.hpp"
#include "edgeplan/util/names.hpp"

namespace edgeplan::io {

void read_model_architecture(Fields& f, ModelSpec& m) {
  if (auto arch = f.optional_choice("arch", architectures())) m.arch = *arch;
  m.context_tokens = f.optional_count("context_length", context_range);
  if (auto e = f.table("moe")) {
    MoeSpec moe;
    moe.experts = e->count("experts", experts_range);
    moe.used = e->count("used", used_range);
    if (moe.used > moe.experts) {
      e->fail("used", fmt::format("({}) must not exceed {} ({})", moe.used, e->full_key("experts"), moe.experts));
    }
    moe.expert_ffn = e->count("expert_ffn", width_range);
    moe.shared_experts = e->optional_count("shared_experts", optional_experts_range).value_or(0);
    moe.dense_layers = e->optional_count("dense_layers", dense_layers_range).value_or(0);
    if (moe.dense_layers >= m.layers) {
      e->fail("dense_layers", fmt::format("({}) must be less than {} ({})", moe.dense_layers, f.full_key("layers"), m.layers));
    }
    e->finish();
    m.moe = moe;
  }
  if (auto a = f.table("mla")) {
    MlaSpec mla;
    mla.kv_lora_rank = a->count("kv_lora_rank", width_range);
    mla.q_lora_rank = a->optional_count("q_lora_rank", optional_width_range).value_or(0);
    mla.rope_dim = a->count("rope_dim", head_dim_range);
    mla.nope_dim = a->count("nope_dim", head_dim_range);
    mla.v_head_dim = a->count("v_head_dim", head_dim_range);
    a->finish();
    m.mla = mla;
  }
  if (m.mla.has_value() != (m.arch == "deepseek2")) {
    f.fail("arch", m.mla ? "must be \"deepseek2\" for a model with [mla]" : "\"deepseek2\" needs an [mla] section");
  }
  if (auto w = f.table("sliding_window")) {
    SlidingWindow sw;
    sw.window_tokens = w->count("window_tokens", context_range);
    sw.pattern = w->count("pattern", pattern_range);
    w->finish();
    m.sliding_window = sw;
  }
}

}  // namespace edgeplan::io
