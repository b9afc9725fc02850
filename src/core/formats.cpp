#include "edgeplan/core/formats.hpp"
#include "edgeplan/util/names.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace edgeplan {
namespace {

constexpr std::array kGgmlTypes{
    GgmlType{"F32", 0, 1, 4},       GgmlType{"F16", 1, 1, 2},        GgmlType{"Q4_0", 2, 32, 18},
    GgmlType{"Q4_1", 3, 32, 20},    GgmlType{"Q5_0", 6, 32, 22},     GgmlType{"Q5_1", 7, 32, 24},
    GgmlType{"Q8_0", 8, 32, 34},    GgmlType{"Q8_1", 9, 32, 36},     GgmlType{"Q2_K", 10, 256, 84},
    GgmlType{"Q3_K", 11, 256, 110}, GgmlType{"Q4_K", 12, 256, 144},  GgmlType{"Q5_K", 13, 256, 176},
    GgmlType{"Q6_K", 14, 256, 210}, GgmlType{"Q8_K", 15, 256, 292},  GgmlType{"IQ2_XXS", 16, 256, 66},
    GgmlType{"IQ3_XXS", 18, 256, 98}, GgmlType{"IQ4_NL", 20, 32, 18}, GgmlType{"IQ4_XS", 23, 256, 136},
    GgmlType{"I8", 24, 1, 1},       GgmlType{"I16", 25, 1, 2},       GgmlType{"I32", 26, 1, 4},
    GgmlType{"I64", 27, 1, 8},      GgmlType{"F64", 28, 1, 8},       GgmlType{"BF16", 30, 1, 2},
    GgmlType{"MXFP4", 39, 32, 17},
};

constexpr std::array kFileTypes{
    FileType{"F32", "F32", 0},       FileType{"F16", "F16", 1},       FileType{"BF16", "BF16", 32},
    FileType{"Q8_0", "Q8_0", 7},     FileType{"Q6_K", "Q6_K", 18},    FileType{"Q5_K_M", "Q5_K", 17},
    FileType{"Q5_1", "Q5_1", 9},     FileType{"Q5_0", "Q5_0", 8},     FileType{"Q4_K_M", "Q4_K", 15},
    FileType{"Q4_K_S", "Q4_K", 14},  FileType{"Q4_1", "Q4_1", 3},     FileType{"Q4_0", "Q4_0", 2},
    FileType{"Q3_K_M", "Q3_K", 12},  FileType{"Q2_K", "Q2_K", 10},
};


const GgmlType& type(std::string_view name) { return *find_ggml_type(name); }

bool is_k_quant(const GgmlType& t) { return t.block == 256; }

// llama.cpp's fallback when a row does not split into 256-weight super-blocks.
const GgmlType& k_quant_fallback(const GgmlType& t) {
  if (t.name == "Q4_K") return type("Q5_0");
  if (t.name == "Q5_K") return type("Q5_1");
  if (t.name == "Q6_K") return type("Q8_0");
  return type("IQ4_NL");  // Q2_K, Q3_K and the IQ k-types
}

}  // namespace

std::span<const GgmlType> ggml_types() { return kGgmlTypes; }

const GgmlType* find_ggml_type(std::string_view name) {
  return util::find_named(kGgmlTypes, name, [](const GgmlType& t) { return t.name; });
}

const GgmlType* find_ggml_type_id(std::uint32_t id) {
  auto it = std::ranges::find_if(kGgmlTypes, [&](const GgmlType& t) { return t.id == id; });
  return it == kGgmlTypes.end() ? nullptr : &*it;
}

std::optional<std::uint64_t> tensor_bytes(const GgmlType& t, std::uint64_t row_length, std::uint64_t rows) {
  if (row_length % t.block != 0) return std::nullopt;
  return rows * (row_length / t.block) * t.bytes;
}

std::span<const FileType> file_types() { return kFileTypes; }

bool is_quantized(const FileType& ft) { return ft.base != "F32" && ft.base != "F16" && ft.base != "BF16"; }

const FileType* find_file_type(std::string_view name) {
  return util::find_named(kFileTypes, name, [](const FileType& t) { return t.name; });
}

