#include "edgeplan/io/graph.hpp"

#include <fmt/format.h>

#include "edgeplan/util/names.hpp"
#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/io/profile_reader.hpp"
#include "edgeplan/io/toml_text.hpp"

namespace edgeplan::io {
namespace {

// The groups of op_schema(): name and kind, then those of a matmul or of any other op, then handoff_bytes.
Op read_op(Fields& f) {
  const auto& groups = schema::op_schema().sections;
  Op op;
  schema::read_rows(groups[0].rows, f, op);
  schema::read_rows(groups[op.kind == OpKind::matmul ? 1 : 2].rows, f, op);
  schema::read_rows(groups[3].rows, f, op);
  return op;
}

}  // namespace

Result<OpGraph> load_graph(const ProfileText& text, const std::vector<Override>& overrides) {
  return read_profile<OpGraph>(text, "graph", overrides, [&](Fields& f) {
    OpGraph g;
    f.optional_string("description");
    f.optional_string("source");
    g.seq_tokens = f.count("seq", {1, limits::kPromptTokens});
    std::vector<Fields> ops = f.tables("ops");
    if (ops.empty()) f.fail({}, "needs at least one [[ops]] entry (name, kind, flops or bytes, handoff_bytes)");
    for (Fields& entry : ops) {
      Op op = read_op(entry);
      entry.finish();
      for (const Op& before : g.ops) {
        if (before.name == op.name) entry.fail("name", fmt::format("\"{}\" is used by an earlier op", op.name));
      }
      g.ops.push_back(std::move(op));
    }
    return g;
  });
}

std::string graph_toml(const OpGraph& g, const std::string& origin) {
  // Strings are written by toml++ (a model name holding a quote or a newline reads back as written), numbers with
  // every digit (17 significant), so the graph read back is the graph written.
  const auto quoted = [](std::string_view text) { return toml_value_text(toml::value<std::string>(std::string(text))); };
  std::string out = TomlText()
                        .comment(origin)
                        .comment("One decoder layer; edit it and run `edgeplan place --graph FILE`. Schema: docs/profiles.md.")
                        .text();
  out += fmt::format("description = {}\nseq = {}\n", quoted(origin), g.seq_tokens);
  for (const Op& op : g.ops) {
    out += fmt::format("\n[[ops]]\nname = {}\nkind = {}\n", quoted(op.name), quoted(to_string(op.kind)));
    if (op.kind == OpKind::matmul) {
      out += fmt::format("precision = {}\nflops = {:.17g}\n", quoted(to_string(op.precision)), op.flops);
    }
    out += fmt::format("bytes = {:.17g}\nhandoff_bytes = {:.17g}\n", op.bytes, op.handoff_bytes);
  }
  return out;
}

}  // namespace edgeplan::io
