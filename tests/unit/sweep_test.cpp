#include "edgeplan/io/sweep.hpp"

#include <gtest/gtest.h>

namespace edgeplan::io {
namespace {

TEST(Sweep, ListOfValues) {
  auto a = parse_sweep("device.bandwidth_gbps=68,120,204");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->key, "device.bandwidth_gbps");
  EXPECT_EQ(a->values, (std::vector<std::string>{"68", "120", "204"}));
}

TEST(Sweep, RangeIsInclusiveAndExact) {
  EXPECT_EQ(parse_sweep("device.bandwidth_gbps=50:200:25")->values,
            (std::vector<std::string>{"50", "75", "100", "125", "150", "175", "200"}));
  // 0.1 steps accumulate no error: each value is start + i x step.
  EXPECT_EQ(parse_sweep("k=0.5:0.9:0.1")->values, (std::vector<std::string>{"0.5", "0.6", "0.7", "0.8", "0.9"}));
  EXPECT_EQ(parse_sweep("k=3:3:1")->values, (std::vector<std::string>{"3"}));
  EXPECT_EQ(parse_sweep("k=1:2:5")->values, (std::vector<std::string>{"1"}));
}

TEST(Sweep, Errors) {
  EXPECT_EQ(parse_sweep("k").error().message,
            "--sweep k: expected KEY=V1,V2,... or KEY=START:STOP:STEP, for example device.bandwidth_gbps=50:200:25");
  EXPECT_EQ(parse_sweep("k=1:2").error().message, "--sweep k=1:2: a range is START:STOP:STEP with three numbers");
  EXPECT_EQ(parse_sweep("k=1:2:0").error().message, "--sweep k=1:2:0: STEP must be greater than 0");
  EXPECT_EQ(parse_sweep("k=2:1:1").error().message, "--sweep k=2:1:1: STOP must not be less than START");
  EXPECT_EQ(parse_sweep("k=1,,2").error().message, "--sweep k=1,,2: empty value in the list");
  EXPECT_EQ(parse_sweep("k=0:1e9:1").error().message, "--sweep k=0:1e9:1: 1000000001 values is more than the 1000000 allowed");
}

TEST(Sweep, CartesianProductLastAxisFastest) {
  const std::vector<SweepAxis> axes{{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}};
  EXPECT_EQ(*sweep_size(axes), 6u);
  EXPECT_EQ(sweep_combination(axes, 0), (std::vector<std::string>{"1", "x"}));
  EXPECT_EQ(sweep_combination(axes, 2), (std::vector<std::string>{"1", "z"}));
  EXPECT_EQ(sweep_combination(axes, 3), (std::vector<std::string>{"2", "x"}));
  EXPECT_EQ(*sweep_size({}), 1u);
  const std::vector<SweepAxis> huge{{"a", std::vector<std::string>(1001, "1")}, {"b", std::vector<std::string>(1000, "1")}};
  EXPECT_EQ(sweep_size(huge).error().message, "--sweep: the sweeps make more than 1000000 combinations");
}

}  // namespace
}  // namespace edgeplan::io
