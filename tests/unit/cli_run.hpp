// Runs the whole CLI in-process, as `edgeplan ARGS...` would: the tests that check commands end to end
// without spawning the binary (bad input, properties of the output, sweeps).
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli/command.hpp"

namespace edgeplan::testing_cli {

struct CliRun {
  int exit_code;
  std::string out, err;
};

inline CliRun run_cli(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"edgeplan"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = cli::run(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

}  // namespace edgeplan::testing_cli
