// The device profile `edgeplan calibrate` writes (cmd_calibrate.cpp), edited with toml++ in its own file so the
// command file does not parse toml++ (docs/performance.md, "Compiling a command file").
#pragma once

#include <string>

#include "cli/command.hpp"

namespace edgeplan::cli {

// The device profile's text with the fitted values that changed (and --set overrides) edited in place: its
// comments and layout kept, only those values' text replaced; a comment line on top says what was fitted. The
// fit's [provenance] replaces the profile's (its keys edited in place, or the section added at the end).
std::string fitted_profile(const Context& ctx, const std::string& device, const DeviceSpec& before,
                           const DeviceSpec& fitted, const std::string& results);

}  // namespace edgeplan::cli
