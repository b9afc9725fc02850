// LoRA adapters read from GGUF files (core/lora.hpp). The profiles' LoRA keys are rows of their schemas.
#include "edgeplan/io/lora.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "edgeplan/core/limits.hpp"
#include "edgeplan/util/units.hpp"
#include "edgeplan/io/profiles.hpp"
#include "edgeplan/io/text.hpp"

namespace edgeplan::io {
namespace {

// "blk.12.attn_q.weight" -> "attn_q.weight": the target without its layer.
std::string without_layer(const std::string& name) {
  if (!name.starts_with("blk.")) return name;
  const auto dot = name.find('.', 4);
  if (dot == std::string::npos || dot == 4) return name;
  const bool digits = std::all_of(name.begin() + 4, name.begin() + static_cast<std::ptrdiff_t>(dot),
                                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
  return digits ? name.substr(dot + 1) : name;
}

}  // namespace

Result<GgufLora> read_lora_adapter(const GgufFile& f, const std::string& display) {
  const std::string type = f.string("general.type").value_or("model");
  if (type != "adapter") {
    return Error{fmt::format("{}: not a LoRA adapter (general.type is \"{}\", expected \"adapter\")", display, clipped(type))};
  }
  const std::string kind = f.string("adapter.type").value_or("");
  if (kind != "lora") {
    return Error{fmt::format("{}: adapter.type is \"{}\", expected \"lora\"", display, clipped(kind))};
  }
  GgufLora out;
  if (const GgufValue* alpha = f.find("adapter.lora.alpha")) {
    if (const auto* v = std::get_if<double>(&alpha->value)) out.alpha = *v;
  }
  // Each lora_a finds its lora_b by the name they share: one hash lookup, not a scan of every tensor.
  std::unordered_map<std::string_view, const GgufTensor*> lora_b;
  for (const GgufTensor& t : f.tensors) {
    if (t.name.ends_with(".lora_b")) lora_b.emplace(std::string_view(t.name).substr(0, t.name.size() - 7), &t);
  }
  for (const GgufTensor& a : f.tensors) {
    if (!a.name.ends_with(".lora_a")) continue;
    const std::string base = a.name.substr(0, a.name.size() - 7);
    const auto found = lora_b.find(base);
    if (found == lora_b.end()) return Error{fmt::format("{}: {} has no matching {}.lora_b", display, clipped(a.name), clipped(base))};
    const GgufTensor* b = found->second;
    if (a.dims.size() != 2 || b->dims.size() != 2 || a.dims[1] != b->dims[0]) {
      return Error{fmt::format("{}: {} and {}.lora_b are not [d_in, rank] and [rank, d_out]", display, clipped(a.name), clipped(base))};
    }
    if (a.dims[1] < 1 || a.dims[1] > limits::kLoraRank) {
      return Error{fmt::format("{}: {} has rank {} (expected 1 to {})", display, a.name, a.dims[1], limits::kLoraRank)};
    }
    for (const std::uint64_t d : {a.dims[0], b->dims[1]}) {
      if (d < 1 || d > limits::kWidth) {
        return Error{fmt::format("{}: {} adapts a matrix of {} x {} (each side must be from 1 to {})", display, base,
                                 a.dims[0], b->dims[1], limits::kWidth)};
      }
    }
    out.matrices.push_back({without_layer(base), {a.dims[0], b->dims[1]}, a.dims[1],
                            static_cast<double>(a.bytes + b->bytes)});
  }
  if (out.matrices.empty()) return Error{fmt::format("{}: the adapter has no .lora_a tensors", display)};
  return out;
}

}  // namespace edgeplan::io
