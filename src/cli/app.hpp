// What the driver (app.cpp), the command table (registry.cpp) and the sweep road (sweep.cpp) share inside the
// cli layer.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/require.hpp"
#include "edgeplan/io/sweep.hpp"

namespace edgeplan::cli {

// Adds the options every command takes (--profiles, --set, --format, --sweep, --require) to `app`.
void add_common(CLI::App& app, CommonOptions& o);

// Adds to every numeric option of `app` a check that refuses negative, non-finite and out-of-range values.
void check_numeric_options(CLI::App& app);

// What a run of a command says besides its output: requirements that failed (exit 1) and figures that could
// not be evaluated (exit 2).
struct Verdict {
  std::vector<std::string> failures, errors;
};

// The command's own gate (check) first, then the --require expressions.
Verdict verdict_of(const io::Report& report, const std::vector<io::Requirement>& reqs);

// Runs `command` (its arguments `args`, without the program and command names) once per combination of the
// sweeps and writes one table: a column per swept key in front of the columns of the command's first table.
// Requirements are checked on every combination; the failures and the figures that could not be evaluated are
// returned, in combination order.
Verdict run_sweep(const Command& command, const std::vector<std::string>& args, const CommonOptions& common,
                  const std::vector<io::SweepAxis>& axes, const std::vector<io::Requirement>& reqs,
                  const io::Format& format, std::ostream& out);

}  // namespace edgeplan::cli