bool use_more_bits(std::uint32_t layer, std::uint32_t layers) {
  const std::uint32_t n8 = layers / 8;
  return layer < n8 || layer >= 7 * layers / 8 || (layer >= n8 && (layer - n8) % 3 == 2);
}

std::vector<LayerClass> layer_classes(std::uint32_t layers, std::uint32_t split) {
  // The thresholds tensor_type compares a layer with (use_more_bits' as it computes them).
  const std::uint32_t n8 = layers / 8;
  std::vector<std::uint32_t> cuts{0, 2, 4, layers / 16, n8, 7 * layers / 8, split, layers};
  std::erase_if(cuts, [&](std::uint32_t c) { return c > layers; });
  std::ranges::sort(cuts);
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<LayerClass> out;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    const std::uint32_t a = cuts[k], b = cuts[k + 1];
    if (a < n8) {
      out.push_back({a, b - a, 1});
      continue;
    }
    for (std::uint32_t first = a; first < b && first < a + 3; ++first) out.push_back({first, (b - first + 2) / 3, 3});
  }
  return out;
}

const GgmlType& tensor_type(const FileType& ft, TensorRole role, std::uint32_t layer,
                            std::uint64_t row_length, const MixContext& mix) {
  if (role == TensorRole::norm || role == TensorRole::bias || role == TensorRole::rope_freqs ||
      role == TensorRole::router) {
    return type("F32");
  }
  const GgmlType* chosen = &type(ft.base);
  const bool is_output = role == TensorRole::output || (role == TensorRole::token_embd && mix.tied_embeddings);
  const std::string_view name = ft.name;
  if (!is_quantized(ft)) {
    return *chosen;
  }
  if (is_output) {
    chosen = &type(name == "Q8_0" ? "Q8_0" : "Q6_K");
  } else if (role == TensorRole::attn_v || role == TensorRole::attn_k) {
    if (mix.experts == 8) {
      chosen = &type("Q8_0");
    } else if (role == TensorRole::attn_v) {
      if (name == "Q4_K_M" || name == "Q5_K_M") {
        if (use_more_bits(layer, mix.layers)) chosen = &type("Q6_K");
      } else if (name == "Q4_K_S") {
        if (layer < 4) chosen = &type("Q5_K");
      } else if (name == "Q3_K_M") {
        chosen = &type(layer < 2 ? "Q5_K" : "Q4_K");
      } else if (name == "Q2_K") {
        chosen = &type(mix.kv_heads > 0 && mix.heads / mix.kv_heads >= 4 ? "Q4_K" : "Q3_K");
      }
    }
  } else if (role == TensorRole::ffn_down) {
    if (name == "Q4_K_M" || name == "Q5_K_M") {
      if (use_more_bits(layer, mix.layers)) chosen = &type("Q6_K");
    } else if (name == "Q4_K_S") {
      if (layer < mix.layers / 8) chosen = &type("Q5_K");
    } else if (name == "Q3_K_M") {
      chosen = &type(layer < mix.layers / 16 ? "Q5_K" : "Q4_K");
    } else if (name == "Q2_K") {
      chosen = &type("Q3_K");
    }
  } else if (role == TensorRole::attn_output) {
    if (mix.experts == 8) {
      if (name == "Q2_K" || name == "Q3_K_M" || name == "Q4_K_S" || name == "Q4_K_M") chosen = &type("Q5_K");
    } else if (name == "Q3_K_M") {
      chosen = &type("Q4_K");
    } else if (name == "Q2_K") {
      chosen = &type("Q3_K");
    }
  } else if (role == TensorRole::attn_qkv) {
    if (name == "Q3_K_M") chosen = &type("Q4_K");
    if (name == "Q4_K_M") chosen = &type("Q5_K");
    if (name == "Q5_K_M") chosen = &type("Q6_K");
  }
  if (is_k_quant(*chosen) && row_length % chosen->block != 0) chosen = &k_quant_fallback(*chosen);
  if (row_length % chosen->block != 0) chosen = &type("F16");
  return *chosen;
}

}  // namespace edgeplan
