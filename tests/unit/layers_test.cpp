// The layers of docs/ARCHITECTURE.md, checked on the source tree: util below core below io below cli. A file
// may include its own layer and the layers below it, never one above; util and core include no third-party
// library (the standard library only), so the model runs anywhere the arithmetic does.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <regex>
#include <string>
#include <vector>

namespace edgeplan {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot{EDGEPLAN_SOURCE_DIR};

// The layers, lowest first, and the directories each one's files live in.
const std::vector<std::string> kLayers{"util", "core", "io", "cli"};

// What `file` (a path under src/ or include/) includes: the quoted and the angled names.
std::vector<std::string> includes_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  static const std::regex include(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, include)) out.push_back(m[1]);
  }
  return out;
}

// The layer an included name belongs to, or "" for a standard or third-party header.
std::string layer_of_include(const std::string& name) {
  for (const std::string& layer : kLayers) {
    if (name.starts_with("edgeplan/" + layer + "/") || name.starts_with(layer + "/")) return layer;
  }
  return "";
}

std::size_t rank(const std::string& layer) {
  return static_cast<std::size_t>(std::find(kLayers.begin(), kLayers.end(), layer) - kLayers.begin());
}

// Every source and header file of a layer.
std::vector<fs::path> files_of(const std::string& layer) {
  std::vector<fs::path> out;
  for (const fs::path& dir : {kRoot / "src" / layer, kRoot / "include" / "edgeplan" / layer}) {
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.is_regular_file() && (e.path().extension() == ".cpp" || e.path().extension() == ".hpp")) {
        out.push_back(e.path());
      }
    }
  }
  return out;
}

// The standard library's headers: no extension, no directory (<vector>, <charconv>).
bool standard_header(const std::string& name) { return name.find('.') == std::string::npos && name.find('/') == std::string::npos; }

TEST(Layers, NoFileIncludesALayerAboveItsOwn) {
  std::vector<std::string> wrong;
  for (const std::string& layer : kLayers) {
    const std::vector<fs::path> files = files_of(layer);
    EXPECT_FALSE(files.empty()) << layer;
    for (const fs::path& f : files) {
      for (const std::string& name : includes_of(f)) {
        const std::string to = layer_of_include(name);
        if (!to.empty() && rank(to) > rank(layer)) {
          wrong.push_back(fs::relative(f, kRoot).string() + " includes " + name);
        }
      }
    }
  }
  EXPECT_EQ(wrong, std::vector<std::string>{});
}

TEST(Layers, UtilAndCoreUseTheStandardLibraryOnly) {
  std::vector<std::string> wrong;
  for (const std::string layer : {"util", "core"}) {
    for (const fs::path& f : files_of(layer)) {
      for (const std::string& name : includes_of(f)) {
        if (layer_of_include(name).empty() && !standard_header(name)) {
          wrong.push_back(fs::relative(f, kRoot).string() + " includes " + name);
        }
      }
    }
  }
  EXPECT_EQ(wrong, std::vector<std::string>{});
}

// Command files declare their options through the option table (cli/options.hpp) and never see CLI11, and fill
// their report's values as io::Node (io/node.hpp) and never see the JSON library, so a change to one of them
// compiles in seconds (issue 14; docs/performance.md): neither they nor the headers they include name CLI11,
// the driver's header (cli/app.hpp), nlohmann_json or io/json.hpp, which does.
TEST(Layers, CommandFilesDoNotSeeTheParserOrTheJsonLibrary) {
  std::vector<std::string> wrong;
  for (const auto& e : fs::directory_iterator(kRoot / "src" / "cli")) {
    const std::string leaf = e.path().filename().string();
    if (!leaf.starts_with("cmd_")) continue;
    std::vector<fs::path> todo{e.path()}, seen;
    while (!todo.empty()) {
      const fs::path f = todo.back();
      todo.pop_back();
      if (std::find(seen.begin(), seen.end(), f) != seen.end()) continue;
      seen.push_back(f);
      for (const std::string& name : includes_of(f)) {
        if (name.starts_with("CLI/") || name == "cli/app.hpp" || name.starts_with("nlohmann/") ||
            name == "edgeplan/io/json.hpp") {
          wrong.push_back(leaf + " sees " + name + " through " + f.filename().string());
        }
        if (name.starts_with("cli/")) todo.push_back(kRoot / "src" / name);
        if (name.starts_with("edgeplan/")) todo.push_back(kRoot / "include" / name);
      }
    }
  }
  EXPECT_EQ(wrong, std::vector<std::string>{});
}

TEST(Layers, TheCheckSeesAWrongInclude) {
  EXPECT_EQ(layer_of_include("edgeplan/io/report.hpp"), "io");
  EXPECT_EQ(layer_of_include("cli/command.hpp"), "cli");
  EXPECT_EQ(layer_of_include("edgeplan/util/result.hpp"), "util");
  EXPECT_EQ(layer_of_include("fmt/format.h"), "");
  EXPECT_GT(rank("cli"), rank("io"));
  EXPECT_GT(rank("io"), rank("core"));
  EXPECT_GT(rank("core"), rank("util"));
  EXPECT_TRUE(standard_header("vector"));
  EXPECT_FALSE(standard_header("toml++/toml.h"));
  EXPECT_FALSE(standard_header("fmt/format.h"));
}

}  // namespace
}  // namespace edgeplan
