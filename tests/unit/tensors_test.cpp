// .npy and .safetensors readers on files the tests build byte by byte: every dtype and header version, and
// each malformed-file message word for word.
#include "edgeplan/io/tensors.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <fstream>

#include "edgeplan/core/float16.hpp"
#include "gguf_builder.hpp"

namespace edgeplan::io {
namespace {

using Bytes = std::vector<std::uint8_t>;

void put_le(Bytes& b, std::uint64_t v, int width) {
  for (int i = 0; i < width; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

void put_text(Bytes& b, const std::string& s) { b.insert(b.end(), s.begin(), s.end()); }

const std::vector<float> kValues{1.0f, -2.5f, 0.125f, 3.0f, 0.0f, -0.75f};  // exact in f16 and bf16

void put_values(Bytes& b, const std::string& dtype) {
  for (float v : kValues) {
    if (dtype == "F32" || dtype == "<f4") put_le(b, std::bit_cast<std::uint32_t>(v), 4);
    if (dtype == "F16" || dtype == "<f2") put_le(b, f32_to_f16(v), 2);
    if (dtype == "BF16") put_le(b, f32_to_bf16(v), 2);
  }
}

Bytes npy(int version, const std::string& descr, const std::string& shape = "(2, 3)", bool values = true,
          const std::string& order = "False") {
  Bytes b{0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<std::uint8_t>(version), 0};
  const std::string header =
      "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }          \n";
  put_le(b, header.size(), version == 1 ? 2 : 4);
  put_text(b, header);
  if (values) put_values(b, descr);
  return b;
}

Bytes safetensors(const std::string& header, const std::string& dtype, std::size_t drop = 0) {
  Bytes b;
  put_le(b, header.size(), 8);
  put_text(b, header);
  put_values(b, dtype);
  b.resize(b.size() - drop);
  return b;
}

std::string one(const std::string& dtype, std::size_t bytes, const std::string& shape = "[2, 3]") {
  return R"({"__metadata__": {"format": "pt"}, "w": {"dtype": ")" + dtype + R"(", "shape": )" + shape +
         R"(, "data_offsets": [0, )" + std::to_string(bytes) + "]}}";
}

TEST(Npy, ReadsEveryVersionAndDtype) {
  for (int version : {1, 2, 3}) {
    for (std::string dtype : {"<f4", "<f2"}) {
      auto t = read_npy(npy(version, dtype), "w.npy");
      ASSERT_TRUE(t.ok()) << t.error().message;
      EXPECT_EQ(t->rows, 2u);
      EXPECT_EQ(t->cols, 3u);
      EXPECT_EQ(t->values, kValues);
      EXPECT_EQ(t->dtype, dtype);
      EXPECT_EQ(t->name, "");
    }
  }
  auto flat = read_npy(npy(1, "<f4", "(6,)"), "v.npy");
  EXPECT_EQ(flat->rows, 1u);
  EXPECT_EQ(flat->cols, 6u);
  auto cube = read_npy(npy(1, "<f4", "(1, 2, 3)"), "c.npy");
  EXPECT_EQ(cube->rows, 2u);
}

TEST(Npy, Errors) {
  auto error = [](const Bytes& b) { return read_npy(b, "w.npy").error().message; };
  EXPECT_EQ(error(Bytes{'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0}), "w.npy: byte 0: not a .npy file (it does not start with \\x93NUMPY)");
  EXPECT_EQ(error(npy(4, "<f4")), "w.npy: byte 6: unsupported .npy format version 4 (expected 1, 2 or 3)");
  EXPECT_EQ(error(npy(1, ">f4")), "w.npy: byte 10: dtype '>f4' is not supported (expected '<f4' or '<f2')");
  EXPECT_EQ(error(npy(1, "<f8")), "w.npy: byte 10: dtype '<f8' is not supported (expected '<f4' or '<f2')");
  EXPECT_EQ(error(npy(1, "<f4", "(2, 3)", true, "True")),
            "w.npy: byte 10: Fortran-order arrays are not supported (save in C order)");
  EXPECT_EQ(error(npy(1, "<f4", "(2, 0)")), "w.npy: byte 10: shape [2, 0] holds no matrix (a dimension is 0 or too large)");
  EXPECT_EQ(error(npy(1, "<f4", "(99999999999, 99999999999)")),
            "w.npy: byte 10: shape [99999999999, 99999999999] holds no matrix (a dimension is 0 or too large)");
  EXPECT_EQ(error(npy(1, "<f4", "(3, 3)")), "w.npy: byte 80: shape [3, 3] needs 36 bytes of data but the file has 24");
  Bytes cut = npy(1, "<f4");
  cut.resize(20);
  EXPECT_EQ(error(cut), "w.npy: byte 8: header length 70 runs past the end of the file (20 bytes)");
}

TEST(Safetensors, ReadsEveryDtype) {
  for (auto [dtype, bytes] : {std::pair{"F32", 24}, {"F16", 12}, {"BF16", 12}}) {
    auto t = read_safetensors(safetensors(one(dtype, bytes), dtype), "m.safetensors", "");
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->name, "w");
    EXPECT_EQ(t->dtype, dtype);
    EXPECT_EQ(t->rows, 2u);
    EXPECT_EQ(t->values, kValues);
  }
}

TEST(Safetensors, PicksATensorByName) {
  const std::string header = R"({"a.weight": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},)"
                             R"( "b.weight": {"dtype": "F32", "shape": [1, 3], "data_offsets": [12, 24]}})";
  const Bytes b = safetensors(header, "F32");
  auto t = read_safetensors(b, "m.safetensors", "b.weight");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->values, (std::vector<float>{3.0f, 0.0f, -0.75f}));
  EXPECT_EQ(read_safetensors(b, "m.safetensors", "").error().message,
            "m.safetensors: holds 2 tensors; pick one with --tensor (a.weight, b.weight)");
  EXPECT_EQ(read_safetensors(b, "m.safetensors", "b.weigth").error().message,
            "m.safetensors: no tensor named 'b.weigth'; did you mean b.weight?");
}

TEST(Safetensors, Errors) {
  auto error = [](const Bytes& b) { return read_safetensors(b, "m.safetensors", "").error().message; };
  EXPECT_EQ(error(Bytes{1, 2, 3}), "m.safetensors: byte 0: not a .safetensors file (shorter than its 8-byte header length)");
  Bytes huge;
  put_le(huge, 1u << 30, 8);
  EXPECT_EQ(error(huge), "m.safetensors: byte 0: header length 1073741824 runs past the end of the file (8 bytes)");
  EXPECT_EQ(error(safetensors("{\"w\": [1,", "F32")), "m.safetensors: byte 18: the header is not valid JSON");
  EXPECT_EQ(error(safetensors(one("I8", 6), "F32")),
            "m.safetensors: byte 8: tensor 'w' has dtype I8 (expected F32, F16 or BF16)");
  EXPECT_EQ(error(safetensors(one("F32", 24), "F32", 4)),
            "m.safetensors: byte 107: tensor 'w' has data_offsets [0, 24] outside the 20 data bytes");
  EXPECT_EQ(error(safetensors(one("F32", 20), "F32")),
            "m.safetensors: byte 107: tensor 'w' has 20 data bytes but shape [2, 3] of F32 needs 24");
  EXPECT_EQ(error(safetensors(one("F32", 24, "[2, -3]"), "F32")),
            "m.safetensors: byte 8: tensor 'w': shape holds a value that is not a whole number");
  EXPECT_EQ(error(safetensors(R"({"w": {"dtype": "F32"}})", "F32")),
            "m.safetensors: byte 8: tensor 'w' needs dtype, shape and data_offsets");
}

// A GGUF file with an F16 tensor of 2 rows x 3 (dims {3, 2}), a BF16 one and a Q8_0 one.
Builder gguf_file() {
  Builder b;
  b.u64(3).u64(0);
  b.tensor("blk.0.ffn_down.weight", {3, 2}, 1, 0).tensor("blk.0.ffn_up.weight", {6}, 30, 32);
  b.tensor("blk.0.attn_q.weight", {32, 1}, 8, 64);
  const std::size_t data = (b.size() + 31) / 32 * 32;
  b.pad_to(data);
  Bytes f16, bf16;
  put_values(f16, "F16");
  put_values(bf16, "BF16");
  b.raw(f16.data(), f16.size()).pad_to(data + 32).raw(bf16.data(), bf16.size()).pad_to(data + 64 + 34);
  return b;
}

Bytes bytes_of(const Builder& b) {
  Bytes out;
  for (std::byte v : b.bytes()) out.push_back(static_cast<std::uint8_t>(v));
  return out;
}

TEST(Gguf, ReadsATensorByName) {
  const Bytes b = bytes_of(gguf_file());
  auto t = read_gguf_tensor(b, "m.gguf", "blk.0.ffn_down.weight");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->dtype, "F16");
  EXPECT_EQ(t->rows, 2u);
  EXPECT_EQ(t->cols, 3u);
  EXPECT_EQ(t->values, kValues);
  auto up = read_gguf_tensor(b, "m.gguf", "blk.0.ffn_up.weight");
  ASSERT_TRUE(up.ok()) << up.error().message;
  EXPECT_EQ(up->rows, 1u);
  EXPECT_EQ(up->values, kValues);
  EXPECT_EQ(read_gguf_tensor(b, "m.gguf", "blk.0.attn_q.weight").error().message,
            "m.gguf: tensor 'blk.0.attn_q.weight' is Q8_0 (expected F32, F16 or BF16: quantize from the unquantized "
            "weights)");
  EXPECT_EQ(read_gguf_tensor(b, "m.gguf", "blk.0.ffn_dwn.weight").error().message,
            "m.gguf: no tensor named 'blk.0.ffn_dwn.weight'; did you mean blk.0.ffn_down.weight?");
  EXPECT_EQ(read_gguf_tensor(b, "m.gguf", "").error().message,
            "m.gguf: holds 3 tensors; pick one with --tensor (blk.0.ffn_down.weight, blk.0.ffn_up.weight, "
            "blk.0.attn_q.weight)");
  Bytes cut = b;
  cut.resize(cut.size() - 40);
  EXPECT_EQ(read_gguf_tensor(cut, "m.gguf", "blk.0.ffn_down.weight").error().message,
            read_gguf(std::as_bytes(std::span(cut)), "m.gguf").error().message);  // the header reader's bound check
}

TEST(TensorFile, ReadsByExtension) {
  const auto dir = std::filesystem::temp_directory_path() / ("edgeplan_tensors_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const Bytes b = npy(1, "<f4");
  std::ofstream((dir / "w.npy").string(), std::ios::binary).write(reinterpret_cast<const char*>(b.data()),
                                                                  static_cast<std::streamsize>(b.size()));
  auto t = read_tensor_file((dir / "w.npy").string(), "");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->values, kValues);
  EXPECT_EQ(read_tensor_file((dir / "w.npy").string(), "x").error().message,
            (dir / "w.npy").string() + ": a .npy file holds one array; drop --tensor");
  EXPECT_EQ(read_tensor_file((dir / "nope.npy").string(), "").error().message,
            "cannot read tensor file '" + (dir / "nope.npy").string() + "': no such file");
  EXPECT_EQ(read_tensor_file("w.bin", "").error().message,
            "w.bin: unknown tensor file type '.bin' (expected .npy, .safetensors or .gguf)");
  const Bytes g = bytes_of(gguf_file());
  std::ofstream((dir / "m.gguf").string(), std::ios::binary).write(reinterpret_cast<const char*>(g.data()),
                                                                   static_cast<std::streamsize>(g.size()));
  auto from_file = read_tensor_file((dir / "m.gguf").string(), "blk.0.ffn_down.weight");
  ASSERT_TRUE(from_file.ok()) << from_file.error().message;
  EXPECT_EQ(from_file->values, kValues);
  std::filesystem::remove_all(dir);
}

// A small tensor at the front of a huge file: only the header and the tensor's bytes are read (the files are
// sparse, 64 GiB each; reading them whole would not fit in memory).
TEST(TensorFile, ReadsOnlyTheHeaderAndTheTensor) {
  const auto dir = std::filesystem::temp_directory_path() / ("edgeplan_huge_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::pair<std::string, Bytes> files[] = {{"w.npy", npy(1, "<f4")},
                                                 {"w.safetensors", safetensors(one("F32", 24), "F32")}};
  for (const auto& [name, bytes] : files) {
    const std::string path = (dir / name).string();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    std::filesystem::resize_file(path, 64ull << 30);
    auto t = read_tensor_file(path, "");
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->values, kValues) << name;
  }
  // A header longer than the safetensors format allows is refused before it is read.
  const std::string path = (dir / "h.safetensors").string();
  Bytes lead;
  put_le(lead, 100'000'001, 8);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(lead.data()), 8);
  std::filesystem::resize_file(path, 200'000'000);
  EXPECT_EQ(read_tensor_file(path, "").error().message,
            path + ": byte 0: header length 100000001 is above the format's limit of 100000000 bytes");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace edgeplan::io
