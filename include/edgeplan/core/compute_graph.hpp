// llama.cpp's compute buffer as its graph allocator lays it out: the worst-case graph of a context (a full
// micro-batch), built tensor by tensor in llama.cpp's order, and a replay of ggml-alloc over it.
//   ggml_alloc_bytes  ggml/src/ggml-alloc.c: graph inputs first; then node by node, a node overwrites a source
//                     in place where its op allows it (ggml_op_can_inplace), the source is the allocator's own,
//                     not a view or a graph output, has the node's layout and no other reader left; else it takes
//                     the best-fitting free block (the smallest that holds it, the end of the buffer last; sizes
//                     aligned to 32 bytes); a tensor is freed when its last reader and the last reader of its
//                     views have run, and free blocks merge with their neighbours. Graph outputs are never freed.
//                     The buffer is the highest end reached.
//   llama_graph       the graph llama.cpp reserves for T tokens (and its outputs) and `cells` cache cells per
//                     sequence: the inputs, each layer's tensors (norms, projections, RoPE, flash attention or the
//                     F32 scores, the feed-forward or mixture of experts, and a hybrid's state layers: short
//                     convolutions, Mamba-2, gated delta nets), the output norm and the logits. Weights, the KV
//                     cache and the recurrent states live in their own buffers and are left out.
// Source: llama.cpp as bundled with node-llama-cpp 3.21.1 (ggml/src/ggml-alloc.c; src/llama-graph.cpp,
// src/llama-kv-cache.cpp, src/models/llama.cpp, lfm2.cpp, granite-hybrid.cpp, mamba-base.cpp, qwen3next.cpp),
// checked node by node against the allocator's own trace (ggml-alloc.c built with its AT_PRINTF lines) and, in CI,
// to the byte by tests/llamacpp/check-runtime (docs/model.md, "Runtime buffers").
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "edgeplan/core/model.hpp"

namespace edgeplan {

// One tensor of a compute graph as ggml-alloc sees it.
struct GraphTensor {
  std::uint64_t bytes = 0;                 // ggml_nbytes (0 for a view)
  std::array<int, 6> src{-1, -1, -1, -1, -1, -1};  // the graph tensors it reads (weights and caches left out)
  int view_of = -1;                        // a view: the tensor it shows (kExternal: memory of another buffer)
  bool inplace = false;                    // its op may overwrite a source of its layout (ggml_op_can_inplace)
  bool input = false;                      // a graph input, allocated before the nodes
  bool output = false;                     // a graph output, never freed
};

class ComputeGraph {
 public:
  static constexpr int kExternal = -2;
  int input(std::uint64_t bytes);
  // A node of `bytes` reading src; inplace where its op may overwrite a source of the same layout.
  int op(std::uint64_t bytes, std::initializer_list<int> src, bool inplace = false);
  int view(int of);                         // a view, reshape, permute or transpose of `of`
  int sink(std::initializer_list<int> src);  // a write into another buffer (SET_ROWS into the KV cache, CPY)
  void mark_output(int t);
  const std::vector<GraphTensor>& tensors() const { return t_; }

 private:
  std::vector<GraphTensor> t_;
};

// The bytes ggml-alloc reserves for g.
std::uint64_t ggml_alloc_bytes(const ComputeGraph& g);

// The shape of the graph llama.cpp reserves for a context.
struct GraphShape {
  std::uint64_t tokens = 0;      // T: the micro-batch, a multiple of the sequences
  std::uint64_t outputs = 0;     // rows of logits: the micro-batch before that rounding
  std::uint64_t cells = 0;       // cache cells the KQ mask spans (one sequence's, the padded context)
  bool flash_attn = true;
  bool rotate_k = false;         // a quantized K cache: Q and K through a Hadamard rotation (attn_rot_k)
  bool rotate_v = false;         // a quantized V cache: V and the attention output through one (attn_rot_v)
  std::uint32_t sequences = 1;   // the recurrent states a state layer gathers
};

ComputeGraph llama_graph(const ModelSpec& m, const GraphShape& s);

}  // namespace edgeplan
