// Fuzz harness: bytes read as the plan file of `edgeplan check` (its [[check]] entries and their requirements),
// from memory. The whole check, with the reports it runs, is the cli harness's "plan" scenario.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/command.hpp"
#include "cli/plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace edgeplan;
  const io::ProfileText text{"fuzz", "fuzz.toml", "fuzz", std::string(reinterpret_cast<const char*>(data), size)};
  try {
    (void)cli::load_plan(text, {});
  } catch (const cli::UsageError&) {  // a bad plan: the message `edgeplan: error: ...` prints
  }
  return 0;
}
