// Bad-input cases for where a file comes from: a --profiles folder that does not exist (a plan's relative
// paths are tested in check_cli_test.cpp, since their messages hold the scratch folder's name).
#include "bad_input.hpp"

namespace edgeplan::bad_input {
namespace {

std::vector<BadCase> source_cases() {
  return {
      {"profiles-missing-dir", "", "", {"kv", "--device", "phone8g", "--model", "ref-8b", "--profiles", "/nonexistent"},
       "--profiles /nonexistent: no such directory"},
  };
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Source, BadInput, testing::ValuesIn(source_cases()), case_name);

}  // namespace edgeplan::bad_input
