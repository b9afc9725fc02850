// What the two roads of `calibrate` share (cmd_calibrate.cpp: one device; calibrate_class.cpp: a runtime class across
// its devices, core/runtime_class.hpp): reading results and the model profiles their rows name.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "cli/command.hpp"

namespace edgeplan::cli {

// The text of llama-bench results or published measurements at `path` (`kind` names them in the error).
std::string read_results(const std::string& path, std::string_view kind);

// The model profiles published measurements name (their model column), each loaded once with the --set overrides;
// none for a name no profile has (a row then is costed from its model_size and model_n_params, as a llama-bench
// row is, or not at all).
class RowModels {
 public:
  explicit RowModels(const Context& ctx) : ctx_(ctx) {}
  const ModelSpec* of(const std::string& name);

 private:
  const Context& ctx_;
  std::map<std::string, std::optional<ModelSpec>> loaded_;
};

// `calibrate --class NAME`: the page of the fit of class `name` to the measurements of `results` (a file, or a
// directory of .csv files); with a `write` path, the fitted class profile is written there.
io::Report calibrate_class(const std::string& name, const std::string& results, const io::OutputPath& write,
                           const Context& ctx);

}  // namespace edgeplan::cli
