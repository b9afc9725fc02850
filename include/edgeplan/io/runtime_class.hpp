// Runtime class profiles (runtimes/NAME.toml, docs/profiles.md "Runtime class"): read as every profile is, and
// written by `calibrate --class --write-profile` through the schema's rows. Storage class profiles
// (storage/NAME.toml, "Storage class"), which a device's [storage] names: read alike.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/core/runtime_class.hpp"
#include "edgeplan/core/stream.hpp"
#include "edgeplan/io/profiles.hpp"
#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

Result<RuntimeClass> load_runtime_class(const ProfileText& text);
Result<StorageClass> load_storage_class(const ProfileText& text);

// The profile text of a fitted class, its header comments first, then a description line.
std::string runtime_class_text(const RuntimeClass& c, std::span<const std::string> comments,
                               std::string_view description);

}  // namespace edgeplan::io
