// core/power.hpp: a device's energy from its watts per phase, on the published figures of the shipped profiles.
#include "edgeplan/core/power.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace edgeplan
