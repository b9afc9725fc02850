// Bad-input cases of issue 13's "cost" slice: inputs that are small on disk but declare sizes whose cost
// would blow up (array and string lengths) fail with an error that names the bound. Layer counts past their
// bound are cases of bad_input_numbers_test.cpp.
#include "bad_input.hpp"

namespace edgeplan::bad_input {
namespace {

std::vector<BadCase> cost_cases() {
  return {
      {"gguf-key-over-limit", "a.gguf", Gguf().header(3, 0, 1).str(std::string(70000, 'k')).u32(4).u32(1).bytes(),
       kAdapter, "{file}: byte 24: a metadata key of 70000 bytes is longer than edgeplan reads (65535 at most)"},
  };
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Cost, BadInput, testing::ValuesIn(cost_cases()), case_name);

}  // namespace edgeplan::bad_input
