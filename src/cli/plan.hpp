// The plan file of `edgeplan check` (cmd_check.cpp): [[check]] entries, each a device/model pair and the
// requirements its report must meet. Its reader is declared here so the fuzz harness reads plans from memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "edgeplan/io/profiles.hpp"
#include "edgeplan/io/require.hpp"

namespace edgeplan::cli {

struct CheckEntry {
  std::string device, model, quant, kv_type;
  std::optional<std::uint32_t> context;  // tokens
  std::vector<io::Requirement> requirements;
};

// The entries of a plan's text; a UsageError names file, line and key.
std::vector<CheckEntry> load_plan(const io::ProfileText& text, const std::vector<io::Override>& overrides);

}  // namespace edgeplan::cli
