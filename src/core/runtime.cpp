#include "edgeplan/core/runtime.hpp"

#include <algorithm>
#include <array>
#include <iterator>

#include "edgeplan/core/compute_graph.hpp"
#include "edgeplan/util/names.hpp"

namespace edgeplan {
namespace {

constexpr std::uint64_t kBatchTokens = 2048;  // llama.cpp's default n_batch (-b)

struct IsaName {
  std::string_view name;
  RepackIsa isa;
};
constexpr std::array<IsaName, 6> kIsas{{{"none", RepackIsa::none},
                                         {"x86-avx2", RepackIsa::x86_avx2},
                                         {"x86-avx512", RepackIsa::x86_avx512},
                                         {"x86-amx", RepackIsa::x86_amx},
                                         {"arm-dotprod", RepackIsa::arm_dotprod},
                                         {"arm-i8mm", RepackIsa::arm_i8mm}}};

struct FlashName {
  std::string_view name;
  FlashAttn f;
};
constexpr std::array<FlashName, 3> kFlash{{{"auto", FlashAttn::automatic}, {"on", FlashAttn::on}, {"off", FlashAttn::off}}};

// The interleave (rows per repacked group) llama.cpp uses for a weight type on isa; 0 when it does not repack it.
// ggml/src/ggml-cpu/repack.cpp, ggml_repack_get_optimal_repack_type: x86 with AVX2 repacks Q4_0, Q4_K, IQ4_NL and
// MXFP4 in groups of 8 rows (AVX-512 also Q2_K); ARM with dot-product repacks Q4_0, IQ4_NL, MXFP4 and Q8_0 in
// groups of 4 and Q4_K, Q5_K, Q6_K in groups of 8 (with i8mm the same types and groups).
std::uint32_t interleave(RepackIsa isa, std::string_view type) {
  const auto is = [&](std::initializer_list<std::string_view> names) {
    return std::ranges::find(names, type) != names.end();
  };
  switch (isa) {
    case RepackIsa::none: return 0;
    case RepackIsa::x86_amx:  // what AMX does not take is repacked as on AVX-512
    case RepackIsa::x86_avx512:
      if (type == "Q2_K") return 8;
      [[fallthrough]];
    case RepackIsa::x86_avx2: return is({"Q4_0", "Q4_K", "IQ4_NL", "MXFP4"}) ? 8 : 0;
    case RepackIsa::arm_dotprod:
    case RepackIsa::arm_i8mm:
      if (is({"Q4_0", "IQ4_NL", "MXFP4", "Q8_0"})) return 4;
      return is({"Q4_K", "Q5_K", "Q6_K"}) ? 8 : 0;
  }
  return 0;
}

// The 2-D weights a matmul reads (the token embedding is a row lookup, norms and biases are vectors); `other` is
// the projections of the layers beyond llama's (a hybrid's shortconv in/out_proj, ssm_in, ssm_out, attn_gate,
// ssm_ba; latent attention's down-projections; Gemma 3n's per-layer gate and projection): llama.cpp repacks them
// as it does every weight of a MUL_MAT (measured: tests/llamacpp/check-runtime, h-lfm2-q4).
bool matmul_weight(TensorRole r) {
  switch (r) {
    case TensorRole::other:
    case TensorRole::output:
    case TensorRole::attn_q:
    case TensorRole::attn_k:
    case TensorRole::attn_v:
    case TensorRole::attn_qkv:
    case TensorRole::attn_kv_b:
    case TensorRole::attn_output:
    case TensorRole::ffn_gate:
    case TensorRole::ffn_up:
    case TensorRole::ffn_down: return true;
    default: return false;
  }
}

// The AMX buffer's bytes for t when llama.cpp's AMX buffer type takes it, else 0.
// ggml/src/ggml-cpu/amx/amx.cpp (extra_buffer_type::supports_op: a MUL_MAT, src0 contiguous, op->ne[0] (the
// weight's rows) a multiple of TILE_N x 2 = 32, src0->ne[0] a multiple of TILE_K = 32 for Q4_0/Q4_1/Q8_0, QK_K =
// 256 for Q4_K/Q5_K/Q6_K/IQ4_XS, 16 for F16) and amx/mmq.cpp (ggml_backend_amx_get_alloc_size, get_row_size: F16
// as stored; Q8_0 adds an int32 compensation per block, Q4_K and Q5_K 4 bytes per 256, IQ4_XS 2 per 256).
double amx_bytes(const TypedTensor& t) {
  if (!t.type || t.shape.routed_experts > 0) return 0;  // an expert stack is a MUL_MAT_ID
  if (!matmul_weight(t.shape.role) && t.shape.role != TensorRole::kept_f16) return 0;
  const std::string_view type = t.type->name;
  const std::uint64_t k = t.shape.row_length, rows = t.shape.rows;
  std::uint64_t align = 0, extra = 0;  // extra: bytes a row gains
  if (type == "F16") {
    align = 16;
  } else if (type == "Q4_0" || type == "Q4_1") {
    align = 32;
  } else if (type == "Q8_0") {
    align = 32, extra = k / 32 * 4;
  } else if (type == "Q4_K" || type == "Q5_K") {
    align = 256, extra = k / 256 * 4;
  } else if (type == "Q6_K") {
    align = 256;
  } else if (type == "IQ4_XS") {
    align = 256, extra = k / 256 * 2;
  } else {
    return 0;
  }
  if (rows % 32 != 0 || k % align != 0) return 0;
  return t.bytes + static_cast<double>(rows * extra) * t.shape.layer_count;
}

}  // namespace

std::vector<std::string> repack_isa_names() {
  return util::names_of(kIsas, [](const IsaName& i) { return i.name; });
}

std::optional<RepackIsa> find_repack_isa(std::string_view name) {
  const IsaName* i = util::find_named(kIsas, name, [](const IsaName& x) { return x.name; });
  return i ? std::optional(i->isa) : std::nullopt;
}

std::string_view to_string(RepackIsa isa) {
  for (const IsaName& i : kIsas) {
    if (i.isa == isa) return i.name;
  }
  return "none";
}

std::optional<FlashAttn> find_flash_attn(std::string_view name) {
  const FlashName* f = util::find_named(kFlash, name, [](const FlashName& x) { return x.name; });
  return f ? std::optional(f->f) : std::nullopt;
}

Result<bool> flash_attn_on(FlashAttn f, const KvCacheType& t) {
  if (f != FlashAttn::off) return true;
  if (t.v->quantized()) {
    return Error{"a quantized V cache (" + std::string(t.v->name) + ") needs flash attention: llama.cpp refuses "
                 "--flash-attn off with it"};
  }
  return false;
}

WeightBuffers weight_buffers(const ModelSpec& m, const FileType& ft, RepackIsa isa) {
  WeightBuffers w;
  if (isa == RepackIsa::none || !m.vocab) return w;
  // Each tensor's home: llama_model_loader's select_weight_buft takes the first buffer type of the CPU's list
  // that supports the op (ggml-cpu.cpp, ggml_backend_cpu_get_extra_buffer_types: AMX before CPU_REPACK).
  struct Placed {
    std::string_view name;  // the rules' last block: within the block
    bool moved;
    double bytes;
    std::uint32_t file = 0;  // a split model's shard
  };
  // The mapped span of each file (llama_model_loader::get_mapping_range): from the first to the last byte of the
  // tensors the CPU buffer keeps, by their offsets in the file, so the moved tensors before or after it are not
  // mapped. A GGUF file's own tensors come in the file's order, shard by shard. The rules' list takes the order
  // llama-quantize writes (weights_map, weight_name_comparer): the tensors outside the blocks first, by name; the
  // last block last, by name (the blocks between keep their norms in the CPU buffer, as those two do, so the span
  // ends inside those two).
  const bool file_order = file_tensors(m, ft);
  const std::shared_ptr<const std::vector<TypedTensor>> tensors = typed_tensors(m, ft);  // Placed names point into it
  std::vector<Placed> order, last;  // in the file's order; the rules' list: outside the blocks, and the last block
  for (const TypedTensor& t : *tensors) {
    bool moved = false;
    const double amx = isa == RepackIsa::x86_amx ? amx_bytes(t) : 0;
    if (amx > 0) {
      w.amx_bytes += amx;
      w.amx_weights += t.bytes;
      moved = true;
    } else if (t.type && matmul_weight(t.shape.role)) {
      const std::uint32_t group = interleave(isa, t.type->name);
      const std::uint64_t rows = t.shape.rows / std::max<std::uint64_t>(1, t.shape.routed_experts);  // ne[1]
      if (group > 0 && rows % group == 0) {
        w.repack_bytes += t.bytes;
        moved = true;
      }
    }
    const double one = t.bytes / std::max<std::uint32_t>(1, t.shape.layer_count);  // one block's
    if (file_order) order.push_back({t.shape.name, moved, t.bytes, t.file});
    else if (t.shape.layer < 0) order.push_back({t.shape.name, moved, t.bytes});
    else if (t.shape.last_layer) last.push_back({in_block(t.shape.name), moved, one});
  }
  if (!file_order) {
    const auto by_name = [](const Placed& a, const Placed& b) { return a.name < b.name; };
    std::ranges::sort(order, by_name);
    std::ranges::sort(last, by_name);
    order.insert(order.end(), last.begin(), last.end());
  }
  const auto keeps = [](const Placed& p) { return !p.moved; };
  for (auto file = order.begin(); file != order.end();) {
    const auto file_end = std::find_if(file, order.end(), [&](const Placed& p) { return p.file != file->file; });
    const auto first = std::find_if(file, file_end, keeps);  // the span's first tensor
    const auto end = std::find_if(std::make_reverse_iterator(file_end), std::make_reverse_iterator(file), keeps)
                         .base();  // past its last
    for (auto p = file; p != file_end; ++p) {
      if (p < first || p >= end) w.unmapped_bytes += p->bytes;
    }
    file = file_end;
  }
  return w;
}

Result<RuntimeBuffers> runtime_buffers(const ModelSpec& m, const FileType& ft, const KvCacheType& t,
                                       std::uint64_t context_tokens, const KvCacheSettings& s, const RuntimeSpec& spec,
                                       const RuntimeOptions& o) {
  RuntimeBuffers b;
  const Result<bool> fa = flash_attn_on(o.flash_attn, t);
  if (!fa) return fa.error();
  b.flash_attn = *fa;
  if (!spec.buffers) return b;
  // One sequence's cells: the padded context (a sliding layer's window is no longer).
  std::uint64_t cells = 0;
  const std::uint32_t kinds = m.sliding_window ? std::max<std::uint32_t>(1, m.sliding_window->pattern) : 1;
  for (std::uint32_t layer = 0; layer < std::min(kinds, m.layers); ++layer) {
    cells = std::max(cells, kv_cells(m, layer, context_tokens, s));
  }
  // llama.cpp reserves the graph of min(n_ctx, n_ubatch) tokens, n_ubatch capped by n_batch = min(n_ctx, 2048),
  // all of them outputs, the tokens rounded up to a multiple of the sequences (llama_context::graph_reserve).
  GraphShape shape;
  shape.outputs = std::min({std::uint64_t{s.ubatch_tokens}, kBatchTokens, context_tokens * o.parallel});
  shape.tokens = (shape.outputs + o.parallel - 1) / o.parallel * o.parallel;
  shape.cells = cells;
  shape.flash_attn = b.flash_attn;
  // llama_kv_cache: a quantized K (V) cache with heads a multiple of 64 wide rotates Q and K (V) (attn_rot_k/v).
  shape.rotate_k = t.k->quantized() && m.head_dim % 64 == 0;
  shape.rotate_v = t.v->quantized() && m.head_dim % 64 == 0;
  shape.sequences = o.parallel;
  b.compute_bytes = static_cast<double>(ggml_alloc_bytes(llama_graph(m, shape)));
  b.output_bytes = 4.0 * m.vocab.value_or(0) * o.parallel;
  const WeightBuffers w = weight_buffers(m, ft, spec.repack);
  b.repack_bytes = w.repack_bytes;
  b.amx_bytes = w.amx_bytes;
  // With mmap the file span of the CPU's weights is mapped and the moved weights are copied beside it; without,
  // the CPU buffer holds the weights not moved and the moved ones are in their buffers instead.
  b.unmapped_bytes = o.mmap ? w.unmapped_bytes : 0;
  b.added_bytes = b.compute_bytes + b.output_bytes +
                  (o.mmap ? w.repack_bytes + w.amx_bytes - w.unmapped_bytes : w.amx_bytes - w.amx_weights);
  return b;
}

double sequence_fixed_bytes(double memory_bytes, double reserved_bytes, double weight_bytes, const RuntimeBuffers& b,
                            std::uint32_t parallel) {
  const double free = memory_bytes - reserved_bytes;
  return free - (free - weight_bytes - b.added_bytes) / std::max<std::uint32_t>(1, parallel);
}

double sequences_cache_bytes(const ModelSpec& m, const KvCacheType& t, std::uint64_t context_tokens,
                             const KvCacheSettings& s, std::uint32_t parallel) {
  return kv_cache_bytes(m, t, context_tokens, s) * parallel;
}

}  // namespace edgeplan
