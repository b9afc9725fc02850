// The model profile's architecture keys: arch, context_length, [moe], [mla] and [sliding_window].
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "edgeplan/io/profiles.hpp"
#include "edgeplan/io/suggest.hpp"

namespace edgeplan::io {

void read_model_architecture(Fields& f, ModelSpec& m) {
  if (auto arch = f.optional_choice("arch", architectures())) m.arch = *arch;
  m.context_tokens = f.optional_count("context_length");
  if (auto e = f.table("moe")) {
    MoeSpec moe;
    moe.experts = e->count("experts", 2);
    moe.used = e->count("used");
    if (moe.used > moe.experts) {
      e->fail("used", fmt::format("({}) must not exceed {} ({})", moe.used, e->full_key("experts"), moe.experts));
    }
    moe.expert_ffn = e->count("expert_ffn");
    moe.shared_experts = e->optional_count("shared_experts", 0).value_or(0);
    moe.dense_layers = e->optional_count("dense_layers", 0).value_or(0);
    if (moe.dense_layers >= m.layers) {
      e->fail("dense_layers", fmt::format("({}) must be less than {} ({})", moe.dense_layers, f.full_key("layers"), m.layers));
    }
    e->finish();
    m.moe = moe;
  }
  if (auto a = f.table("mla")) {
    MlaSpec mla;
    mla.kv_lora_rank = a->count("kv_lora_rank");
    mla.q_lora_rank = a->optional_count("q_lora_rank", 0).value_or(0);
    mla.rope_dim = a->count("rope_dim");
    mla.nope_dim = a->count("nope_dim");
    mla.v_head_dim = a->count("v_head_dim");
    a->finish();
    m.mla = mla;
  }
  if (m.mla.has_value() != (m.arch == "deepseek2")) {
    f.fail("arch", m.mla ? "must be \"deepseek2\" for a model with [mla]" : "\"deepseek2\" needs an [mla] section");
  }
  if (auto w = f.table("sliding_window")) {
    SlidingWindow sw;
    sw.window_tokens = w->count("window_tokens");
    sw.pattern = w->count("pattern", 2);
    w->finish();
    m.sliding_window = sw;
  }
}

}  // namespace edgeplan::io
