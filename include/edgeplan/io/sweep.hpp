// --sweep KEY=V1,V2,... or KEY=START:STOP:STEP: what-ifs over profile values. Several sweeps form their
// cartesian product; each combination runs the command once with the values applied as --set overrides.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

struct SweepAxis {
  std::string key;                  // a --set key: "device.bandwidth_gbps"
  std::vector<std::string> values;  // as TOML value texts, in order
};

// The most combinations one command line may ask for.
inline constexpr std::uint64_t kMaxSweepCombinations = 1'000'000;

// Parses one --sweep argument. A range START:STOP:STEP lists START, START+STEP, ... up to STOP inclusive
// (STEP > 0, STOP >= START; values within STEP x 1e-9 of STOP count as STOP).
Result<SweepAxis> parse_sweep(std::string_view text);

// The number of combinations of `axes` (1 for none); an Error past kMaxSweepCombinations.
Result<std::uint64_t> sweep_size(const std::vector<SweepAxis>& axes);

// The values of combination `index` (0-based, the last axis varying fastest).
std::vector<std::string> sweep_combination(const std::vector<SweepAxis>& axes, std::uint64_t index);

}  // namespace edgeplan::io
