// What the driver (app.cpp), the command table (registry.cpp) and the sweep road (sweep.cpp) share inside the
// cli layer.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/require.hpp"
#include "edgeplan/io/sweep.hpp"

namespace edgeplan::cli {

// Adds `command`'s options and the ones every command takes (--profiles, --set, --format, --sweep, --require,
// filling `common`) to `app`, each with the checks of its row, and returns what runs the command.
Runner add_command(CLI::App& app, const Command& command, CommonOptions& common);

// The completion script for `shell` (bash, zsh or fish) from the command and option tables; nullopt for another
// shell (completion.cpp).
std::optional<std::string> completion_script(std::string_view shell);

// What a run of a command says besides its output: requirements that failed (exit 1) and figures that could
// not be evaluated (exit 2).
struct Verdict {
  std::vector<std::string> failures, errors;
};

// The command's own gate (check) first, then the --require expressions.
Verdict verdict_of(const io::Report& report, const std::vector<io::Requirement>& reqs);

// A usage error when `format` draws charts (io::Format::draws) and `report` has none: the message names the
// commands that have them.
void need_charts(const io::Report& report, const io::Format& format);

// Whether the numbers of sweep axis `key` count whole things, so JSON and CSV write them as integers
// (io::Column::count): an option that takes a whole number, tokens or bytes (context, prompt, parallel), or a
// profile key whose schema row is a count or an integral number (model.layers, model.params).
bool sweep_counts(std::string_view key);

// --sweep text KEY=... with each value of a token-count or byte-size option written as a whole number
// ("context=8k:32k:8k" is "context=8192:32768:8192"), so its cells are numbers; any other text as it is.
std::string sweep_in_units(std::string_view text);

// Runs `command` (its arguments `args`, without the program and command names) once per combination of the
// sweeps and writes one table: a column per swept key in front of the columns of the command's first table.
// Requirements are checked on every combination; the failures and the figures that could not be evaluated are
// returned, in combination order.
Verdict run_sweep(const Command& command, const std::vector<std::string>& args, const CommonOptions& common,
                  const std::vector<io::SweepAxis>& axes, const std::vector<io::Requirement>& reqs,
                  const io::Format& format, std::ostream& out);

}  // namespace edgeplan::cli
