// What the commands that write files share: the inputs an output file must not be.
#include "cli/command.hpp"

namespace edgeplan::cli {

namespace {

void collect_sources(const io::Node& j, std::vector<std::string>& out) {
  if (j.is_array()) {
    for (const io::Node& item : j) collect_sources(item, out);
  } else if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (key == "source" && value.is_string()) {
        out.push_back(value.get<std::string>());
      } else {
        collect_sources(value, out);
      }
    }
  }
}

}  // namespace

std::vector<std::string> input_files(const io::Node& inputs, std::vector<std::string> paths) {
  collect_sources(inputs, paths);
  return paths;
}

}  // namespace edgeplan::cli
