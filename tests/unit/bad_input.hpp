// The bad-input suite's shared parts: the case type, builders for hostile files (GGUF, .npy, .safetensors,
// profiles, config.json), the argument lists cases run with, and the parameterised test. Each
// bad_input_*_test.cpp holds one area's cases and instantiates BadInput with them.
//
// Every case runs the whole CLI in-process and must fail with exit code 2 and exactly the message given: never
// a crash, a hang, a silent default or a NaN. Input files are written by the test to a scratch directory;
// {file} in arguments and messages is their path.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace edgeplan::bad_input {

// Builds GGUF bytes little-endian, field by field, so a case can break exactly one thing.
class Gguf {
 public:
  Gguf& u32(std::uint32_t v) { return raw(v, 4); }
  Gguf& u64(std::uint64_t v) { return raw(v, 8); }
  Gguf& str(const std::string& s) {
    u64(s.size());
    bytes_ += s;
    return *this;
  }
  Gguf& text(const std::string& s) {
    bytes_ += s;
    return *this;
  }
  // Magic, version and the two counts.
  Gguf& header(std::uint32_t version, std::uint64_t tensors, std::uint64_t kvs) {
    return text("GGUF").u32(version).u64(tensors).u64(kvs);
  }
  Gguf& kv_u32(const std::string& key, std::uint32_t v) { return str(key).u32(4).u32(v); }
  Gguf& kv_str(const std::string& key, const std::string& v) { return str(key).u32(8).str(v); }
  // A tensor info: name, dims, ggml type id, data offset.
  Gguf& tensor(const std::string& name, const std::vector<std::uint64_t>& dims, std::uint32_t type,
               std::uint64_t offset) {
    str(name).u32(static_cast<std::uint32_t>(dims.size()));
    for (std::uint64_t d : dims) u64(d);
    return u32(type).u64(offset);
  }
  Gguf& zeros(std::size_t n) {
    bytes_.append(n, '\0');
    return *this;
  }
  std::string bytes() const { return bytes_; }

 private:
  Gguf& raw(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    return *this;
  }
  std::string bytes_;
};

struct BadCase {
  const char* name;
  const char* file;     // file name in the scratch directory ("" for none)
  std::string content;  // its content
  std::vector<std::string> args;
  std::string message;  // after "edgeplan: error: "
};

inline const std::vector<std::string> kKv{"kv", "--device", "{file}", "--model", "ref-8b"};
inline const std::vector<std::string> kKvModel{"kv", "--device", "phone8g", "--model", "{file}"};
inline const std::vector<std::string> kRouteCloud{"route",  "--device",       "phone8g",     "--prefill-tok-per-s",
                                           "180",    "--decode-tok-per-s", "13",          "--cloud",
                                           "{file}", "--requests",     "ref-requests"};
inline const std::vector<std::string> kRouteRequests{
    "route",          "--device", "phone8g", "--prefill-tok-per-s",        "180",
    "--decode-tok-per-s", "13",       "--cloud", "ref-private,ref-public", "--requests",
    "{file}"};
inline const std::vector<std::string> kTrace{"route",          "--device", "phone8g", "--prefill-tok-per-s",        "180",
                                      "--decode-tok-per-s", "13",       "--cloud", "ref-private,ref-public", "--trace",
                                      "{file}"};
inline const std::vector<std::string> kAdapter{"lora", "--device", "phone8g", "--model", "ref-8b", "--adapter", "{file}"};

// A valid device profile without per_token_overhead_ms, then `extra`.
inline std::string device(const std::string& extra) {
  return "memory_gib = 8.0\nreserved_gib = 0.8\nbandwidth_gbps = 68.0\nutilization = 0.85\n" + extra;
}
// A whole valid device profile, then `extra`.
inline std::string full_device(const std::string& extra) { return device("per_token_overhead_ms = 0\n" + extra); }
inline std::string model(const std::string& extra) {
  return "params = 8e9\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\nhead_dim = 128\nffn = 11008\n" + extra;
}
inline std::string cloud(const std::string& extra) {
  return "rtt_s = 0.1\nttft_s = 0.3\ndecode_tok_per_s = 80\naccepts = \"public\"\nusd_per_m_input_tok = 1\n" + extra;
}
inline const std::vector<std::string> kKvModelFile{"kv", "--device", "phone8g", "--model", "{file}"};
// A Llama-3.2-1B-shaped config.json: `fields` (model_type and num_hidden_layers, as each case breaks them),
// then the rest of the shape.
inline std::string hf_config(const std::string& fields) {
  return "{" + fields +
         "\"hidden_size\": 2048, \"intermediate_size\": 8192, \"num_attention_heads\": 32, "
         "\"num_key_value_heads\": 8, \"vocab_size\": 128256}";
}
inline const std::vector<std::string> kQuant{"quant", "{file}"};
inline const std::vector<std::string> kCalibrate{"calibrate", "--device", "macbook-air-m1-16g", "{file}"};
// A .npy file: magic, version 1.0, the header dict padded to 64 bytes, then `data`.
inline std::string npy(const std::string& dict, const std::string& data) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() & 0xFF) +
         static_cast<char>(header.size() >> 8) + header + data;
}
// A .safetensors file: the header's length (u64), the JSON header, then `data`.
inline std::string safetensors(const std::string& header, const std::string& data) {
  return Gguf().u64(header.size()).text(header).text(data).bytes();
}
inline const std::string kCsvHeader = "arrival_s,name,privacy,input_tok,output_tok,slo_s\n";

// Names the case in gtest's messages instead of dumping its bytes.
inline void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class BadInput : public testing::TestWithParam<BadCase> {};

// The gtest name of a case: its name with '-' as '_'.
std::string case_name(const testing::TestParamInfo<BadCase>& param);

}  // namespace edgeplan::bad_input
