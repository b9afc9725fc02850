// Bad-input cases of numbers that would wrap or lie: whole numbers past their bound (core/limits.hpp) in
// profiles, config.json and GGUF metadata; option values past theirs; GGUF tensors whose data overlap; LoRA
// adapters of rank 0.
#include "bad_input.hpp"
#include "cli_run.hpp"

namespace edgeplan::bad_input {
namespace {

// A model profile of Llama-3-8B's shape with `layers` and `hidden` as given, then `extra`.
std::string shaped_model(const std::string& layers, const std::string& hidden, const std::string& extra = "") {
  return "params = 8e9\nlayers = " + layers + "\nhidden = " + hidden +
         "\nheads = 32\nkv_heads = 8\nhead_dim = 128\nffn = 14336\n" + extra;
}

// A GGUF model whose llama.block_count is `layers`.
std::string gguf_model(std::uint32_t layers) {
  return Gguf().header(3, 0, 2).kv_str("general.architecture", "llama").kv_u32("llama.block_count", layers).bytes();
}

// Two F32 tensors of a_weights and b_weights weights (4 bytes each) at the given data offsets, in a LoRA adapter.
std::string two_tensors(std::uint64_t a_weights, std::uint64_t a_offset, std::uint64_t b_weights,
                        std::uint64_t b_offset) {
  return Gguf()
      .header(3, 2, 0)
      .tensor("a", {a_weights}, 0, a_offset)
      .tensor("b", {b_weights}, 0, b_offset)
      .zeros(256)
      .bytes();
}

// A LoRA adapter of one target whose lora_a is [4096, rank] and lora_b [rank, 4096].
std::string adapter_of_rank(std::uint64_t rank) {
  return Gguf()
      .header(3, 2, 2)
      .kv_str("general.type", "adapter")
      .kv_str("adapter.type", "lora")
      .tensor("blk.0.attn_q.weight.lora_a", {4096, rank}, 0, 0)
      .tensor("blk.0.attn_q.weight.lora_b", {rank, 4096}, 0, 0)
      .zeros(64)
      .bytes();
}

const std::string kUsage = "\nRun 'edgeplan --help' or 'edgeplan COMMAND --help' for usage.";

std::vector<BadCase> numbers_cases() {
  return {
      // Model profiles: every count has a bound that fits its member and keeps products of sizes exact.
      {"model-layers-4e9", "m.toml", shaped_model("4000000000", "4096"), kKvModel,
       "{file}:2:10: model.layers must be at most 65536 (got 4000000000)"},
      {"model-hidden-2e32", "m.toml", shaped_model("32", "4294967295"), kKvModel,
       "{file}:3:10: model.hidden must be at most 1048576 (got 4294967295)"},
      {"model-vocab-huge", "m.toml", shaped_model("32", "4096", "vocab = 4294967295\n"), kKvModel,
       "{file}:8:9: model.vocab must be at most 16777216 (got 4294967295)"},
      {"model-experts-huge", "m.toml",
       shaped_model("32", "4096", "[moe]\nexperts = 100000\nused = 2\nexpert_ffn = 1024\n"), kKvModel,
       "{file}:9:11: model.moe.experts must be at most 65536 (got 100000)"},
      {"model-context-huge", "m.toml", shaped_model("32", "4096", "context_length = 4000000000\n"), kKvModel,
       "{file}:8:18: model.context_length must be at most 1073741824 (got 4000000000)"},
      {"set-layers-4e9", "", "", {"kv", "--device", "phone8g", "--model", "ref-8b", "--set", "model.layers=4000000000"},
       "builtin:models/ref-8b.toml (--set model.layers=4000000000): model.layers must be at most 65536 "
       "(got 4000000000)"},
      // A rate of a denormal (or below 1e-12) made decode print inf and -nan.
      {"set-bandwidth-denormal", "", "",
       {"decode", "--device", "phone8g", "--model", "ref-8b", "--set", "device.bandwidth_gbps=1e-320"},
       "builtin:devices/phone8g.toml (--set device.bandwidth_gbps=1e-320): device.bandwidth_gbps must be 0 or a "
       "normal number (got 1e-320, a denormal)"},
      {"set-bandwidth-tiny", "", "",
       {"decode", "--device", "phone8g", "--model", "ref-8b", "--set", "device.bandwidth_gbps=1e-13"},
       "builtin:devices/phone8g.toml (--set device.bandwidth_gbps=1e-13): device.bandwidth_gbps must be at least "
       "1e-12 (got 1e-13)"},
      {"device-page-huge", "d.toml",
       full_device("[storage]\nread_gbps = 1\npage_kib = 4000000000\npage_fault_us = 1\nreadahead_kib = 4\n"), kKv,
       "{file}:8:12: device.storage.page_kib must be at most 1048576 (got 4000000000)"},
      {"requests-huge-tokens", "r.toml",
       "[[request]]\nname = \"a\"\nprivacy = \"public\"\ninput_tok = 4000000000\noutput_tok = 1\nslo_s = 1\n",
       kRouteRequests, "{file}:4:13: requests.request[0].input_tok must be at most 1000000000 (got 4000000000)"},
      // config.json: sizes of 2^32-1 would make products that wrap past 2^64.
      {"hf-huge-sizes", "model.json",
       "{\"model_type\": \"llama\", \"num_hidden_layers\": 16, \"hidden_size\": 4294967295, "
       "\"intermediate_size\": 4294967295, \"num_attention_heads\": 32, \"vocab_size\": 4294967295}",
       kKvModelFile, "{file}: hidden_size must be at most 1048576 (got 4294967295)"},
      {"hf-layers-4e9", "model.json", hf_config("\"model_type\": \"llama\", \"num_hidden_layers\": 4000000000, "),
       kKvModelFile, "{file}: num_hidden_layers must be at most 65536 (got 4000000000)"},
      {"hf-layers-past-2e64", "model.json",
       hf_config("\"model_type\": \"llama\", \"num_hidden_layers\": 18446744073709551615, "), kKvModelFile,
       "{file}: num_hidden_layers must be at most 65536 (got 18446744073709551615)"},
      {"hf-head-dim-0", "model.json",
       "{\"model_type\": \"llama\", \"num_hidden_layers\": 16, \"hidden_size\": 16, \"intermediate_size\": 64, "
       "\"num_attention_heads\": 32, \"vocab_size\": 1000}",
       kKvModelFile, "{file}: hidden_size (16) must be at least num_attention_heads (32) when head_dim is not given"},
      // GGUF metadata.
      {"gguf-model-layers-4e9", "model.gguf", gguf_model(4000000000u), kKvModelFile,
       "{file}: llama.block_count must be at most 65536 (got 4000000000)"},
      // GGUF tensor data: extents must not overlap.
      {"gguf-tensors-same-offset", "a.gguf", two_tensors(8, 0, 8, 0), kAdapter,
       "{file}: byte 57: tensors 'a' and 'b' overlap at bytes 96-127"},
      {"gguf-tensors-overlap-partly", "a.gguf", two_tensors(16, 0, 8, 32), kAdapter,
       "{file}: byte 57: tensors 'a' and 'b' overlap at bytes 128-159"},
      {"gguf-tensors-overlap-out-of-order", "a.gguf", two_tensors(8, 32, 16, 0), kAdapter,
       "{file}: byte 24: tensors 'b' and 'a' overlap at bytes 128-159"},
      // LoRA adapters: a rank of 0 made the adapter 0 bytes and the resident count infinite.
      {"lora-rank-0", "a.gguf", adapter_of_rank(0), kAdapter,
       "{file}: blk.0.attn_q.weight.lora_a has rank 0 (expected 1 to 65536)"},
      // Options: bounded like profile values.
      {"option-context-past-2e64", "", "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--context", "18446744073709551616"},
       "--context: expected a whole number of at most 1099511627776 (got 18446744073709551616)" + kUsage},
      {"option-context-past-bound", "", "",
       {"decode", "--device", "phone8g", "--model", "ref-8b", "--context", "1099511627777"},
       "--context: expected a whole number of at most 1099511627776 (got 1099511627777)" + kUsage},
      {"option-seq-past-uint32", "", "", {"place", "--device", "phone8g", "--model", "ref-8b", "--prompt", "4294967296"},
       "--prompt: expected a whole number of at most 16777216 (got 4294967296)" + kUsage},
      {"option-rank-huge", "", "",
       {"lora", "--device", "phone8g", "--model", "ref-8b", "--rank", "4294967296"},
       "--rank: expected a whole number of at most 65536 (got 4294967296)" + kUsage},
      {"option-rate-huge", "", "",
       {"route", "--device", "phone8g", "--prefill-tok-per-s", "1e300", "--decode-tok-per-s", "13", "--cloud", "ref-private",
        "--requests", "ref-requests"},
       "--prefill-tok-per-s: expected a number of at most 1e+15 in magnitude (got 1e300)" + kUsage},
  };
}

INSTANTIATE_TEST_SUITE_P(Numbers, BadInput, testing::ValuesIn(numbers_cases()), case_name);

// kv --context 4294967296 printed a negative count of token-steps: n(n+1)/2 went through a signed 64-bit cast.
TEST(NumbersCli, KvTokenStepsDoNotWrap) {
  const testing_cli::CliRun run =
      testing_cli::run_cli({"kv", "--device", "phone8g", "--model", "ref-8b", "--context", "4294967296"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("4,294,967,296 tokens cost 9,223,372,039,002,259,456 token-steps"), std::string::npos)
      << run.out;
}

// At the largest context, n(n+1)/2 is past 2^64: it is printed whole, not cast.
TEST(NumbersCli, KvTokenStepsPast64Bits) {
  const testing_cli::CliRun run =
      testing_cli::run_cli({"kv", "--device", "phone8g", "--model", "ref-8b", "--context", "1099511627776"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("1,099,511,627,776 tokens cost 604,462,909,807,864,343,166,976 token-steps"),
            std::string::npos)
      << run.out;
}

}  // namespace
}  // namespace edgeplan::bad_input
