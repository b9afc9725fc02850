// What tests read and build as text: a whole file, a file of the source tree, the lines of a text, a string
// repeated.
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace edgeplan::testing_files {

// The bytes of `path` ("" when it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The bytes of a file of the source tree, by its path from the root ("tests/data/...").
inline std::string source_file(const std::string& path) { return read_file(std::filesystem::path(EDGEPLAN_SOURCE_DIR) / path); }

// The lines of `text`, without their line ends.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// `s` n times over.
inline std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace edgeplan::testing_files
