// Operator-graph files (profiles/graphs/NAME.toml): one decoder layer as an explicit list of ops, read by
// `place --graph` and written by `place --emit-graph` in the same format. Schema: docs/profiles.md, "Graph".
#pragma once

#include <string>
#include <vector>

#include "edgeplan/core/place.hpp"
#include "edgeplan/util/result.hpp"
#include "edgeplan/io/profiles.hpp"

namespace edgeplan::io {

Result<OpGraph> load_graph(const ProfileText& text, const std::vector<Override>& overrides);

// The graph as a TOML file that load_graph reads back; `origin` goes into its first comment line.
std::string graph_toml(const OpGraph& g, const std::string& origin);

}  // namespace edgeplan::io
