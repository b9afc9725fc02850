#include "edgeplan/core/compute_graph.hpp"

#include <algorithm>
#include <limits>

namespace edgeplan {

int ComputeGraph::input(std::uint64_t bytes) {
  GraphTensor t;
  t.bytes = bytes;
  t.input = true;
  t_.push_back(t);
  return static_cast<int>(t_.size()) - 1;
}

int ComputeGraph::op(std::uint64_t bytes, std::initializer_list<int> src, bool inplace) {
  GraphTensor t;
  t.bytes = bytes;
  t.inplace = inplace;
  std::ranges::copy(src, t.src.begin());
  t_.push_back(t);
  return static_cast<int>(t_.size()) - 1;
}

int ComputeGraph::view(int of) {
  GraphTensor t;
  t.src[0] = of;
  t.view_of = t_[of].view_of == -1 ? of : t_[of].view_of;  // ggml keeps the tensor that owns the memory
  t_.push_back(t);
  return static_cast<int>(t_.size()) - 1;
}

int ComputeGraph::sink(std::initializer_list<int> src) {
  GraphTensor t;
  std::ranges::copy(src, t.src.begin());
  t.view_of = kExternal;
  t_.push_back(t);
  return static_cast<int>(t_.size()) - 1;
}

void ComputeGraph::mark_output(int t) { t_[t].output = true; }

namespace {

constexpr std::uint64_t kAlignment = 32;  // TENSOR_ALIGNMENT, the CPU buffer's alignment
constexpr std::uint32_t kReplayLayers = 256;

// ggml_dyn_tallocr with one chunk: free blocks sorted by offset, the last one the open end of the buffer.
class FreeBlocks {
 public:
  std::uint64_t take(std::uint64_t size) {
    size = align(size);
    // The best fit among the blocks before the last (the later of equal sizes), else the end.
    std::size_t best = blocks_.size() - 1;
    std::uint64_t best_size = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t i = 0; i + 1 < blocks_.size(); ++i) {
      if (blocks_[i].size >= size && blocks_[i].size <= best_size) best = i, best_size = blocks_[i].size;
    }
    Block& b = blocks_[best];
    const std::uint64_t at = b.offset;
    b.offset += size;
    b.size -= size;
    if (b.size == 0) blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(best));
    peak_ = std::max(peak_, at + size);
    return at;
  }

  // ggml_dyn_tallocr_free_bytes: merge with the block it ends or starts, else insert in order.
  void give(std::uint64_t at, std::uint64_t size) {
    size = align(size);
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      Block& b = blocks_[i];
      if (b.offset + b.size == at) {
        b.size += size;
        if (i + 1 < blocks_.size() && b.offset + b.size == blocks_[i + 1].offset) {
          b.size += blocks_[i + 1].size;
          blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        }
        return;
      }
      if (at + size == b.offset) {
        b.offset = at;
        b.size += size;
        if (i > 0 && blocks_[i - 1].offset + blocks_[i - 1].size == b.offset) {
          blocks_[i - 1].size += b.size;
          blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
        }
        return;
      }
    }
    const auto pos = std::ranges::find_if(blocks_, [&](const Block& b) { return b.offset >= at; });
    blocks_.insert(pos, Block{at, size});
  }

  std::uint64_t peak() const { return peak_; }

 private:
  struct Block {
    std::uint64_t offset, size;
  };
  static std::uint64_t align(std::uint64_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }
  std::vector<Block> blocks_{{0, std::uint64_t{1} << 62}};
  std::uint64_t peak_ = 0;
};

}  // namespace

