// core/power.hpp: a device's energy from its watts per phase, on the published figures of the shipped profiles;
// and docs/accuracy.md's [power] table, checked against those profiles.
#include "edgeplan/core/power.hpp"

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "edgeplan/core/place.hpp"
#include "edgeplan/io/profiles.hpp"
#include "test_files.hpp"

namespace edgeplan {
namespace {

// jetson-orin-nano-8g: 6.04 W on the CPU+GPU rail prefilling and decoding (llama.cpp CUDA, Llama-3.2-1B Q4_K_M,
// 15 W mode), 0.37 W idle, no battery.
const PowerSpec kJetson{.prefill_w = 6.04, .decode_w = 6.04, .idle_w = 0.37, .battery_wh = std::nullopt, .source = ""};

TEST(Power, EnergyIsEachPhaseTimesItsWatts) {
  // The source's own cell: a 2048-token prompt in 1.432 s, 256 tokens at 32.3 tok/s (7.93 s), then a minute idle.
  EXPECT_NEAR(energy_j(kJetson, 1.432, 256 / 32.3, 60), 6.04 * 1.432 + 6.04 * 256 / 32.3 + 0.37 * 60, 1e-12);
  EXPECT_NEAR(energy_j(kJetson, 1.432, 256 / 32.3, 60), 78.72, 0.01);
  // apple-m4-16g: 30.1 W running, 6 W idle: 10 s of decode and 50 s idle are 301 + 300 J.
  const PowerSpec m4{.prefill_w = 30.1, .decode_w = 30.1, .idle_w = 6, .battery_wh = std::nullopt, .source = ""};
  EXPECT_DOUBLE_EQ(energy_j(m4, 0, 10, 50), 601);
}

TEST(Power, PhasesDrawTheirOwnWatts) {
  const PowerSpec p{.prefill_w = 8, .decode_w = 3, .idle_w = 0.5, .battery_wh = 15, .source = ""};
  EXPECT_DOUBLE_EQ(energy_j(p, 2, 0, 0), 16);
  EXPECT_DOUBLE_EQ(energy_j(p, 0, 2, 0), 6);
  EXPECT_DOUBLE_EQ(energy_j(p, 0, 0, 2), 1);
}

TEST(Power, BatteryShareOnlyWithABattery) {
  EXPECT_EQ(battery_share(kJetson, 100), std::nullopt);
  const PowerSpec phone{.prefill_w = 8, .decode_w = 3, .idle_w = 0.5, .battery_wh = 15, .source = ""};
  EXPECT_DOUBLE_EQ(*battery_share(phone, 540), 0.01);  // 540 J of a 15 Wh (54 kJ) battery
}

// iphone-16-pro's watts, derived from the study's battery drain (Tummalapalli et al. 2026, Table 7): 10% of a
// 3582 mAh x 3.892 V battery over 20 requests of 37.136 s of decode.
TEST(Power, TheIphoneWattsAreItsBatteryDrainOverItsDecodeTime) {
  const double battery_wh = 3.582 * 3.892;
  EXPECT_NEAR(battery_wh, 13.94, 0.005);
  const double joules = 0.10 * battery_wh * 3600;
  EXPECT_NEAR(joules, 5019, 0.5);
  EXPECT_NEAR(joules / (20 * 37.136), 6.76, 0.005);
  // And back: the profile's 6.76 W over the 742.7 s of decode is 10% of its 13.94 Wh battery.
  const PowerSpec phone{.prefill_w = 6.76, .decode_w = 6.76, .idle_w = 0.6, .battery_wh = 13.94, .source = ""};
  EXPECT_NEAR(*battery_share(phone, energy_j(phone, 0, 20 * 37.136, 0)), 0.10, 0.0005);
}

// docs/accuracy.md's [power] table lists exactly the shipped devices with [power], with their watts
// ("| profile ... | prefill / decode / idle (W) | ...").
TEST(Power, DocsAccuracyMdListsEveryShippedPowerSection) {
  std::map<std::string, PowerSpec> documented;
  for (const std::string& line : testing_files::lines_of(testing_files::source_file("docs/accuracy.md"))) {
    char name[64] = {};
    double pre = 0, dec = 0, idle = 0;
    if (std::sscanf(line.c_str(), "| %63[a-z0-9.-]%*[^|]| %lf / %lf / %lf |", name, &pre, &dec, &idle) == 4) {
      documented[name] = {.prefill_w = pre, .decode_w = dec, .idle_w = idle, .battery_wh = std::nullopt, .source = ""};
    }
  }
  const io::SearchPath builtin;
  std::size_t with_power = 0;
  for (const io::ProfileText& text : io::list_profiles("devices", builtin)) {
    const auto device = io::load_device(text, {});
    ASSERT_TRUE(device.ok()) << text.name;
    const auto it = documented.find(text.name);
    if (!device.value().power) {
      EXPECT_EQ(it, documented.end()) << text.name << " has no [power] but docs/accuracy.md lists it";
      continue;
    }
    ++with_power;
    ASSERT_NE(it, documented.end()) << text.name << " has [power] but docs/accuracy.md does not list it";
    EXPECT_DOUBLE_EQ(device.value().power->prefill_w, it->second.prefill_w) << text.name;
    EXPECT_DOUBLE_EQ(device.value().power->decode_w, it->second.decode_w) << text.name;
    EXPECT_DOUBLE_EQ(device.value().power->idle_w, it->second.idle_w) << text.name;
  }
  EXPECT_EQ(with_power, documented.size());
  EXPECT_EQ(with_power, 5u);
}

// The cells of a Markdown table row, trimmed ("| a | b |" -> {"a", "b"}); empty for a line that is not a row.
std::vector<std::string> power_doc_cells(const std::string& line) {
  std::vector<std::string> cells;
  if (line.size() < 2 || line.front() != '|' || line.back() != '|') return cells;
  std::istringstream in(line.substr(1, line.size() - 2));
  for (std::string cell; std::getline(in, cell, '|');) {
    const auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
    cells.push_back(b == std::string::npos ? std::string() : cell.substr(b, e - b + 1));
  }
  return cells;
}

// docs/accuracy.md's table of the sections each shipped real device has matches the profiles, row for row.
TEST(Power, DocsAccuracyMdHasEverySectionOfEveryDevice) {
  std::map<std::string, std::vector<std::string>> documented;
  bool in_table = false;
  for (const std::string& line : testing_files::lines_of(testing_files::source_file("docs/accuracy.md"))) {
    const std::vector<std::string> cells = power_doc_cells(line);
    if (cells.size() == 8 && cells[0] == "device" && cells[5] == "`[thermal]`") {
      in_table = true;
    } else if (in_table && cells.size() == 8 && cells[0] != "---") {
      documented[cells[0]] = std::vector<std::string>(cells.begin() + 1, cells.end());
    } else if (in_table && cells.empty()) {
      in_table = false;
    }
  }
  const auto yes_no = [](bool b) { return std::string(b ? "yes" : "no"); };
  const io::SearchPath builtin;
  std::size_t devices = 0;
  for (const io::ProfileText& text : io::list_profiles("devices", builtin)) {
    const auto loaded = io::load_device(text, {});
    ASSERT_TRUE(loaded.ok()) << text.name;
    const DeviceSpec& d = loaded.value();
    if (d.provenance && d.provenance->method == Calibration::reference) continue;  // the chapter's phone
    ++devices;
    const auto it = documented.find(text.name);
    ASSERT_NE(it, documented.end()) << "docs/accuracy.md's section table has no row for " << text.name;
    std::string units;
    for (const auto& [kind, unit] : d.units) units += (units.empty() ? "" : " ") + std::string(to_string(kind));
    const std::vector<std::string> expected{yes_no(d.prefill.has_value()), units.empty() ? "no" : units,
                                            yes_no(d.storage.has_value()),  yes_no(d.lora.has_value()),
                                            yes_no(d.thermal.has_value()),  yes_no(d.power.has_value()),
                                            d.provenance ? to_string(d.provenance->method) : "none"};
    EXPECT_EQ(it->second, expected) << text.name;
  }
  EXPECT_EQ(devices, documented.size());
}

}  // namespace
}  // namespace edgeplan
