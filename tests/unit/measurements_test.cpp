// The published measurements shipped in profiles/measurements/*.csv (docs/accuracy.md, "Published measurements"):
// each file reads as llama-bench results, each row cites a public source, and none is of a held-out device (the
// project's out-of-sample check: the Apple M3, M4 and M2 Ultra, Jetson AGX Orin, Intel Lunar Lake, AMD Ryzen AI 300
// and Snapdragon X Elite are predicted from their datasheets and other devices' measurements, never fitted).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "edgeplan/io/csv.hpp"
#include "edgeplan/io/llama_bench.hpp"
#include "test_files.hpp"

namespace edgeplan::io {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> measurement_files() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(EDGEPLAN_SOURCE_DIR) / "profiles/measurements")) {
    if (e.path().extension() == ".csv") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Measurements, EveryRowReadsAndCitesItsSource) {
  const std::regex kebab("[a-z0-9][a-z0-9.-]*");
  std::size_t rows = 0;
  std::set<std::string> devices;
  for (const fs::path& file : measurement_files()) {
    const std::string text = testing_files::read_file(file);
    const std::string header = testing_files::lines_of(text).at(0);
    EXPECT_EQ(header, "device,chip,runtime,build_commit,backends,n_threads,model,model_type,format,model_size,"
                      "model_n_params,test,n_prompt,n_gen,avg_ts,date,source,note") << file;
    auto read = parse_llama_bench(text, file.filename().string());
    ASSERT_TRUE(read.ok()) << read.error().message;
    for (const BenchRow& row : *read) {
      EXPECT_TRUE(row.source.starts_with("https://")) << row.where << ": " << row.source;
      EXPECT_TRUE(std::regex_match(row.device, kebab)) << row.where << ": " << row.device;
      EXPECT_TRUE(std::regex_match(row.model, kebab)) << row.where << ": " << row.model;
      EXPECT_FALSE(row.runtime.empty()) << row.where;
      EXPECT_TRUE(row.stated.has_value()) << row.where;
      devices.insert(row.device);
      ++rows;
    }
  }
  // The aim: several hundred rows over 15 devices or more.
  EXPECT_GE(rows, 400u);
  EXPECT_GE(devices.size(), 15u);
}

TEST(Measurements, NoHeldOutDevice) {
  const std::regex held_out(
      "apple-m3|apple-m4|m2-ultra|\\bm3\\b|\\bm4\\b|m2 ultra|agx[ -]orin|lunar[ -]lake|\\b2[0-9]{2}v\\b|"
      "arc 1[34]0v|ryzen ai|strix|hx 37|ai-9|ai-max|\\b8[89]0m\\b|\\b8[46]0m\\b|snapdragon[ -]x\\b|x elite|x-elite|x plus|"
      "x1e|x1p",
      std::regex::icase);
  for (const fs::path& file : measurement_files()) {
    // The device and chip columns name the hardware; notes may mention others in passing.
    const auto error = csv_records(testing_files::read_file(file), file.filename().string(),
                                   [&](const CsvRecord& r) -> std::optional<Error> {
                                     const std::string hardware = r.fields.at("device") + " " + r.fields.at("chip");
                                     EXPECT_FALSE(std::regex_search(hardware, held_out)) << r.where << ": " << hardware;
                                     return std::nullopt;
                                   });
    EXPECT_FALSE(error) << error->message;
  }
}

// docs/accuracy.md's table of the published measurements, one row per device, made from the files: the doc cannot
// drift from the data (with EDGEPLAN_REGEN=1 the table is rewritten, as scripts/regen-golden does for goldens).
TEST(Measurements, TheDocsTableIsMadeFromTheData) {
  struct Device {
    std::size_t decode = 0, prefill = 0;
    std::set<std::string> runtimes, models, sources;
  };
  std::map<std::string, Device> devices;
  std::size_t rows = 0;
  std::set<std::string> sources;
  for (const fs::path& file : measurement_files()) {
    auto read = parse_llama_bench(testing_files::read_file(file), file.filename().string());
    ASSERT_TRUE(read.ok()) << read.error().message;
    for (const BenchRow& row : *read) {
      Device& d = devices[row.device];
      ++(row.stated == BenchTest::decode ? d.decode : d.prefill);
      d.runtimes.insert(row.runtime_label());
      d.models.insert(row.model);
      d.sources.insert(row.source);
      sources.insert(row.source);
      ++rows;
    }
  }
  const auto joined = [](const std::set<std::string>& items) {
    std::string out;
    for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
    return out;
  };
  std::string table = "| device | decode figures | prefill figures | runtimes | models | sources |\n"
                      "|---|---|---|---|---|---|\n";
  for (const auto& [name, d] : devices) {
    table += "| " + name + " | " + std::to_string(d.decode) + " | " + std::to_string(d.prefill) + " | " +
             joined(d.runtimes) + " | " + joined(d.models) + " | " + std::to_string(d.sources.size()) + " |\n";
  }
  table += "\n" + std::to_string(rows) + " figures on " + std::to_string(devices.size()) + " devices from " +
           std::to_string(sources.size()) + " public sources.\n";
  const fs::path doc = fs::path(EDGEPLAN_SOURCE_DIR) / "docs/accuracy.md";
  std::string text = testing_files::read_file(doc);
  const std::string begin = "<!-- measurements table: made by tests/unit/measurements_test.cpp -->\n";
  const std::string end = "<!-- end of measurements table -->";
  const auto from = text.find(begin), to = text.find(end);
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  const std::string shown = text.substr(from + begin.size(), to - from - begin.size());
  if (const char* regen = std::getenv("EDGEPLAN_REGEN"); regen && std::string(regen) == "1" && shown != table) {
    text.replace(from + begin.size(), to - from - begin.size(), table);
    std::ofstream(doc, std::ios::binary) << text;
    return;
  }
  EXPECT_EQ(shown, table) << "docs/accuracy.md's measurements table is not the data's: run the unit tests with "
                             "EDGEPLAN_REGEN=1 to rewrite it";
}

}  // namespace
}  // namespace edgeplan::io