std::uint64_t ggml_alloc_bytes(const ComputeGraph& g) {
  const std::vector<GraphTensor>& t = g.tensors();
  std::vector<int> readers(t.size(), 0), views(t.size(), 0);
  std::vector<char> own(t.size(), 0);  // allocated by the allocator and not handed on to an in-place node
  std::vector<std::uint64_t> at(t.size(), 0);
  FreeBlocks blocks;
  for (const GraphTensor& x : t) {
    if (x.view_of >= 0) ++views[static_cast<std::size_t>(x.view_of)];
    for (int s : x.src) {
      if (s >= 0) ++readers[static_cast<std::size_t>(s)];
    }
  }
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].input && t[i].bytes > 0) at[i] = blocks.take(t[i].bytes), own[i] = 1;
  }
  const auto free_tensor = [&](std::size_t i) {
    if (t[i].output) return;
    blocks.give(at[i], t[i].bytes);
    own[i] = 0;
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    const GraphTensor& x = t[i];
    if (!x.input && x.view_of == -1 && x.bytes > 0) {
      bool placed = false;
      for (int s : x.src) {
        if (!x.inplace || s < 0) continue;
        const auto p = static_cast<std::size_t>(s);
        if (!own[p] || t[p].output || t[p].bytes != x.bytes || readers[p] != 1 || views[p] != 0) continue;
        at[i] = at[p], own[p] = 0, placed = true;
        break;
      }
      if (!placed) at[i] = blocks.take(x.bytes);
      own[i] = 1;
    }
    for (int s : x.src) {
      if (s < 0) continue;
      const auto p = static_cast<std::size_t>(s);
      if (--readers[p] != 0 || views[p] != 0) continue;
      if (t[p].view_of >= 0) {
        const auto v = static_cast<std::size_t>(t[p].view_of);
        if (--views[v] == 0 && readers[v] == 0 && own[v]) free_tensor(v);
      } else if (t[p].view_of == -1 && own[p]) {
        free_tensor(p);
      }
    }
  }
  return blocks.peak();
}

namespace {

// Builds llama.cpp's graph of one micro-batch, layer by layer, in the order the allocator meets its nodes.
class GraphBuilder {
 public:
  GraphBuilder(const ModelSpec& m, const GraphShape& s) : m_(m), s_(s) {}

  ComputeGraph build();

 private:
  // width F32 values a row: a token, or past the last layer's GET_ROWS an output.
  std::uint64_t f32(std::uint64_t width) const { return 4 * width * rows_; }
  bool is(std::string_view arch) const { return m_.arch == arch; }
  bool lfm2() const { return is("lfm2") || is("lfm2moe"); }
  bool attends(std::uint32_t layer) const;
  bool state_next(std::uint32_t layer) const { return layer + 1 < m_.layers && !attends(layer + 1); }
  // A short convolution's or Mamba-2's convolution state is gathered in the layer before (LFM2, Granite 4.0 H); a
  // delta net gathers its own.
  bool gathers_ahead() const { return m_.state && m_.state->kind != StateKind::gated_delta_net; }
  int residual_add(int x, int y) { return g_.op(f32(m_.hidden), lfm2() ? std::initializer_list<int>{x, y} :
                                                                          std::initializer_list<int>{y, x}, true); }
  int norm(int x, std::uint64_t width) { return g_.op(f32(width), {g_.op(f32(width), {x}, true)}, true); }
  int attention(int x, std::uint32_t layer);
  int ffn(int x, std::uint32_t layer);
  int moe(int in);
  void gather_conv_state();
  int state_layer(int x, std::uint32_t layer);
  int shortconv(int in, std::uint32_t layer);
  int mamba2(int in, std::uint32_t layer);
  int delta_net(int in);

