// Fuzz harness: a --sweep argument parsed, sized, and its first and last combinations taken.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "edgeplan/io/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace edgeplan::io;
  const auto axis = parse_sweep(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!axis) return 0;
  const std::vector<SweepAxis> axes{*axis, *axis};
  const auto n = sweep_size(axes);
  if (!n) return 0;
  (void)sweep_combination(axes, 0);
  (void)sweep_combination(axes, *n - 1);
  return 0;
}
