// The bad-input suite (bad_input.hpp): the parameterised test, and the cases for every kind of input edgeplan
// reads (device, model, cloud and request profiles, GGUF files, CSV and JSON Lines traces, --set, --sweep,
// --require and option values). Other bad_input_*_test.cpp files add cases of their own area.
#include "bad_input.hpp"

#include <unistd.h>

#include <fstream>

#include "cli/command.hpp"
#include "cli_run.hpp"

namespace edgeplan::bad_input {
namespace {

namespace fs = std::filesystem;

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::vector<BadCase> cases() {
  return {
      // Device profiles.
      {"device-truncated", "d.toml", "memory_gib = 8.0\nreserved_gib = 0.", kKv,
       "{file}:2:18: invalid TOML: Error while parsing floating-point: encountered end-of-file"},
      {"device-truncated-table", "d.toml", full_device("[storage"), kKv,
       "{file}:6:9: invalid TOML: Error while parsing table header: encountered end-of-file"},
      {"device-string-number", "d.toml",
       "memory_gib = \"8\"\nreserved_gib = 0.8\nbandwidth_gbps = 68.0\n"
       "utilization = 0.85\nper_token_overhead_ms = 0\n",
       kKv, "{file}:1:14: device.memory_gib must be a number, not a string"},
      {"device-bool-number", "d.toml", device("per_token_overhead_ms = true\n"), kKv,
       "{file}:5:25: device.per_token_overhead_ms must be a number, not a boolean"},
      {"device-array-number", "d.toml", device("per_token_overhead_ms = [1]\n"), kKv,
       "{file}:5:25: device.per_token_overhead_ms must be a number, not an array"},
      {"device-table-number", "d.toml", device("[per_token_overhead_ms]\n"), kKv,
       "{file}:5:1: device.per_token_overhead_ms must be a number, not a table"},
      {"device-huge-memory", "d.toml",
       "memory_gib = 1e300\nreserved_gib = 0.8\nbandwidth_gbps = 68.0\n"
       "utilization = 0.85\nper_token_overhead_ms = 0\n",
       kKv, "{file}:1:14: device.memory_gib must be at most 1e+15 in magnitude (got 1e+300)"},
      {"device-huge-bandwidth", "d.toml",
       "memory_gib = 8\nreserved_gib = 0.8\nbandwidth_gbps = 1e308\n"
       "utilization = 0.85\nper_token_overhead_ms = 0\n",
       kKv, "{file}:3:18: device.bandwidth_gbps must be at most 1e+15 in magnitude (got 1e+308)"},
      {"device-inf", "d.toml",
       "memory_gib = 8\nreserved_gib = 0.8\nbandwidth_gbps = inf\nutilization = 0.85\nper_token_overhead_ms = 0\n", kKv,
       "{file}:3:18: device.bandwidth_gbps must be a finite number (got inf)"},
      {"device-minus-inf", "d.toml",
       "memory_gib = 8\nreserved_gib = -inf\nbandwidth_gbps = 68\n"
       "utilization = 0.85\nper_token_overhead_ms = 0\n",
       kKv, "{file}:2:16: device.reserved_gib must be a finite number (got -inf)"},
      {"device-negative-reserved", "d.toml",
       "memory_gib = 8\nreserved_gib = -1\nbandwidth_gbps = 68\n"
       "utilization = 0.85\nper_token_overhead_ms = 0\n",
       kKv, "{file}:2:16: device.reserved_gib must be 0 or more (got -1)"},
      {"device-zero-memory", "d.toml",
       "memory_gib = 0\nreserved_gib = 0\nbandwidth_gbps = 68\n"
       "utilization = 0.85\nper_token_overhead_ms = 0\n",
       kKv, "{file}:1:14: device.memory_gib must be greater than 0 (got 0)"},
      {"device-zero-utilization", "d.toml",
       "memory_gib = 8\nreserved_gib = 0.8\nbandwidth_gbps = 68\n"
       "utilization = 0\nper_token_overhead_ms = 0\n",
       kKv, "{file}:4:15: device.utilization must be in (0, 1] (got 0)"},
      {"device-negative-overhead", "d.toml", device("per_token_overhead_ms = -0.5\n"), kKv,
       "{file}:5:25: device.per_token_overhead_ms must be 0 or more (got -0.5)"},
      {"device-unknown-key", "d.toml", full_device("bandwith_gbps = 68\n"), kKv,
       "{file}:6:17: unknown key device.bandwith_gbps; did you mean device.bandwidth_gbps?"},
      {"device-unknown-section", "d.toml", full_device("[storag]\nread_gbps = 1\n"), kKv,
       "{file}:6:1: unknown key device.storag; did you mean device.storage?"},
      {"device-duplicate-key", "d.toml", full_device("utilization = 0.9\n"), kKv,
       "{file}:6:15: invalid TOML: Error while parsing key-value pair: cannot redefine existing floating-point "
       "'utilization'"},
      {"device-duplicate-table", "d.toml", full_device("[lora]\nswap_fixed_us = 1\n[lora]\nswap_fixed_us = 2\n"), kKv,
       "{file}:8:1: invalid TOML: Error while parsing table header: cannot redefine existing table 'lora'"},
      {"device-storage-zero-page", "d.toml",
       full_device("[storage]\nread_gbps = 1\npage_kib = 0\npage_fault_us = 25\n"
                   "readahead_kib = 16\n"),
       kKv, "{file}:8:12: device.storage.page_kib must be at least 1 (got 0)"},
      {"device-storage-nan", "d.toml",
       full_device("[storage]\nread_gbps = nan\npage_kib = 16\npage_fault_us = 25\n"
                   "readahead_kib = 16\n"),
       kKv, "{file}:7:13: device.storage.read_gbps must be a finite number (got nan)"},
      {"device-unit-unknown-op", "d.toml", full_device("[units.cpu]\nbandwidth_efficiency = 1\nops = [\"fft\"]\n"), kKv,
       "{file}:8:7: device.units.cpu.ops holds \"fft\", which is not an op kind; expected matmul, elementwise, "
       "softmax, norm; did you mean matmul?"},
      {"device-unit-ops-not-array", "d.toml", full_device("[units.cpu]\nbandwidth_efficiency = 1\nops = \"norm\"\n"),
       kKv, "{file}:8:7: device.units.cpu.ops must be an array of strings, not a string"},
      {"device-unit-unknown", "d.toml", full_device("[units.tpu]\nbandwidth_efficiency = 1\nops = [\"norm\"]\n"), kKv,
       "{file}:6:1: device.units.tpu is not a compute unit; expected npu, gpu or cpu; did you mean npu?"},
      {"device-thermal-derate", "d.toml", full_device("[thermal]\nonset_s = 45\nderate = 1.5\ncooldown_s = 90\n"), kKv,
       "{file}:8:10: device.thermal.derate must be in (0, 1] (got 1.5)"},
      {"device-power-retired-key", "d.toml", full_device("[power]\nactive_w = 4\nidle_w = 1\nbattery_wh = 15\n"), kKv,
       "{file}:7:12: device.power.active_w is no longer read: [power] takes prefill_w and decode_w (watts while "
       "prefilling and decoding) in its place, beside idle_w and an optional battery_wh"},
      {"device-power-no-decode", "d.toml", full_device("[power]\nprefill_w = 4\nidle_w = 1\n"), kKv,
       "{file}:6:1: missing required key device.power.decode_w"},
      {"device-decode-empty", "d.toml", full_device("[decode]\n"), kKv,
       "{file}:6:1: device.decode needs at least one one-token matmul rate (q4_0_gflops, q4_1_gflops, q5_0_gflops, "
       "q5_1_gflops, q8_0_gflops, q2_k_gflops, q3_k_gflops, q4_k_gflops, q5_k_gflops, q6_k_gflops)"},
      {"device-decode-attention-only", "d.toml", full_device("[decode]\nattention_gflops = 50\n"), kKv,
       "{file}:6:1: device.decode needs at least one one-token matmul rate (q4_0_gflops, q4_1_gflops, q5_0_gflops, "
       "q5_1_gflops, q8_0_gflops, q2_k_gflops, q3_k_gflops, q4_k_gflops, q5_k_gflops, q6_k_gflops)"},
      {"device-decode-zero-rate", "d.toml", full_device("[decode]\nq4_0_gflops = 0\n"), kKv,
       "{file}:7:15: device.decode.q4_0_gflops must be greater than 0 (got 0)"},
      {"device-decode-misspelt", "d.toml", full_device("[decode]\nq4_0_glops = 90\n"), kKv,
       "{file}:7:14: unknown key device.decode.q4_0_glops; did you mean device.decode.q4_0_gflops?"},
      {"device-not-toml", "d.toml", std::string("\x89PNG\r\n\x1a\n\0\0", 10), kKv,
       "{file}:1:1: invalid TOML: Encountered invalid utf-8 sequence"},
      {"device-empty", "d.toml", "", kKv, "{file}:1:1: missing required key device.memory_gib"},
      // Model profiles.
      {"model-zero-layers", "m.toml",
       "params = 8e9\nlayers = 0\nhidden = 4096\nheads = 32\nkv_heads = 8\n"
       "head_dim = 128\nffn = 11008\n",
       kKvModel, "{file}:2:10: model.layers must be at least 1 (got 0)"},
      {"model-negative-layers", "m.toml",
       "params = 8e9\nlayers = -32\nhidden = 4096\nheads = 32\nkv_heads = 8\n"
       "head_dim = 128\nffn = 11008\n",
       kKvModel, "{file}:2:10: model.layers must be at least 1 (got -32)"},
      {"model-huge-layers", "m.toml",
       "params = 8e9\nlayers = 99999999999\nhidden = 4096\nheads = 32\n"
       "kv_heads = 8\nhead_dim = 128\nffn = 11008\n",
       kKvModel, "{file}:2:10: model.layers must be at most 65536 (got 99999999999)"},
      {"model-fractional-heads", "m.toml",
       "params = 8e9\nlayers = 32\nhidden = 4096\nheads = 32.5\nkv_heads = 8\n"
       "head_dim = 128\nffn = 11008\n",
       kKvModel, "{file}:4:9: model.heads must be a whole number (got 32.5)"},
      {"model-string-hidden", "m.toml",
       "params = 8e9\nlayers = 32\nhidden = \"4096\"\nheads = 32\nkv_heads = 8\n"
       "head_dim = 128\nffn = 11008\n",
       kKvModel, "{file}:3:10: model.hidden must be a whole number, not a string"},
      {"model-nan-params", "m.toml",
       "params = nan\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\n"
       "head_dim = 128\nffn = 11008\n",
       kKvModel, "{file}:1:10: model.params must be a finite number (got nan)"},
      {"model-inf-params", "m.toml",
       "params = inf\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\n"
       "head_dim = 128\nffn = 11008\n",
       kKvModel, "{file}:1:10: model.params must be a finite number (got inf)"},
      {"model-negative-params", "m.toml",
       "params = -8e9\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\n"
       "head_dim = 128\nffn = 11008\n",
       kKvModel, "{file}:1:10: model.params must be greater than 0 (got -8000000000)"},
      {"model-zero-vocab", "m.toml", model("vocab = 0\n"), kKvModel,
       "{file}:8:9: model.vocab must be at least 1 (got 0)"},
      {"model-huge-vocab", "m.toml", model("vocab = 1e30\n"), kKvModel,
       "{file}:8:9: model.vocab must be a whole number (got 1e+30)"},
      {"model-unknown-key", "m.toml", model("hiden = 4096\n"), kKvModel,
       "{file}:8:9: unknown key model.hiden; did you mean model.hidden?"},
      {"model-duplicate-key", "m.toml", model("layers = 32\n"), kKvModel,
       "{file}:8:10: invalid TOML: Error while parsing key-value pair: cannot redefine existing integer 'layers'"},
      {"model-unknown-format", "m.toml", model("[formats.Q4_K_X]\nbits_per_weight = 4.8\n"), kKvModel,
       "{file}:8:1: model.formats.Q4_K_X is not a known format; did you mean Q4_K_M?"},
      {"model-format-nan", "m.toml", model("[formats.Q4_K_M]\nbits_per_weight = nan\n"), kKvModel,
       "{file}:9:19: model.formats.Q4_K_M.bits_per_weight must be a finite number (got nan)"},
      {"model-format-huge-bits", "m.toml", model("[formats.Q4_K_M]\nbits_per_weight = 1e300\n"), kKvModel,
       "{file}:9:19: model.formats.Q4_K_M.bits_per_weight must be at most 1e+15 in magnitude (got 1e+300)"},
      {"model-format-weights-type", "m.toml", model("[formats.Q4_0]\nbytes = 4e9\ntoken_weights = [\"Q4_O=7e9\"]\n"),
       kKvModel, "{file}:10:17: model.formats.Q4_0.token_weights holds \"Q4_O=7e9\": Q4_O is not a ggml type; did you "
                 "mean Q4_0?"},
      {"model-format-weights-item", "m.toml", model("[formats.Q4_0]\nbytes = 4e9\nprompt_weights = [\"Q4_0 7e9\"]\n"),
       kKvModel, "{file}:10:18: model.formats.Q4_0.prompt_weights holds \"Q4_0 7e9\": expected \"TYPE=WEIGHTS\", a "
                 "ggml type and its weights above 0 and at most 2^60, e.g. \"Q4_K=6476005376\""},
      {"model-format-weights-zero", "m.toml", model("[formats.Q4_0]\nbytes = 4e9\nprompt_weights = [\"Q4_0=0\"]\n"),
       kKvModel, "{file}:10:18: model.formats.Q4_0.prompt_weights holds \"Q4_0=0\": expected \"TYPE=WEIGHTS\", a ggml "
                 "type and its weights above 0 and at most 2^60, e.g. \"Q4_K=6476005376\""},
      {"model-format-weights-twice", "m.toml",
       model("[formats.Q4_0]\nbytes = 4e9\ntoken_weights = [\"Q4_0=7e9\", \"q4_0=1e6\"]\n"), kKvModel,
       "{file}:10:17: model.formats.Q4_0.token_weights lists Q4_0 twice"},
      {"model-format-weights-empty", "m.toml", model("[formats.Q4_0]\nbytes = 4e9\ntoken_weights = []\n"), kKvModel,
       "{file}:10:17: model.formats.Q4_0.token_weights must list at least one \"TYPE=WEIGHTS\" (leave the key out for "
       "llama.cpp's tensor rules)"},
      {"model-format-weights-number", "m.toml", model("[formats.Q4_0]\nbytes = 4e9\ntoken_weights = 7e9\n"), kKvModel,
       "{file}:10:17: model.formats.Q4_0.token_weights must be an array of strings, not a number"},
      {"model-truncated", "m.toml", "params = 8e9\nlayers = 32\nhidden = 40", kKvModel,
       "{file}:1:1: missing required key model.heads"},
      // Cloud and request profiles.
      {"cloud-negative-rtt", "c.toml",
       "rtt_s = -0.1\nttft_s = 0.3\ndecode_tok_per_s = 80\naccepts = \"public\"\n"
       "usd_per_m_input_tok = 1\nusd_per_m_output_tok = 2\n",
       kRouteCloud, "{file}:1:9: cloud.rtt_s must be 0 or more (got -0.1)"},
      {"cloud-zero-rate", "c.toml",
       "rtt_s = 0.1\nttft_s = 0.3\ndecode_tok_per_s = 0\naccepts = \"public\"\n"
       "usd_per_m_input_tok = 1\nusd_per_m_output_tok = 2\n",
       kRouteCloud, "{file}:3:20: cloud.decode_tok_per_s must be greater than 0 (got 0)"},
      {"cloud-bad-privacy", "c.toml",
       "rtt_s = 0.1\nttft_s = 0.3\ndecode_tok_per_s = 80\naccepts = \"secret\"\n"
       "usd_per_m_input_tok = 1\nusd_per_m_output_tok = 2\n",
       kRouteCloud, "{file}:4:11: cloud.accepts must be one of internal, public (got \"secret\")"},
      {"cloud-missing-key", "c.toml", cloud(""), kRouteCloud,
       "{file}:1:1: missing required key cloud.usd_per_m_output_tok"},
      {"cloud-inf-cost", "c.toml", cloud("usd_per_m_output_tok = inf\n"), kRouteCloud,
       "{file}:6:24: cloud.usd_per_m_output_tok must be a finite number (got inf)"},
      {"requests-negative-tokens", "r.toml",
       "[[request]]\nname = \"a\"\nprivacy = \"public\"\ninput_tok = -5\n"
       "output_tok = 10\nslo_s = 5\n",
       kRouteRequests, "{file}:4:13: requests.request[0].input_tok must be at least 0 (got -5)"},
      {"requests-not-array", "r.toml", "request = 3\n", kRouteRequests,
       "{file}:1:11: requests.request must be an array of tables ([[request]]), not an integer"},
      {"requests-empty", "r.toml", "", kRouteRequests, "{file}:1:1: requests has no [[request]] tables"},
      // GGUF files (lora --adapter).
      {"gguf-empty", "a.gguf", "", kAdapter, "{file}: byte 0: the magic needs 4 bytes but the file ends after 0"},
      {"gguf-wrong-magic", "a.gguf", Gguf().text("GGML").u32(3).u64(0).u64(0).bytes(), kAdapter,
       "{file}: byte 0: not a GGUF file (the first 4 bytes are not \"GGUF\")"},
      {"gguf-version-1", "a.gguf", Gguf().header(1, 0, 0).bytes(), kAdapter,
       "{file}: byte 4: GGUF version 1 is not supported (only versions 2 and 3)"},
      {"gguf-version-4", "a.gguf", Gguf().header(4, 0, 0).bytes(), kAdapter,
       "{file}: byte 4: GGUF version 4 is not supported (only versions 2 and 3)"},
      {"gguf-big-endian", "a.gguf", Gguf().text("GGUF").u32(0x03000000).u64(0).u64(0).bytes(), kAdapter,
       "{file}: byte 4: big-endian GGUF files are not supported"},
      {"gguf-truncated-header", "a.gguf", Gguf().text("GGUF").u32(3).u32(0).bytes(), kAdapter,
       "{file}: byte 8: the tensor count needs 8 bytes but the file ends after 4"},
      {"gguf-huge-tensor-count", "a.gguf", Gguf().header(3, 0xFFFFFFFFFFFFFFFFull, 0).zeros(64).bytes(), kAdapter,
       "{file}: byte 8: 18446744073709551615 tensors and 0 metadata entries cannot fit in the 64 bytes that follow"},
      {"gguf-huge-kv-count", "a.gguf", Gguf().header(3, 0, 1ull << 40).zeros(64).bytes(), kAdapter,
       "{file}: byte 8: 0 tensors and 1099511627776 metadata entries cannot fit in the 64 bytes that follow"},
      {"gguf-huge-key-length", "a.gguf", Gguf().header(3, 0, 1).u64(1ull << 62).zeros(16).bytes(), kAdapter,
       "{file}: byte 24: a metadata key claims 4611686018427387904 bytes but only 16 remain"},
      {"gguf-truncated-value", "a.gguf", Gguf().header(3, 0, 1).str("general.type").u32(8).u64(100).text("ada").bytes(),
       kAdapter, "{file}: byte 48: a string claims 100 bytes but only 3 remain"},
      {"gguf-unknown-value-type", "a.gguf", Gguf().header(3, 0, 1).str("general.type").u32(13).zeros(16).bytes(),
       kAdapter, "{file}: byte 44: general.type: unknown value type 13"},
      {"gguf-huge-array", "a.gguf",
       Gguf().header(3, 0, 1).str("tokens").u32(9).u32(4).u64(1ull << 60).zeros(16).bytes(), kAdapter,
       "{file}: byte 42: tokens: an array of 1152921504606846976 elements cannot fit in the 16 bytes that remain"},
      {"gguf-duplicate-key", "a.gguf", Gguf().header(3, 0, 2).kv_u32("a.b", 1).kv_u32("a.b", 2).bytes(), kAdapter,
       "{file}: byte 43: duplicate metadata key a.b"},
      {"gguf-bad-bool", "a.gguf", Gguf().header(3, 0, 1).str("x").u32(7).text("\x02").bytes(), kAdapter,
       "{file}: byte 37: x: a bool must be 0 or 1 (got 2)"},
      {"gguf-bad-alignment", "a.gguf", Gguf().header(3, 0, 1).kv_u32("general.alignment", 48).bytes(), kAdapter,
       "{file}: byte 53: general.alignment must be a u32 power of 2"},
      {"gguf-zero-alignment", "a.gguf", Gguf().header(3, 0, 1).kv_u32("general.alignment", 0).bytes(), kAdapter,
       "{file}: byte 53: general.alignment must be a u32 power of 2"},
      {"gguf-unknown-tensor-type", "a.gguf", Gguf().header(3, 1, 0).tensor("w", {32}, 99, 0).zeros(64).bytes(),
       kAdapter, "{file}: byte 45: tensor w: unknown ggml type id 99"},
      {"gguf-too-many-dims", "a.gguf", Gguf().header(3, 1, 0).tensor("w", {1, 1, 1, 1, 1}, 0, 0).zeros(64).bytes(),
       kAdapter, "{file}: byte 33: tensor w: 5 dimensions (expected 1 to 4)"},
      {"gguf-overflowing-dims", "a.gguf",
       Gguf().header(3, 1, 0).tensor("w", {1ull << 40, 1ull << 40}, 0, 0).zeros(64).bytes(), kAdapter,
       "{file}: byte 33: tensor w: the element count overflows"},
      {"gguf-row-not-block", "a.gguf", Gguf().header(3, 1, 0).tensor("w", {33}, 2, 0).zeros(64).bytes(), kAdapter,
       "{file}: byte 45: tensor w: row length 33 is not a multiple of the Q4_0 block of 32"},
      {"gguf-data-past-end", "a.gguf", Gguf().header(3, 1, 0).tensor("w", {1024}, 0, 0).zeros(64).bytes(), kAdapter,
       "{file}: byte 24: tensor w: its 4096 bytes of data at offset 0 run past the end of the file"},
      {"gguf-misaligned-offset", "a.gguf", Gguf().header(3, 1, 0).tensor("w", {4}, 0, 3).zeros(64).bytes(), kAdapter,
       "{file}: byte 24: tensor w: data offset 3 is not a multiple of the alignment 32"},
      {"gguf-duplicate-tensor", "a.gguf",
       Gguf().header(3, 2, 0).tensor("w", {4}, 0, 0).tensor("w", {4}, 0, 32).zeros(128).bytes(), kAdapter,
       "{file}: byte 57: duplicate tensor w"},
      {"gguf-not-adapter", "a.gguf", Gguf().header(3, 0, 1).kv_str("general.type", "model").bytes(), kAdapter,
       "{file}: not a LoRA adapter (general.type is \"model\", expected \"adapter\")"},
      // Model files: config.json and GGUF models (--model).
      {"hf-not-json", "model.json", "model_type = llama", kKvModelFile, "{file}: invalid JSON at byte 1: 'm'"},
      {"hf-truncated", "model.json", "{\"model_type\": \"llama\", \"num_hidden_layers\": 1", kKvModelFile,
       "{file}: invalid JSON at byte 47: syntax error while parsing object - unexpected end of input; expected '}'"},
      {"hf-array", "model.json", "[1, 2]", kKvModelFile, "{file}: expected a JSON object (a Hugging Face config.json)"},
      {"hf-string-layers", "model.json", hf_config("\"model_type\": \"llama\", \"num_hidden_layers\": \"16\", "),
       kKvModelFile, "{file}: num_hidden_layers must be a whole number of at least 1 (got \"16\")"},
      {"hf-negative-layers", "model.json", hf_config("\"model_type\": \"llama\", \"num_hidden_layers\": -16, "),
       kKvModelFile, "{file}: num_hidden_layers must be a whole number of at least 1 (got -16)"},
      {"hf-zero-layers", "model.json", hf_config("\"model_type\": \"llama\", \"num_hidden_layers\": 0, "), kKvModelFile,
       "{file}: num_hidden_layers must be a whole number of at least 1 (got 0)"},
      {"hf-huge-layers", "model.json", hf_config("\"model_type\": \"llama\", \"num_hidden_layers\": 1e300, "),
       kKvModelFile, "{file}: num_hidden_layers must be a whole number of at least 1 (got 1e+300)"},
      {"hf-huge-number", "model.json", hf_config("\"model_type\": \"llama\", \"num_hidden_layers\": 1e999, "),
       kKvModelFile, "{file}: invalid JSON: a number is out of range"},
      {"hf-missing-layers", "model.json", hf_config("\"model_type\": \"llama\", "), kKvModelFile,
       "{file}: num_hidden_layers is missing"},
      {"hf-unknown-type", "model.json", hf_config("\"model_type\": \"lama\", \"num_hidden_layers\": 16, "),
       kKvModelFile,
       "{file}: model_type \"lama\" is not supported; supported: llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, "
       "gemma2, gemma3, gemma3_text, phi3, deepseek_v2, deepseek_v3, smollm3, gpt_oss, lfm2, lfm2_moe, "
       "granitemoehybrid, qwen3_next, gemma3n, gemma3n_text; did you mean llama?"},
      {"gguf-model-no-metadata", "model.gguf", Gguf().header(3, 0, 0).bytes(), kKvModelFile,
       "{file}: general.architecture is missing"},
      {"gguf-model-wrong-magic", "model.gguf", Gguf().text("GGJT").u32(3).u64(0).u64(0).bytes(), kKvModelFile,
       "{file}: byte 0: not a GGUF file (the first 4 bytes are not \"GGUF\")"},
      // Tensor files (quant FILE) and llama-bench results (calibrate).
      {"npy-wrong-magic", "w.npy", "\x93NUMPZ\x01\x00", kQuant,
       "{file}: byte 0: not a .npy file (it does not start with \\x93NUMPY)"},
      {"npy-version-9", "w.npy", std::string("\x93NUMPY\x09\x00\x00\x00", 10), kQuant,
       "{file}: byte 6: unsupported .npy format version 9 (expected 1, 2 or 3)"},
      {"npy-truncated-header", "w.npy",
       npy("{'descr': '<f4', 'fortran_order': False, 'shape': (8, 64), }", "").substr(0, 30), kQuant,
       "{file}: byte 8: header length 118 runs past the end of the file (30 bytes)"},
      {"npy-int-dtype", "w.npy",
       npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }", std::string(16, '\0')), kQuant,
       "{file}: byte 10: dtype '<i4' is not supported (expected '<f4' or '<f2')"},
      {"npy-fortran", "w.npy", npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", std::string(16, '\0')),
       kQuant, "{file}: byte 10: Fortran-order arrays are not supported (save in C order)"},
      {"npy-huge-shape", "w.npy",
       npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", std::string(16, '\0')),
       kQuant, "{file}: byte 10: shape [4294967296, 4294967296] holds no matrix (a dimension is 0 or too large)"},
      {"npy-negative-shape", "w.npy",
       npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 2), }", std::string(16, '\0')), kQuant,
       "{file}: byte 10: the shape is not a tuple of whole numbers"},
      {"npy-truncated-data", "w.npy",
       npy("{'descr': '<f4', 'fortran_order': False, 'shape': (8, 64), }", std::string(16, '\0')), kQuant,
       "{file}: byte 128: shape [8, 64] needs 2048 bytes of data but the file has 16"},
      {"safetensors-huge-header", "w.safetensors", Gguf().u64(1ull << 62).text("{}").bytes(), kQuant,
       "{file}: byte 0: header length 4611686018427387904 runs past the end of the file (10 bytes)"},
      {"safetensors-not-json", "w.safetensors", safetensors("{\"w\": ", ""), kQuant,
       "{file}: byte 15: the header is not valid JSON"},
      {"safetensors-int-dtype", "w.safetensors",
       safetensors("{\"w\": {\"dtype\": \"I8\", \"shape\": [2, 2], \"data_offsets\": [0, 4]}}", "abcd"), kQuant,
       "{file}: byte 8: tensor 'w' has dtype I8 (expected F32, F16 or BF16)"},
      {"safetensors-past-end", "w.safetensors",
       safetensors("{\"w\": {\"dtype\": \"F32\", \"shape\": [2, 2], \"data_offsets\": [0, 16]}}", "abcd"), kQuant,
       "{file}: byte 73: tensor 'w' has data_offsets [0, 16] outside the 4 data bytes"},
      {"safetensors-shape-mismatch", "w.safetensors",
       safetensors("{\"w\": {\"dtype\": \"F32\", \"shape\": [3, 2], \"data_offsets\": [0, 16]}}",
                   std::string(16, '\0')),
       kQuant, "{file}: byte 73: tensor 'w' has 16 data bytes but shape [3, 2] of F32 needs 24"},
      {"safetensors-huge-number", "w.safetensors",
       safetensors("{\"w\": {\"dtype\": \"F32\", \"shape\": [1e999], \"data_offsets\": [0, 4]}}", "abcd"), kQuant,
       "{file}: byte 8: the header is not valid JSON: a number is out of range"},
      {"bench-empty", "b.json", "", kCalibrate, "{file}: no llama-bench results (the file is empty)"},
      {"bench-not-json", "b.jsonl", "{\"model_type\": \"llama 7B Q4_0\"}\nnot json\n", kCalibrate,
       "{file}:2: invalid JSON at column 2"},
      {"bench-negative-rate", "b.jsonl",
       "{\"model_type\": \"llama 7B Q4_0\", \"model_size\": 3825065984, \"model_n_params\": 6738415616, "
       "\"n_prompt\": 0, \"n_gen\": 128, \"avg_ts\": -14.5, \"stddev_ts\": 0.1}\n",
       kCalibrate, "{file}:1: field avg_ts is not a number >= 0 ('-14.5')"},
      {"bench-huge-rate", "b.jsonl",
       "{\"model_type\": \"llama 7B Q4_0\", \"model_size\": 3825065984, \"model_n_params\": 6738415616, "
       "\"n_prompt\": 0, \"n_gen\": 128, \"avg_ts\": 1e999, \"stddev_ts\": 0.1}\n",
       kCalibrate, "{file}:1: invalid JSON: a number is out of range"},
      {"bench-huge-count", "b.jsonl",  // found by the llama_bench fuzzer: a count past uint64 was cast
       "{\"model_type\": \"llama 7B Q4_0\", \"model_size\": 3825065984, \"model_n_params\": 6738415616, "
       "\"n_prompt\": 0, \"n_gen\": 128, \"n_depth\": 6.6e64, \"avg_ts\": 14.5, \"stddev_ts\": 0.1}\n",
       kCalibrate, "{file}:1: field n_depth must be at most 1e+15 (got '6.6e+64')"},
      {"bench-huge-size", "b.csv",
       "model_type,model_size,model_n_params,n_prompt,n_gen,avg_ts\nllama 7B Q4_0,1e300,6738415616,0,128,14.5\n",
       kCalibrate, "{file}:2: field model_size must be at most 1e+15 (got '1e300')"},
      // Traces and request files.
      {"trace-empty", "t.csv", "", kTrace, "{file}: empty file: expected a header line"},
      {"trace-unknown-column", "t.csv", "arrival_s,name,privacy,input_tokens,output_tok,slo_s\n", kTrace,
       "{file}:1: unknown column 'input_tokens'; did you mean input_tok?"},
      {"trace-missing-column", "t.csv", "arrival_s,privacy,input_tok,output_tok\n0,public,1,1\n", kTrace,
       "{file}:1: the header has no column slo_s"},
      {"trace-duplicate-column", "t.csv", "arrival_s,arrival_s,privacy,input_tok,output_tok,slo_s\n", kTrace,
       "{file}:1: column 'arrival_s' appears twice"},
      {"trace-truncated-line", "t.csv", kCsvHeader + "0,a,public,180,104,20\n2,b,publ", kTrace,
       "{file}:3: expected 6 fields as in the header, got 3"},
      {"trace-text-number", "t.csv", kCsvHeader + "0,a,public,many,104,20\n", kTrace,
       "{file}:2: input_tok must be a number (got 'many')"},
      {"trace-nan", "t.csv", kCsvHeader + "nan,a,public,180,104,20\n", kTrace,
       "{file}:2: arrival_s must be a number (got 'nan')"},
      {"trace-inf-slo", "t.csv", kCsvHeader + "0,a,public,180,104,inf\n", kTrace,
       "{file}:2: slo_s must be a number (got 'inf')"},
      {"trace-negative-tokens", "t.csv", kCsvHeader + "0,a,public,-180,104,20\n", kTrace,
       "{file}:2: input_tok must be a whole number from 0 to 1000000000 (got -180)"},
      {"trace-zero-output", "t.csv", kCsvHeader + "0,a,public,180,0,20\n", kTrace,
       "{file}:2: output_tok must be a whole number from 1 to 1000000000 (got 0)"},
      {"trace-huge-tokens", "t.csv", kCsvHeader + "0,a,public,1e30,104,20\n", kTrace,
       "{file}:2: input_tok must be a whole number from 0 to 1000000000 (got 1e+30)"},
      {"trace-bad-privacy", "t.csv", kCsvHeader + "0,a,topsecret,180,104,20\n", kTrace,
       "{file}:2: privacy must be one of confidential, internal, public (got 'topsecret')"},
      {"trace-not-json", "t.jsonl",
       "{\"arrival_s\": 0, \"privacy\": \"public\", \"input_tok\": 1, \"output_tok\": 1, "
       "\"slo_s\": 5}\nthis is not json\n",
       kTrace, "{file}:2: invalid JSON"},
      {"trace-json-array", "t.jsonl", "[0, \"public\", 1, 1, 5]\n", kTrace, "{file}:1: expected a JSON object"},
      {"trace-json-truncated", "t.jsonl", "{\"arrival_s\": 0, \"privacy\": \"pub", kTrace, "{file}:1: invalid JSON"},
      {"trace-json-string-number", "t.jsonl",
       "{\"arrival_s\": \"0\", \"privacy\": \"public\", \"input_tok\": 1, "
       "\"output_tok\": 1, \"slo_s\": 5}\n",
       kTrace, "{file}:1: arrival_s must be a number (got '0')"},
      {"trace-json-duplicate-key", "t.jsonl",
       "{\"arrival_s\": 0, \"arrival_s\": 1, \"privacy\": \"public\", "
       "\"input_tok\": 1, \"output_tok\": 1, \"slo_s\": 5}\n",
       kTrace, "{file}:1: column 'arrival_s' appears twice"},
      {"trace-json-unknown-key", "t.jsonl",
       "{\"arrival\": 0, \"privacy\": \"public\", \"input_tok\": 1, "
       "\"output_tok\": 1, \"slo_s\": 5}\n",
       kTrace, "{file}:1: unknown column 'arrival'; did you mean arrival_s?"},
      {"trace-json-huge-number", "t.jsonl",
       "{\"arrival_s\": 1e999, \"privacy\": \"public\", \"input_tok\": 1, "
       "\"output_tok\": 1, \"slo_s\": 5}\n",
       kTrace, "{file}:1: invalid JSON"},
      {"trace-unknown-extension", "t.txt", kCsvHeader, kTrace, "--trace {file}: expected a .csv or .jsonl file"},
      {"requests-csv-arrival", "r.csv", kCsvHeader + "0,a,public,180,104,20\n", kRouteRequests,
       "{file}:1: arrival_s belongs in a trace (--trace), not in a request list"},
      // Command-line values.
      {"set-nan",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--set", "device.bandwidth_gbps=nan"},
       "builtin:devices/phone8g.toml (--set device.bandwidth_gbps=nan): device.bandwidth_gbps must be a finite number "
       "(got nan)"},
      {"set-inf",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--set", "device.memory_gib=inf"},
       "builtin:devices/phone8g.toml (--set device.memory_gib=inf): device.memory_gib must be a finite number (got "
       "inf)"},
      {"set-negative",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--set", "model.layers=-1"},
       "builtin:models/ref-8b.toml (--set model.layers=-1): model.layers must be at least 1 (got -1)"},
      {"set-not-a-value",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--set", "device.memory_gib=8GB"},
       "builtin:devices/phone8g.toml (--set device.memory_gib=8GB): device.memory_gib must be a number, not a string"},
      {"set-no-equals",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--set", "device.memory_gib"},
       "--set device.memory_gib: expected KEY=VALUE, for example device.bandwidth_gbps=120"},
      {"sweep-no-values",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--sweep", "device.memory_gib="},
       "--sweep device.memory_gib=: expected KEY=V1,V2,... or KEY=START:STOP:STEP, for example "
       "device.bandwidth_gbps=50:200:25"},
      {"sweep-zero-step",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--sweep", "device.memory_gib=1:8:0"},
       "--sweep device.memory_gib=1:8:0: STEP must be greater than 0"},
      {"sweep-nan",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--sweep", "device.memory_gib=nan:8:1"},
       "--sweep device.memory_gib=nan:8:1: a range is START:STOP:STEP with three numbers"},
      {"sweep-huge",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--sweep", "device.memory_gib=0:1e12:1"},
       "--sweep device.memory_gib=0:1e12:1: 1000000000001 values is more than the 1000000 allowed"},
      {"sweep-huge-product",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--sweep", "device.memory_gib=1:1000:1", "--sweep",
        "device.bandwidth_gbps=1:1001:1"},
       "--sweep: the sweeps make more than 1000000 combinations"},
      {"sweep-reversed",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--sweep", "device.memory_gib=8:1:1"},
       "--sweep device.memory_gib=8:1:1: STOP must not be less than START"},
      {"require-truncated",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--require", "fits =="},
       "--require 'fits ==': expected 'FIELD OP VALUE' with OP one of < <= > >= == !=, for example 'fits == true'"},
      {"require-unknown-field",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--context", "4096", "--require", "fit == true"},
       "--require: no field 'fit' in the results; did you mean fits?"},
      {"require-text-order",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--context", "4096", "--require", "fits < true"},
       "--require 'fits < true': cannot compare fits (true) with <"},
      {"context-negative",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--context", "-1"},
       "--context: expected a whole number of 0 or more (got -1)\nRun 'edgeplan --help' or 'edgeplan COMMAND --help' "
       "for usage."},
      {"context-huge",
       "",
       "",
       {"kv", "--device", "phone8g", "--model", "ref-8b", "--context", "1e30"},
       "Could not convert: --context = 1e30\nRun 'edgeplan --help' or 'edgeplan COMMAND --help' for usage."},
      {"rank-zero",
       "",
       "",
       {"lora", "--device", "phone8g", "--model", "ref-8b", "--rank", "0"},
       "--rank must be at least 1"},
      {"prefill-nan",
       "",
       "",
       {"route", "--device", "phone8g", "--prefill-tok-per-s", "nan", "--decode-tok-per-s", "13", "--cloud", "ref-public",
        "--requests", "ref-requests"},
       "--prefill-tok-per-s: expected a finite number (got nan)\nRun 'edgeplan --help' or 'edgeplan COMMAND --help' for "
       "usage."},
  };
}

}  // namespace

std::string case_name(const testing::TestParamInfo<BadCase>& param) { return replace_all(param.param.name, "-", "_"); }

TEST_P(BadInput, FailsWithExactMessage) {
  const BadCase& c = GetParam();
  const fs::path dir = fs::temp_directory_path() / ("edgeplan_bad_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / c.file).string();
  if (*c.file) std::ofstream(path, std::ios::binary) << c.content;
  std::vector<std::string> args;
  for (const std::string& a : c.args) args.push_back(replace_all(a, "{file}", path));
  const testing_cli::CliRun run = testing_cli::run_cli(args);
  fs::remove_all(dir);  // ctest runs each case in a process of its own: one directory each
  EXPECT_EQ(run.exit_code, cli::kExitUsage) << c.name;
  EXPECT_EQ(run.out, "") << c.name;
  EXPECT_EQ(replace_all(run.err, path, "{file}"), "edgeplan: error: " + c.message + "\n") << c.name;
}

INSTANTIATE_TEST_SUITE_P(All, BadInput, testing::ValuesIn(cases()), case_name);

}  // namespace edgeplan::bad_input
