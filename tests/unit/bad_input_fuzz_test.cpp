// Bad-input cases for what the whole-CLI fuzz harness (tests/fuzz/fuzz_cli.cpp) found outside issue 13's list.
#include "bad_input.hpp"

namespace edgeplan::bad_input {
namespace {

std::vector<BadCase> fuzz_cases() {
  return {
      // quant --threads had no upper bound: one OS thread per row, so a big enough value made thread creation
      // fail with an uncaught std::system_error (SIGABRT). Bounded as bench's --threads is.
      {"quant-threads-huge",
       "",
       "",
       {"quant", "--threads", "100000"},
       "--threads: Value 100000 not in range 0 to 4096\nRun 'edgeplan --help' or 'edgeplan COMMAND --help' for "
       "usage."},
  };
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Fuzz, BadInput, testing::ValuesIn(fuzz_cases()), case_name);

}  // namespace edgeplan::bad_input
