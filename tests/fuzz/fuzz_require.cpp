// Fuzz harness: a --require expression parsed and checked against a fixed results object with numbers,
// booleans, text and an array of rows.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "edgeplan/io/json.hpp"
#include "edgeplan/io/require.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace edgeplan::io;
  static const Node results = from_json(Json::parse(R"({"fits": true, "budget_gib": 2.93, "device": "phone8g",
    "formats": [{"format": "Q4_K_M", "tok_per_s": 11.2}, {"format": "F16", "tok_per_s": 3.5}]})"));
  const auto req = parse_requirement(std::string_view(reinterpret_cast<const char*>(data), size));
  if (req) (void)check_requirements(results, {*req});
  return 0;
}