  const ModelSpec& m_;
  const GraphShape& s_;
  ComputeGraph g_;
  int pos_ = -1, k_rot_ = -1, v_rot_ = -1, k_idxs_ = -1, v_idxs_ = -1, mask_ = -1, out_ids_ = -1, s_copy_ = -1;
  int conv_state_ = -1;  // a state layer's gathered convolution state
  std::uint64_t rows_ = s_.tokens;
};

// With A attention layers among L, layer i attends where the count floor((i + 1) A / L) steps up: evenly spread,
// the last layer attending (every 3rd of 6, every 4th of 8).
bool GraphBuilder::attends(std::uint32_t layer) const {
  if (!m_.state) return true;
  const std::uint64_t a = attention_layers(m_), l = m_.layers;
  return (layer + 1) * a / l > layer * a / l;
}

ComputeGraph GraphBuilder::build() {
  const std::uint64_t t = s_.tokens, h = m_.hidden;
  const int tokens = g_.input(4 * t);
  g_.input(4 * h * t);  // inp_embd: embeddings a caller may pass instead of tokens, unread here
  if (m_.state) s_copy_ = g_.input(4 * s_.sequences);
  if (s_.rotate_k) k_rot_ = g_.input(4 * 64 * 64);
  pos_ = g_.input(4 * t);
  if (s_.rotate_v) v_rot_ = g_.input(4 * 64 * 64);
  k_idxs_ = g_.input(8 * t);
  // A transposed V cache (flash attention off) is written element by element: an index per value.
  v_idxs_ = g_.input(s_.flash_attn ? 8 * t : 8 * t * m_.kv_heads * m_.head_dim);
  mask_ = g_.input((s_.flash_attn ? 2 : 4) * s_.cells * t);
  out_ids_ = g_.input(4 * s_.outputs);
  int x = g_.op(f32(h), {tokens});  // GET_ROWS of the token embeddings
  // Layer after layer the allocator meets the same free blocks again; a model deeper than kReplayLayers (far
  // deeper than any released one) is replayed through its first kReplayLayers - 1 layers and its last.
  for (std::uint32_t layer = 0; layer < m_.layers; ++layer) {
    if (layer + 1 == kReplayLayers && layer + 1 < m_.layers) layer = m_.layers - 1;
    x = attends(layer) ? attention(x, layer) : state_layer(x, layer);
  }
  int normed = norm(x, h);
  if (keeps_hidden_output(m_)) {  // the normed hidden states an output of their own, the output rows taken after
    g_.mark_output(normed);
    rows_ = s_.outputs;
    normed = g_.op(f32(h), {normed, out_ids_});
  }
  g_.mark_output(normed);
  g_.mark_output(g_.op(f32(m_.vocab.value_or(0)), {normed}));
  return g_;
}

// An attention layer (src/models/llama.cpp, llm_graph_context::build_attn): RMS norm; Q, V, K (the QK norm and
// RoPE on Q and K, a quantized cache's rotations); the cache writes; flash attention, or KQ, softmax and KQV;
// the output projection; the residual; the feed-forward. Qwen3-Next projects a gate with Q and multiplies the
// attention by its sigmoid. In the last layer only the output rows go on (GET_ROWS by out_ids).
int GraphBuilder::attention(int x, std::uint32_t layer) {
  const bool gated = is("qwen3next");
  const std::uint64_t q = std::uint64_t{m_.heads} * m_.head_dim, kv = std::uint64_t{m_.kv_heads} * m_.head_dim;
  const bool last = layer + 1 == m_.layers && !keeps_hidden_output(m_);
  const int in = norm(x, m_.hidden);
  // RoPE (or the QK norm before it) reads a reshape of the projection, a view: never in place.
  auto rope = [&](int proj, std::uint64_t width) {
    int r = g_.view(proj);
    if (has_qk_norm(m_)) r = norm(r, width);
    r = g_.op(f32(width), {r, pos_}, true);
    if (s_.rotate_k) r = g_.view(g_.op(f32(width), {k_rot_, g_.view(r)}));
    return r;
  };
  const int q_full = g_.view(g_.op(f32(gated ? 2 * q : q), {in}));
  const int qr = rope(gated ? g_.view(q_full) : q_full, q);
  int v = g_.view(g_.op(f32(kv), {in}));
  if (s_.rotate_v) v = g_.view(g_.op(f32(kv), {v_rot_, g_.view(v)}));
  const int kr = rope(g_.op(f32(kv), {in}), kv);
  g_.sink({g_.view(kr), k_idxs_});
  g_.sink({g_.view(v), v_idxs_});
  const int qp = g_.view(g_.view(qr));
  int out = -1;
  if (s_.flash_attn) {
    out = g_.view(g_.op(f32(q), {qp, mask_}));
  } else {
    const int kq = g_.op(4 * s_.cells * s_.tokens * m_.heads, {qp});
    const int soft = g_.op(4 * s_.cells * s_.tokens * m_.heads, {kq, mask_}, true);
    out = g_.op(f32(q), {g_.view(g_.op(f32(q), {soft}))});  // KQV, permuted, made contiguous
  }
  // What does not wait for the attention comes here: the next state layer's convolution state (gathers_ahead);
  // LFM2's last layer takes the residual's output rows.
  int residual = x;
  if (gathers_ahead() && state_next(layer)) gather_conv_state();
  if (last) rows_ = s_.outputs;
  if (lfm2() && last) residual = g_.op(f32(m_.hidden), {x, out_ids_});
  const std::uint64_t t = s_.tokens;  // the attention's output and projection still cover every token
  if (s_.rotate_v) out = g_.view(g_.op(4 * q * t, {v_rot_, g_.view(out)}));
  if (gated) out = g_.op(4 * q * t, {out, g_.op(4 * q * t, {g_.op(4 * q * t, {g_.view(q_full)})}, true)}, true);
  int o = g_.op(4 * m_.hidden * t, {out});
  if (last) {
    o = g_.op(f32(m_.hidden), {o, out_ids_});
    if (!lfm2()) residual = g_.op(f32(m_.hidden), {x, out_ids_});
  }
  return ffn(residual_add(residual, o), layer);
}

// The feed-forward: RMS norm, then gate, up, their SiLU product and down (llm_graph_context::build_ffn) or the
// mixture of experts, and the residual.
int GraphBuilder::ffn(int x, std::uint32_t layer) {
  const int in = norm(x, m_.hidden);
  int out = -1;
  if (m_.moe && layer >= m_.moe->dense_layers) {
    out = moe(in);
  } else {
    const int gate = g_.op(f32(m_.ffn), {in});
    const int up = g_.op(f32(m_.ffn), {in});
    out = g_.op(f32(m_.hidden), {g_.op(f32(m_.ffn), {gate, up})});
  }
  return residual_add(x, out);
}

// llm_graph_context::build_moe_ffn: router logits, softmax, the top experts (argsort) and their weights
// (normalized), gate, up and down over the used experts (MUL_MAT_ID), weighted and summed; then the shared expert
// (Qwen3-Next: gated by a sigmoid of its own router) added.
int GraphBuilder::moe(int in) {
  const MoeSpec& e = *m_.moe;
  const std::uint64_t used = e.used, ef = e.expert_ffn;
  const int probs = g_.op(f32(e.experts), {g_.op(f32(e.experts), {in})}, true);
  const int top = g_.view(g_.op(f32(e.experts), {probs}));
  const int weights = g_.op(f32(used), {g_.view(probs), top});
  const int sum = g_.op(f32(1), {g_.op(f32(1), {g_.view(weights)})}, true);
  const int normed = g_.op(f32(used), {g_.view(weights), sum}, true);
  const int experts_in = g_.view(in);
  const int gate = g_.op(f32(ef * used), {experts_in, top});
  const int up = g_.op(f32(ef * used), {experts_in, top});
  const int down = g_.op(f32(m_.hidden * used), {g_.op(f32(ef * used), {gate, up}), top});
  const int weighted = g_.op(f32(m_.hidden * used), {down, g_.view(normed)}, true);
  // The experts' rows summed: the first ADD into a new tensor, the others in place (one node stands for them).
  int out = g_.op(f32(m_.hidden), {g_.view(weighted), g_.view(weighted)}, true);
  if (used > 2) out = g_.op(f32(m_.hidden), {out, g_.view(weighted)}, true);
  const std::uint64_t sf = e.shared_experts * ef;
  if (sf == 0) return out;
  const int shared = g_.op(f32(m_.hidden), {g_.op(f32(sf), {g_.op(f32(sf), {in}), g_.op(f32(sf), {in})})});
  int gated = shared;
  if (is("qwen3next")) gated = g_.op(f32(m_.hidden), {shared, g_.op(f32(1), {g_.op(f32(1), {in})}, true)}, true);
  return g_.op(f32(m_.hidden), {out, gated}, true);
}

// A state layer's convolution state gathered from the cache (build_rs: GET_ROWS by the state copy indices):
// (conv_kernel - 1) columns of the convolution's channels a sequence.
void GraphBuilder::gather_conv_state() {
  const StateSpec& st = *m_.state;
  // A short convolution's channels are the hidden width; Mamba-2's and the delta net's x (or v) and B, C (or q, k).
  const std::uint64_t channels =
      st.kind == StateKind::shortconv ? m_.hidden : st.inner + 2ull * st.groups * st.state_dim;
  conv_state_ = g_.op(4ull * (st.conv_kernel - 1) * channels * s_.sequences, {g_.view(s_copy_)});
}

// A state layer: RMS norm, its mixer, the residual, the feed-forward.
int GraphBuilder::state_layer(int x, std::uint32_t layer) {
  if (conv_state_ < 0 && gathers_ahead()) gather_conv_state();  // the first state layer's
  const int in = norm(x, m_.hidden);
  int out = -1;
  switch (m_.state->kind) {
    case StateKind::shortconv: out = shortconv(in, layer); break;
    case StateKind::mamba2: out = mamba2(in, layer); break;
    case StateKind::gated_delta_net: out = delta_net(in); break;
  }
  return ffn(residual_add(x, out), layer);
}

// LFM2's short convolution (src/models/lfm2.cpp): in_proj to B, C and x; B x after the state; SSM_CONV; C times
// it; out_proj.
int GraphBuilder::shortconv(int in, std::uint32_t layer) {
  const std::uint64_t h = m_.hidden, d_conv = m_.state->conv_kernel - 1;
  const int bcx = g_.op(f32(3 * h), {g_.view(in)});
  const int bx = g_.op(f32(h), {g_.view(bcx), g_.view(bcx)});
  const int cat = g_.op(4 * h * (s_.tokens + d_conv * s_.sequences), {g_.view(conv_state_), g_.view(bx)});
  conv_state_ = -1;
  g_.sink({g_.view(cat)});
  if (state_next(layer)) gather_conv_state();
  const int c = g_.view(bcx);
  const int cy = g_.op(f32(h), {c, g_.op(f32(h), {cat})}, true);
  return g_.view(g_.op(f32(h), {cy}));
}

// A Mamba-2 block (llm_build_mamba_base::build_mamba2_layer): ssm_in to z, xBC and dt; xBC after the state;
// SSM_CONV, bias, SiLU (x, B and C); dt plus its bias; SSM_SCAN (y and the new states); y + x D; z-gated; group
// RMS norm; ssm_out.
int GraphBuilder::mamba2(int in, std::uint32_t layer) {
  const StateSpec& st = *m_.state;
  const std::uint64_t inner = st.inner, conv_dim = inner + 2ull * st.groups * st.state_dim;
  const std::uint64_t d_conv = st.conv_kernel - 1;
  const int zx = g_.view(g_.op(f32(inner + conv_dim + st.heads), {in}));
  const int xbc = g_.view(g_.view(zx));  // viewed and transposed
  const int cat = g_.op(4 * conv_dim * (s_.tokens + d_conv * s_.sequences), {g_.view(conv_state_), xbc});
  conv_state_ = -1;
  g_.sink({g_.view(cat)});
  int conv = g_.op(f32(conv_dim), {cat});
  conv = g_.op(f32(conv_dim), {g_.op(f32(conv_dim), {conv}, true)}, true);
  const int x = g_.view(conv);
  const int dt = g_.op(f32(st.heads), {g_.op(f32(st.heads), {g_.view(zx)})}, true);
  const int scan = g_.op(4 * (inner * s_.tokens + std::uint64_t{st.state_dim} * inner * s_.sequences),
                         {x, dt, g_.view(conv), g_.view(conv), g_.view(s_copy_)});
  g_.sink({g_.view(scan)});
  if (state_next(layer)) gather_conv_state();
  const int z = g_.op(f32(inner), {g_.view(zx)});
  const int y = g_.op(f32(inner), {g_.view(scan), g_.op(f32(inner), {x})}, true);  // y + x D
  const int normed = norm(g_.view(g_.op(f32(inner), {z, y})), inner);
  return g_.op(f32(m_.hidden), {g_.view(normed)});
}

// Qwen3-Next's gated delta net (src/models/qwen3next.cpp): the convolution state; attn_qkv after it; SSM_CONV and
// SiLU; Q and K L2-normed and repeated to the value heads; beta and the decay from ssm_ba; GATED_DELTA_NET (the
// output and the new state) from the recurrent state; RMS norm gated by SiLU(attn_gate); ssm_out.
int GraphBuilder::delta_net(int in) {
  const StateSpec& st = *m_.state;
  const std::uint64_t inner = st.inner, key = std::uint64_t{st.groups} * st.state_dim;
  const std::uint64_t channels = inner + 2 * key, d_conv = st.conv_kernel - 1;
  const std::uint64_t head_key = std::uint64_t{st.heads} * st.state_dim;  // the keys repeated to the value heads
  const std::uint64_t state_bytes = 4 * head_key * (inner / std::max(st.heads, 1u)) * s_.sequences;
  gather_conv_state();
  const int qkv = g_.op(f32(channels), {in});
  const int cat = g_.op(4 * channels * (s_.tokens + d_conv * s_.sequences),
                        {g_.view(conv_state_), g_.view(g_.view(qkv))});
  conv_state_ = -1;
  const int state = g_.op(state_bytes, {g_.view(s_copy_)});
  g_.sink({g_.view(cat)});
  const int conv = g_.op(f32(channels), {g_.op(f32(channels), {cat})}, true);
  const int qn = g_.view(g_.op(f32(head_key), {g_.view(g_.op(f32(key), {g_.view(conv)}))}));
  const int kn = g_.view(g_.op(f32(head_key), {g_.view(g_.op(f32(key), {g_.view(conv)}))}));
  const int ba = g_.view(g_.op(f32(2ull * st.heads), {in}));
  const int gate = g_.op(f32(st.heads), {g_.op(f32(st.heads), {g_.op(f32(st.heads), {g_.view(ba)})}, true)}, true);
  const int beta = g_.op(f32(st.heads), {g_.op(f32(st.heads), {g_.view(ba)})}, true);
  const int out = g_.op(4 * inner * s_.tokens + state_bytes,
                        {qn, kn, g_.view(conv), g_.view(gate), g_.view(beta), g_.view(state)});
  g_.sink({g_.view(out)});
  const int normed = norm(g_.view(out), inner);
  const int z = g_.op(f32(inner), {g_.view(g_.op(f32(inner), {in}))}, true);
  return g_.view(g_.op(f32(m_.hidden), {g_.view(g_.op(f32(inner), {normed, z}, true))}));
}

}  // namespace

ComputeGraph llama_graph(const ModelSpec& m, const GraphShape& s) { return GraphBuilder(m, s).build(); }

}  // namespace edgeplan
