#include "edgeplan/io/inputs.hpp"

#include "edgeplan/core/place.hpp"
#include "edgeplan/util/units.hpp"
#include "edgeplan/io/schema/kinds.hpp"

namespace edgeplan::io {

Node to_json(const DeviceSpec& d) {
  Node j = Node::object();
  schema::echo(schema::device_schema(), d, j);
  return j;
}

Node to_json(const ModelSpec& m) {
  Node j = Node::object();
  schema::echo(schema::model_schema(), m, j);
  return j;
}

}  // namespace edgeplan::io
