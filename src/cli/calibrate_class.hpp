// `calibrate --class NAME`: a runtime class fitted across the devices that name it, each left out in turn
// (core/runtime_class.hpp), from published measurements (profiles/measurements/*.csv).
#pragma once

#include <string>

#include "cli/command.hpp"

namespace edgeplan::cli {

// The page of the fit of class `name` to the measurements of `results` (a file, or a directory of .csv files);
// with a `write` path, the fitted class profile is written there.
io::Report calibrate_class(const std::string& name, const std::string& results, const io::OutputPath& write,
                           const Context& ctx);

}  // namespace edgeplan::cli
