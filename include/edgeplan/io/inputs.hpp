// The resolved inputs as JSON: what a result was computed from, repeated beside it (docs/json.md), by the
// rows of the profiles' schemas (io/schema/kinds.hpp).
#pragma once

#include "edgeplan/core/device.hpp"
#include "edgeplan/core/model.hpp"
#include "edgeplan/io/report.hpp"

namespace edgeplan::io {

Node to_json(const DeviceSpec& d);
Node to_json(const ModelSpec& m);

}  // namespace edgeplan::io
