// --require 'FIELD OP VALUE': a gate on one figure of a result, for CI. FIELD is a path into the JSON
// results: `fits`, `budget_gib`, `formats[Q4_K_M].tok_per_s` (a table's row is picked by the value of its
// first field, or by index), or `tok_per_s` alone when a one-row table holds it. OP is one of
// < <= > >= == !=; VALUE a number, true/false, or text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/util/result.hpp"
#include "edgeplan/io/report.hpp"

namespace edgeplan::io {

struct Requirement {
  std::string field;
  std::string op;
  Node bound;
  std::string text;  // as the user wrote it
};

Result<Requirement> parse_requirement(std::string_view text);

// Looks FIELD up in results. Fails (a usage error) when the field does not exist, naming the nearest.
Result<Node> lookup_field(const Node& results, const std::string& field);

struct Outcome {
  bool pass = false;
  std::string value;  // the figure's value as text
  Node figure;        // the figure's value, with its JSON type
};

// Evaluates one requirement; an Error when it cannot be (unknown field, comparing text with <).
Result<Outcome> evaluate_requirement(const Node& results, const Requirement& r);

// One message per failed requirement ("fits == true failed: fits is false"); an Error when a requirement
// cannot be evaluated (unknown field, comparing text with <).
Result<std::vector<std::string>> check_requirements(const Node& results, const std::vector<Requirement>& reqs);

}  // namespace edgeplan::io
