// core/compute_graph.hpp: the replay of ggml-alloc on graphs small enough to lay out by hand (offsets in bytes,
// sizes aligned to 32), and llama_graph's shape. The whole graphs are checked against llama.cpp's own buffers in
// runtime_test.cpp (figures from tests/llamacpp/check-runtime).
#include "edgeplan/core/compute_graph.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace edgeplan {
namespace {

TEST(GgmlAlloc, AnInPlaceOpTakesItsSourcesMemory) {
  ComputeGraph g;
  const int a = g.input(64);
  const int b = g.op(64, {a}, true);  // a's last reader, same size: b overwrites a
  g.op(64, {b}, true);
  EXPECT_EQ(ggml_alloc_bytes(g), 64u);
}

TEST(GgmlAlloc, BestFitAndMergedBlocks) {
  ComputeGraph g;
  const int t = g.input(20);          // [0, 32)
  const int a = g.op(64, {t});        // [32, 96); t freed after a
  const int b = g.op(128, {a});       // [0, 32) is too small: the end, [96, 224); a freed: [0, 96) free
  const int c = g.op(32, {b});        // the best fit [0, 96): [0, 32); b freed, merging into the end
  g.op(64, {c});                      // [32, 96)
  EXPECT_EQ(ggml_alloc_bytes(g), 224u);
}

TEST(GgmlAlloc, OutputsAreNeverFreed) {
  ComputeGraph g;
  const int t = g.input(20);
  const int a = g.op(64, {t});
  const int b = g.op(128, {a});
  g.mark_output(b);                   // b stays at [96, 224)
  const int c = g.op(32, {b});        // [0, 32)
  g.op(128, {c});                     // [32, 96) is too small: the end, [224, 352)
  EXPECT_EQ(ggml_alloc_bytes(g), 352u);
}

TEST(GgmlAlloc, AViewKeepsItsTensorAndIsNeverOverwritten) {
  ComputeGraph g;
  const int t = g.input(64);          // [0, 64)
  const int a = g.op(64, {t});        // [64, 128); t freed
  const int v = g.view(a);
  const int b = g.op(64, {v}, true);  // a view is not the allocator's own: b takes [0, 64), a lives until then
  g.op(64, {b}, true);
  EXPECT_EQ(ggml_alloc_bytes(g), 128u);
  ComputeGraph h;
  const int x = h.input(64);          // [0, 64)
  const int w = h.input(32);          // [64, 96): inputs before every node
  const int y = h.op(64, {x});        // [96, 160); x freed
  h.sink({h.view(y)});                // a write into the KV cache, y's last reader: y freed, the end back at 96
  h.op(128, {w});                     // [0, 64) is too small: [96, 224)
  EXPECT_EQ(ggml_alloc_bytes(h), 224u);
}

TEST(LlamaGraph, InputsLayersAndLogits) {
  const ModelSpec m = fixtures::dense("tiny", 2, 8, 2, 1, 4, 16, 100);
  GraphShape s;
  s.tokens = 4;
  s.outputs = 4;
  s.cells = 256;
  const ComputeGraph g = llama_graph(m, s);
  int inputs = 0, outputs = 0;
  for (const GraphTensor& t : g.tensors()) {
    inputs += t.input;
    outputs += t.output;
  }
  EXPECT_EQ(inputs, 7);   // tokens, embeddings, positions, K and V cache indices, the KQ mask, the output ids
  EXPECT_EQ(outputs, 2);  // the normed hidden states and the logits
  EXPECT_EQ(g.tensors().back().bytes, 4u * 100 * 4);
}

TEST(LlamaGraph, AModelDeeperThanAnyReleasedIsReplayedThroughItsFirstLayersAndItsLast) {
  ModelSpec m = fixtures::dense("deep", 300, 64, 2, 1, 32, 128, 1000);
  GraphShape s;
  s.tokens = s.outputs = 16;
  s.cells = 256;
  const ComputeGraph g = llama_graph(m, s);
  m.layers = 65536;  // layers_range's bound: the same 256 layers replayed, not 65,536
  const ComputeGraph deep = llama_graph(m, s);
  EXPECT_EQ(deep.tensors().size(), g.tensors().size());
  EXPECT_EQ(ggml_alloc_bytes(deep), ggml_alloc_bytes(g));
  EXPECT_GT(ggml_alloc_bytes(g), 4u * 1000 * 16);  // the logits and what lies under them
}

}  // namespace
}  // namespace edgeplan
