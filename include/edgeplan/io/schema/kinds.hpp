// The schema table of each profile kind (io/schema/schema.hpp): device (src/io/schema/device.cpp), model
// (model.cpp), runtime class (runtime_class.cpp), storage class
// (storage_class.cpp), cloud, the entries of a requests profile and of an operator graph (route_graph.cpp).
// Schema in prose: docs/profiles.md.
#pragma once

#include <cstddef>
#include <string_view>

#include "edgeplan/core/device.hpp"
#include "edgeplan/core/model.hpp"
#include "edgeplan/core/place.hpp"
#include "edgeplan/core/route.hpp"
#include "edgeplan/core/runtime_class.hpp"
#include "edgeplan/core/stream.hpp"
#include "edgeplan/io/schema/schema.hpp"

namespace edgeplan::io::schema {

const Schema<DeviceSpec>& device_schema();
// The [prefill] key of kPrefillTypes[i]'s own efficiency: "q4_0_efficiency" (i < kPrefillTypes.size()).
std::string_view prefill_type_key(std::size_t i);
// The [decode] key of kPrefillTypes[i]'s one-token rate: "q4_0_gflops" (i < kPrefillTypes.size()).
std::string_view decode_type_key(std::size_t i);
const Schema<ModelSpec>& model_schema();
const Schema<CloudSpec>& cloud_schema();
const Schema<RouteRequest>& request_schema();  // one [[request]] of a requests profile
const Schema<Op>& op_schema();                 // one [[ops]] of a graph
const Schema<RuntimeClass>& runtime_class_schema();  // a runtime class (runtimes/)
const Schema<StorageClass>& storage_class_schema();  // a storage class (storage/)

}  // namespace edgeplan::io::schema
