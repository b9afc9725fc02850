// edgeplan import: writes the TOML model profile equivalent to a model file (GGUF or Hugging Face config.json).
#include <fmt/format.h>

#include "cli/command.hpp"
#include "edgeplan/io/model_file.hpp"

namespace edgeplan::cli {

Runner setup_import(Options& opts) {
  auto file = std::make_shared<std::string>();
  opts.add(Opt::file, *file, "Model file: a GGUF file or a Hugging Face config.json").required();
  return [file](const Context& ctx) {
    io::Report r;
    r.command = "import";
    if (!io::is_model_file(*file)) {
      throw UsageError(fmt::format("import: '{}' is not a model file (expected a .gguf or a config.json)", *file));
    }
    const ModelSpec m = ctx.model(*file, r.inputs);  // validates the result like any profile
    r.verbatim = io::model_profile_toml(m, *file);
    return r;
  };
}

}  // namespace edgeplan::cli
