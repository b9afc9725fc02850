// Bad-input cases of issue 13's "cost" slice: inputs that are small on disk but declare sizes whose cost
// would blow up (layer counts, array and string lengths) fail with an error that names the bound.
#include "bad_input.hpp"

namespace edgeplan::bad_input {
namespace {

std::vector<BadCase> cost_cases() {
  const std::string over = "(100000000) is above edgeplan's limit of 65536 layers: give the model's real layer count";
  return {
      {"model-layers-over-limit", "m.toml",
       "params = 8e9\nlayers = 100000000\nhidden = 4096\nheads = 32\nkv_heads = 8\nhead_dim = 128\nffn = 11008\n",
       kKvModelFile, "{file}:2:10: model.layers " + over},
      {"set-layers-over-limit", "", "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--set", "model.layers=100000000"},
       "builtin:models/ref-8b.toml (--set model.layers=100000000): model.layers " + over},
      {"config-layers-over-limit", "config.json", hf_config("\"model_type\": \"llama\", \"num_hidden_layers\": 100000000, "),
       kKvModelFile, "{file}: num_hidden_layers " + over},
      {"gguf-key-over-limit", "a.gguf", Gguf().header(3, 0, 1).str(std::string(70000, 'k')).u32(4).u32(1).bytes(),
       kAdapter, "{file}: byte 24: a metadata key of 70000 bytes is longer than edgeplan reads (65535 at most)"},
  };
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Cost, BadInput, testing::ValuesIn(cost_cases()), case_name);

}  // namespace edgeplan::bad_input
