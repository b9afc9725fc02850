#include "edgeplan/io/inputs.hpp"

#include "edgeplan/core/place.hpp"
#include "edgeplan/util/units.hpp"
#include "edgeplan/io/schema/kinds.hpp"

namespace edgeplan::io {

Json to_json(const DeviceSpec& d) {
  Json j = Json::object();
  schema::echo(schema::device_schema(), d, j);
  return j;
}

Json to_json(const ModelSpec& m) {
  Json j = Json::object();
  schema::echo(schema::model_schema(), m, j);
  return j;
}

}  // namespace edgeplan::io
