// JSON itself (nlohmann_json), for the files that write or read JSON text: the JSON and drawing renderers,
// --require's text of a figure, the parsers of config.json and llama-bench results, and tests. Command files
// fill a report's values as io::Node (io/node.hpp) and never see this header.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "edgeplan/io/node.hpp"
#include "edgeplan/io/report.hpp"

namespace edgeplan::io {

using Json = nlohmann::ordered_json;

// The JSON of a document's value: whole numbers, numbers and text keep their kinds, members their order.
Json to_json(const Node& n);
// The document value of parsed JSON (tests and fuzzers build results from JSON text).
Node from_json(const Json& j);
// One row as a JSON object: the columns' keys, the cells as output_cell makes them (io/render/renderer.hpp).
Json row_json(const std::vector<Cell>& row, const std::vector<Column>& columns);
// The JSON value of a cell.
Json cell_json(const Cell& c);
// JSON text, indented by `indent` (-1: on one line), the invalid bytes of a string that is not UTF-8 as U+FFFD.
std::string json_text(const Json& j, int indent = -1);

}  // namespace edgeplan::io
