// A scratch directory for one test: made empty when the test starts, removed when it ends. Named after the
// test and the process, so tests running side by side (ctest -j) never share one.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace edgeplan::testing_dir {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / ("edgeplan_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  operator const std::filesystem::path&() const { return path_; }  // NOLINT: used where a path is
  std::filesystem::path operator/(const std::filesystem::path& name) const { return path_ / name; }
  std::string string() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace edgeplan::testing_dir
