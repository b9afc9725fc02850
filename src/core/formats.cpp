#include "edgeplan/core/formats.hpp"
#include "edgeplan/util/names.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <initializer_list>

namespace edgeplan {
namespace {

// ggml's type_traits (blck_size, type_size) for every type id GGUF files may hold; the ids ggml removed (4, 5,
// 31-33, 36-38) are unknown.
constexpr std::array kGgmlTypes{
    GgmlType{"F32", 0, 1, 4},         GgmlType{"F16", 1, 1, 2},        GgmlType{"Q4_0", 2, 32, 18},
    GgmlType{"Q4_1", 3, 32, 20},      GgmlType{"Q5_0", 6, 32, 22},     GgmlType{"Q5_1", 7, 32, 24},
    GgmlType{"Q8_0", 8, 32, 34},      GgmlType{"Q8_1", 9, 32, 36},     GgmlType{"Q2_K", 10, 256, 84},
    GgmlType{"Q3_K", 11, 256, 110},   GgmlType{"Q4_K", 12, 256, 144},  GgmlType{"Q5_K", 13, 256, 176},
    GgmlType{"Q6_K", 14, 256, 210},   GgmlType{"Q8_K", 15, 256, 292},  GgmlType{"IQ2_XXS", 16, 256, 66},
    GgmlType{"IQ2_XS", 17, 256, 74},  GgmlType{"IQ3_XXS", 18, 256, 98}, GgmlType{"IQ1_S", 19, 256, 50},
    GgmlType{"IQ4_NL", 20, 32, 18},   GgmlType{"IQ3_S", 21, 256, 110}, GgmlType{"IQ2_S", 22, 256, 82},
    GgmlType{"IQ4_XS", 23, 256, 136}, GgmlType{"I8", 24, 1, 1},        GgmlType{"I16", 25, 1, 2},
    GgmlType{"I32", 26, 1, 4},        GgmlType{"I64", 27, 1, 8},       GgmlType{"F64", 28, 1, 8},
    GgmlType{"IQ1_M", 29, 256, 56},   GgmlType{"BF16", 30, 1, 2},      GgmlType{"TQ1_0", 34, 256, 54},
    GgmlType{"TQ2_0", 35, 256, 66},   GgmlType{"MXFP4", 39, 32, 17},   GgmlType{"NVFP4", 40, 64, 36},
    GgmlType{"Q1_0", 41, 128, 18},    GgmlType{"Q2_0", 42, 64, 18},
};

// Every llama-quantize target (its QUANT_OPTIONS without the aliases and COPY), base types from
// llama_ftype_get_default_type: the common ones first, from wide to narrow (so a misspelt name suggests
// one of them), then the rest in llama-quantize's order; last NVFP4, a file type llama.cpp loads but does
// not quantize to.
constexpr bool kImatrix = true;
constexpr std::array kFileTypes{
    FileType{"F32", "F32", 0},              FileType{"F16", "F16", 1},
    FileType{"BF16", "BF16", 32},           FileType{"Q8_0", "Q8_0", 7},
    FileType{"Q6_K", "Q6_K", 18},           FileType{"Q5_K_M", "Q5_K", 17},
    FileType{"Q5_1", "Q5_1", 9},            FileType{"Q5_0", "Q5_0", 8},
    FileType{"Q4_K_M", "Q4_K", 15},         FileType{"Q4_K_S", "Q4_K", 14},
    FileType{"Q4_1", "Q4_1", 3},            FileType{"Q4_0", "Q4_0", 2},
    FileType{"Q3_K_M", "Q3_K", 12},         FileType{"Q2_K", "Q2_K", 10},
    FileType{"Q1_0", "Q1_0", 40},           FileType{"Q2_0", "Q2_0", 41},
    FileType{"MXFP4_MOE", "MXFP4", 38},     FileType{"IQ2_XXS", "IQ2_XXS", 19, kImatrix},
    FileType{"IQ2_XS", "IQ2_XS", 20, kImatrix}, FileType{"IQ2_S", "IQ2_XS", 28, kImatrix},
    FileType{"IQ2_M", "IQ2_S", 29, kImatrix},   FileType{"IQ1_S", "IQ1_S", 24, kImatrix},
    FileType{"IQ1_M", "IQ1_M", 31, kImatrix},   FileType{"TQ1_0", "TQ1_0", 36},
    FileType{"TQ2_0", "TQ2_0", 37},         FileType{"Q2_K_S", "Q2_K", 21, kImatrix},
    FileType{"IQ3_XXS", "IQ3_XXS", 23, kImatrix}, FileType{"IQ3_S", "IQ3_S", 26},
    FileType{"IQ3_M", "IQ3_S", 27},         FileType{"IQ3_XS", "IQ3_S", 22, kImatrix},
    FileType{"Q3_K_S", "Q3_K", 11},         FileType{"Q3_K_L", "Q3_K", 13},
    FileType{"IQ4_NL", "IQ4_NL", 25},       FileType{"IQ4_XS", "IQ4_XS", 30},
    FileType{"Q5_K_S", "Q5_K", 16},         FileType{"NVFP4", "NVFP4", 39, false, false},
};

// The type spelt exactly `name` (the rules below name them as kGgmlTypes does; they run for every tensor, so
// this skips find_ggml_type's case folding).
const GgmlType& type(std::string_view name) {
  return *std::ranges::find_if(kGgmlTypes, [&](const GgmlType& t) { return t.name == name; });
}

// llama.cpp's tensor_type_fallback: the type written when a row is not a multiple of the chosen type's block;
// nullptr where llama.cpp defines none and refuses the tensor. A row the fallback does not divide either is F16.
const GgmlType* fallback(const GgmlType& t, std::uint64_t row_length) {
  if (row_length % t.block == 0) return &t;
  const GgmlType* to = &t;  // a 32-weight block type has no smaller block: F16 below
  const std::string_view n = t.name;
  if (n == "IQ1_S" || n == "IQ1_M" || n == "IQ2_XXS" || n == "IQ2_XS" || n == "IQ2_S" || n == "IQ3_XXS" ||
      n == "IQ3_S" || n == "IQ4_XS") {
    to = &type("IQ4_NL");
  } else if (n == "Q2_0" || n == "Q2_K" || n == "Q3_K" || n == "TQ1_0" || n == "TQ2_0") {
    to = &type("Q4_0");
  } else if (n == "Q4_K") {
    to = &type("Q5_0");
  } else if (n == "Q5_K") {
    to = &type("Q5_1");
  } else if (n == "Q6_K") {
    to = &type("Q8_0");
  } else if (t.block > 32) {
    return nullptr;
  }
  return row_length % to->block == 0 ? to : &type("F16");
}

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::ranges::find(names, name) != names.end();
}

// llama_tensor_get_type_impl for a quantized file type: the type before the fallback. `base` is the file
// type's default type. Falcon's branches are left out (edgeplan has no Falcon tensor list).
const GgmlType& chosen_type(const FileType& ft, TensorRole role, std::uint32_t layer, std::uint64_t row_length,
                            const MixContext& mix, bool expert_stack) {
  const GgmlType& base = type(ft.base);
  const std::string_view f = ft.name;
  const std::uint32_t n = mix.layers;
  const std::uint32_t gqa = mix.kv_heads > 0 ? mix.heads / mix.kv_heads : 1;
  const bool imatrix = ft.needs_imatrix;
  const bool attn_v_like = role == TensorRole::attn_v || role == TensorRole::attn_qkv || role == TensorRole::attn_kv_b;
  if (role == TensorRole::output || (role == TensorRole::token_embd && mix.tied_embeddings)) {
    if (f == "MXFP4_MOE" || row_length % base.block != 0) return type("Q8_0");
    if (one_of(f, {"IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"})) return type("Q5_K");
    return base.name == "Q8_0" ? base : type("Q6_K");
  }
  if (f == "MXFP4_MOE") return type(expert_stack ? "MXFP4" : "Q8_0");
  if (role == TensorRole::token_embd) {
    if (one_of(f, {"IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"})) return type("Q2_K");
    if (one_of(f, {"IQ2_S", "IQ2_M", "IQ3_XXS"})) return type("IQ3_S");
    if (one_of(f, {"TQ1_0", "TQ2_0", "Q2_0"})) return type("Q4_K");
    return base;
  }
  if (one_of(f, {"IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"})) {
    const bool s_or_m = f == "IQ2_S" || f == "IQ2_M";
    if (attn_v_like) return type(gqa >= 4 || mix.experts >= 4 ? "Q4_K" : s_or_m ? "IQ3_S" : "Q2_K");
    if (mix.experts == 8 && role == TensorRole::attn_k) return type("Q4_K");
    if (role == TensorRole::ffn_down) return layer < n / 8 ? type(s_or_m ? "IQ3_S" : "Q2_K") : base;
    if (role == TensorRole::attn_output) {
      if (mix.experts == 8) return type("Q5_K");
      if (f == "IQ1_S" || f == "IQ1_M") return type("IQ2_XXS");
      if (s_or_m) return type("IQ3_S");
    }
    return base;
  }
  if (attn_v_like) {
    const GgmlType* t = &base;
    if (f == "Q2_K") t = &type(gqa >= 4 ? "Q4_K" : "Q3_K");
    else if (f == "Q2_K_S" && gqa >= 4) t = &type("Q4_K");
    else if (f == "IQ3_XXS") t = &type(gqa >= 4 ? "Q4_K" : imatrix ? "IQ3_XXS" : "IQ3_S");
    else if ((f == "IQ3_XS" || f == "IQ3_S") && gqa >= 4) t = &type("Q4_K");
    else if (f == "IQ3_M") t = &type("Q4_K");
    else if (f == "Q3_K_M") t = &type(layer < 2 ? "Q5_K" : "Q4_K");
    else if (f == "Q3_K_L") t = &type("Q5_K");
    else if ((f == "IQ4_NL" || f == "IQ4_XS") && gqa >= 4) t = &type("Q5_K");
    else if ((f == "Q4_K_M" || f == "Q5_K_M") && use_more_bits(layer, mix.attention_layers ? mix.attention_layers : n)) t = &type("Q6_K");
    else if (f == "Q4_K_S" && layer < 4) t = &type("Q5_K");
    if (mix.size_70b && (t->name == "Q3_K" || t->name == "Q4_K")) t = &type("Q5_K");
    if (mix.experts == 8) t = &type("Q8_0");
    return *t;
  }
  if (role == TensorRole::attn_k || role == TensorRole::attn_q) {
    if (role == TensorRole::attn_k && mix.experts == 8) return type("Q8_0");
    if (f == "IQ3_XS") return type("IQ3_XXS");
    if (f == "IQ3_XXS") return type("IQ2_S");
    return base;
  }
  if (role == TensorRole::ffn_down) {
    if (f == "Q2_K") return type("Q3_K");
    if (f == "Q2_K_S") return layer < n / 8 ? type("Q4_K") : base;
    if (f == "IQ3_XXS" && !imatrix) return type(layer < n / 8 ? "Q4_K" : "Q3_K");
    if (f == "Q3_K_M") return type(layer < n / 16 ? "Q5_K" : "Q4_K");
    if (f == "IQ3_M") return layer < n / 8 || (mix.experts == 8 && use_more_bits(layer, n)) ? type("Q4_K") : base;
    if (f == "Q3_K_L") return type("Q5_K");
    if (f == "Q4_K_M") return use_more_bits(layer, n) ? type("Q6_K") : base;
    if (layer < n / 8 && (f == "IQ4_NL" || f == "IQ4_XS") && !imatrix) return type("Q5_K");
    if (f == "Q5_K_M") return use_more_bits(layer, n) ? type("Q6_K") : base;
    if (f == "Q4_K_S" && layer < n / 8) return type("Q5_K");
    if ((f == "Q4_0" || f == "Q5_0") && imatrix && layer < n / 8) return type(f == "Q4_0" ? "Q4_1" : "Q5_1");
    return base;
  }
  if (role == TensorRole::attn_output) {
    if (mix.experts == 8) {
      const bool bump = one_of(f, {"Q2_K", "IQ3_XS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M",
                                   "IQ3_S", "IQ3_M", "IQ4_XS"});
      return bump ? type("Q5_K") : base;
    }
    if (f == "Q2_K") return type("Q3_K");
    if (f == "IQ3_XXS") return type("IQ3_S");
    if (f == "Q3_K_M" || f == "IQ3_M") return type("Q4_K");
    if (f == "Q3_K_L") return type("Q5_K");
    return base;
  }
  if ((role == TensorRole::ffn_gate || role == TensorRole::ffn_up) && f == "IQ3_XS" && layer >= n / 8 &&
      layer < 7 * n / 8) {
    return type("IQ3_XXS");
  }
  return base;
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

bool is_quantized(const GgmlType& t) { return t.block > 1; }

namespace {

// is_quantized of each of kFileTypes, worked out at compile time (prefill asks it of every format on every row of
// a sweep).
constexpr std::array kFileTypeQuantized = [] {
  std::array<bool, kFileTypes.size()> out{};
  for (std::size_t i = 0; i < kFileTypes.size(); ++i) {
    for (const GgmlType& t : kGgmlTypes) {
      if (t.name == kFileTypes[i].base) out[i] = t.block > 1;
    }
  }
  return out;
}();

}  // namespace

bool is_quantized(const FileType& ft) {
  if (&ft >= kFileTypes.data() && &ft < kFileTypes.data() + kFileTypes.size()) {
    return kFileTypeQuantized[static_cast<std::size_t>(&ft - kFileTypes.data())];
  }
  return is_quantized(type(ft.base));
}

const FileType* find_file_type(std::string_view name) {
  return util::find_named(kFileTypes, name, [](const FileType& t) { return t.name; });
}

const FileType* find_file_type_id(std::uint32_t gguf_id) {
  auto it = std::ranges::find_if(kFileTypes, [&](const FileType& t) { return t.gguf_id == gguf_id; });
  return it == kFileTypes.end() ? nullptr : &*it;
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

const GgmlType* tensor_type(const FileType& ft, TensorRole role, std::uint32_t layer, std::uint64_t row_length,
                            const MixContext& mix, bool expert_stack) {
  // Vectors and the router are not quantized: they keep the type the converter wrote, F32.
  if (role == TensorRole::norm || role == TensorRole::bias || role == TensorRole::rope_freqs ||
      role == TensorRole::router || role == TensorRole::unquantized) {
    return &type("F32");
  }
  const GgmlType& base = type(ft.base);
  if (!is_quantized(base)) return &base;
  if (role == TensorRole::kept_f16) return &type("F16");
  return fallback(chosen_type(ft, role, layer, row_length, mix, expert_stack), row_length);
}

}  // namespace edgeplan
