// Bad-input cases of reading safety and text safety: TOML nested past kMaxTomlDepth (which overflowed the stack
// inside toml++), and untrusted text echoed in error lines (quoted, escaped and cut short).
#include "bad_input.hpp"

#include "edgeplan/io/toml_parse.hpp"
#include "test_files.hpp"

namespace edgeplan::bad_input {
namespace {

using testing_files::repeat;

const std::string kTooDeep = "TOML nested deeper than 64 levels (tables, dotted keys, arrays and inline tables each count one)";
const std::vector<std::string> kCheck{"check", "{file}"};
const std::string kLongKey = repeat("k", 100000);

std::vector<BadCase> inputs_cases() {
  return {
      // 30000 levels of each kind of nesting, about 60 to 100 KB: SIGSEGV inside toml++ before the depth check.
      {"toml-deep-table-header", "d.toml", full_device("[" + repeat("a.", 30000) + "a]\n"), kKv,
       "{file}:6:129: " + kTooDeep},
      {"toml-deep-dotted-key", "d.toml", full_device(repeat("a.", 30000) + "a = 1\n"), kKv, "{file}:6:130: " + kTooDeep},
      {"toml-deep-inline-tables", "d.toml", full_device("x = " + repeat("{a=", 30000) + "1" + repeat("}", 30000) + "\n"),
       kKv, "{file}:6:197: " + kTooDeep},
      {"toml-deep-arrays", "m.toml", model("x = " + repeat("[", 30000) + repeat("]", 30000) + "\n"), kKvModel,
       "{file}:8:69: " + kTooDeep},
      {"toml-deep-plan", "plan.toml", "[[check]]\n" + repeat("a.", 30000) + "b = 1\n", kCheck,
       "{file}:2:130: " + kTooDeep},
      {"toml-deep-requests", "r.toml", "[[request]]\nx = " + repeat("[", 30000) + "\n", kRouteRequests,
       "{file}:2:69: " + kTooDeep},
      {"set-deep-key", "", "", {"kv", "--device", "phone8g", "--model", "ref-8b", "--set", "device." + repeat("a.", 30000) + "b=1"},
       "--set device." + repeat("a.", 36) + "a... (60010 bytes): the key has more than 64 levels"},
      // Untrusted text in error lines: escaped, cut after 80 characters.
      {"toml-huge-unknown-key", "d.toml", full_device(kLongKey + " = 1\n"), kKv,
       "{file}:6:100004: unknown key device." + repeat("k", 80) + "... (100000 bytes)"},
      {"toml-control-character-key", "d.toml", full_device("\"bad\\nkey\\u001b[2J\" = 1\n"), kKv,
       "{file}:6:23: unknown key device.bad\\nkey\\x1B[2J"},
      {"command-control-characters", "", "", {"de\x1b[2Jcode"},
       "unknown command 'de\\x1B[2Jcode'"},
  };
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Inputs, BadInput, testing::ValuesIn(inputs_cases()), case_name);

}  // namespace edgeplan::bad_input
