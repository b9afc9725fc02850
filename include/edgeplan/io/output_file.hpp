// Every file edgeplan writes (`route --trace-out`, `bench --write-profile`, `calibrate --write-profile`) goes through
// OutputFile, so no data is lost: a path that is one of the command's inputs is refused (compared with
// std::filesystem::equivalent, so links and ./ are caught); an existing file is replaced only with --force; the
// text goes to a temporary file in the same folder (NAME.edgeplan-PID.tmp), every write, the flush, the fsync
// and the close are checked, and only then is it renamed over the path, so an error or a kill leaves the old
// file whole. A path that is not a regular file (/dev/stdout, a FIFO) is written directly, and checked the same.
#pragma once

#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

// Where a command writes, as given on its command line.
struct OutputPath {
  std::string path;
  std::string option;  // the option naming it, for messages: "--trace-out"
  bool force = false;  // --force: replace an existing file
};

class OutputFile {
 public:
  // Checks `target` against `inputs` (paths of the files the command reads; ones that do not exist are skipped)
  // and opens the temporary file. Fails when the path is an input, an existing file without force, a folder,
  // or cannot be written.
  static Result<OutputFile> open(const OutputPath& target, const std::vector<std::string>& inputs);

  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();  // an uncommitted temporary file is removed

  std::ostream& stream() { return *out_; }

  // Flushes and closes the file, checking that every write succeeded, then renames it over the path.
  std::optional<Error> commit();

 private:
  OutputFile(OutputPath target, std::string final_path, std::string temp_path);
  Error failure(std::string_view what, int error_number) const;

  OutputPath target_;
  std::string final_path_;  // the path, symbolic links followed
  std::string temp_path_;   // empty when the path is written directly
  std::unique_ptr<std::ofstream> out_;
};

// Writes `text` to `target` through an OutputFile.
std::optional<Error> write_output(const OutputPath& target, const std::vector<std::string>& inputs,
                                  std::string_view text);

}  // namespace edgeplan::io
