#include "edgeplan/io/gguf.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <unistd.h>
#include <fstream>
#include <filesystem>

#include <fmt/format.h>

#include "edgeplan/io/lora.hpp"
#include "edgeplan/io/model_file.hpp"
#include "gguf_builder.hpp"
#include "scratch_dir.hpp"

namespace edgeplan::io {
namespace {

// A LoRA adapter: one pair on blk.0.attn_q (64 -> 64, rank 4, F16) with its data.
Builder adapter(const std::string& type = "adapter") {
  Builder b;
  b.u64(2).u64(3);
  b.kv_string("general.type", type).kv_string("adapter.type", "lora");
  b.str("adapter.lora.alpha").u32(6).f32(8.0f);
  b.tensor("blk.0.attn_q.weight.lora_a", {64, 4}, 1, 0).tensor("blk.0.attn_q.weight.lora_b", {4, 64}, 1, 512);
  const std::size_t data = (b.size() + 31) / 32 * 32;
  return b.pad_to(data + 1024);
}

std::string error_of(const Result<GgufFile>& r) { return r ? "" : r.error().message; }

TEST(Gguf, ReadsMetadataAndTensorInfos) {
  const auto f = adapter().read();
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->version, 3u);
  ASSERT_EQ(f->metadata.size(), 3u);
  EXPECT_EQ(f->string("general.type"), "adapter");
  EXPECT_EQ(std::get<double>(f->find("adapter.lora.alpha")->value), 8.0);
  EXPECT_EQ(f->find("missing"), nullptr);
  ASSERT_EQ(f->tensors.size(), 2u);
  EXPECT_EQ(f->tensors[1].name, "blk.0.attn_q.weight.lora_b");
  EXPECT_EQ(f->tensors[1].dims, (io::TensorDims{4, 64}));
  EXPECT_EQ(f->tensors[1].type->name, "F16");
  EXPECT_EQ(f->tensors[1].bytes, 512u);
  EXPECT_EQ(f->data_offset % 32, 0u);
}

TEST(Gguf, ArraysAndAlignment) {
  Builder b(2);
  b.u64(0).u64(2);
  b.str("general.alignment").u32(4).u32(64);
  b.str("tokens").u32(9).u32(8).u64(2).str("a").str("bc");
  const auto f = b.read();
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->alignment, 64u);
  const auto& items = std::get<GgufArray>(f->find("tokens")->value);
  EXPECT_EQ(items.element, GgufType::string);
  EXPECT_EQ(items.length, 2u);
  EXPECT_TRUE(items.raw.empty());  // skipped: nothing reads a tokenizer's strings
  EXPECT_EQ(f->find("general.alignment")->as_uint(), 64u);
}

TEST(Gguf, RejectsOtherVersions) {
  Builder v1(1);
  v1.u64(0).u64(0);
  EXPECT_EQ(error_of(v1.read()), "mem.gguf: byte 4: GGUF version 1 is not supported (only versions 2 and 3)");
  Builder v4(4);
  v4.u64(0).u64(0);
  EXPECT_EQ(error_of(v4.read()), "mem.gguf: byte 4: GGUF version 4 is not supported (only versions 2 and 3)");
  Builder be(0x03000000);
  EXPECT_EQ(error_of(be.read()), "mem.gguf: byte 4: big-endian GGUF files are not supported");
}

TEST(Gguf, RejectsBadMagicAndTruncation) {
  std::vector<std::byte> junk(8, std::byte{'x'});
  EXPECT_EQ(error_of(read_gguf(junk, "x.bin")), "x.bin: byte 0: not a GGUF file (the first 4 bytes are not \"GGUF\")");
  Builder b;
  EXPECT_EQ(error_of(b.read()), "mem.gguf: byte 8: the tensor count needs 8 bytes but the file ends after 0");
}

TEST(Gguf, RejectsLyingCounts) {
  Builder b;
  b.u64(1000000).u64(5);
  EXPECT_EQ(error_of(b.read()),
            "mem.gguf: byte 8: 1000000 tensors and 5 metadata entries cannot fit in the 0 bytes that follow");
  Builder s;
  s.u64(0).u64(1).u64(1ULL << 40);
  s.pad_to(64);
  EXPECT_EQ(error_of(s.read()), "mem.gguf: byte 24: a metadata key claims 1099511627776 bytes but only 32 remain");
  Builder a;
  a.u64(0).u64(1).str("big").u32(9).u32(10).u64(1ULL << 60);
  a.pad_to(128);
  EXPECT_EQ(error_of(a.read()),
            "mem.gguf: byte 39: big: an array of 1152921504606846976 elements cannot fit in the 77 bytes that remain");
}

TEST(Gguf, RejectsUnknownTypes) {
  Builder v;
  v.u64(0).u64(1).str("k").u32(13).u32(0);
  EXPECT_EQ(error_of(v.read()), "mem.gguf: byte 33: k: unknown value type 13");
  Builder t;
  t.u64(1).u64(0).tensor("w", {32, 2}, 4, 0);
  t.pad_to(512);
  EXPECT_EQ(error_of(t.read()), "mem.gguf: byte 53: tensor w: unknown ggml type id 4");
}

// A tensor of type 17 (IQ2_XS) made the reader refuse the whole file ("unknown ggml type id 17").
TEST(Gguf, ReadsTheTypesLlamaCppAddedLater) {
  const std::pair<std::uint32_t, std::uint64_t> types[] = {{17, 74}, {19, 50}, {21, 110}, {22, 82}, {29, 56},
                                                           {34, 54}, {35, 66}, {40, 36 * 4}, {41, 18 * 2}, {42, 18 * 4}};
  for (const auto& [id, bytes_per_row] : types) {
    Builder b;
    b.u64(1).u64(0).tensor("w", {256, 2}, id, 0);
    b.pad_to(4096);
    const auto f = b.read();
    ASSERT_TRUE(f) << id << ": " << f.error().message;
    EXPECT_EQ(f->tensors[0].bytes, 2 * bytes_per_row) << id;
  }
  Builder past;
  past.u64(1).u64(0).tensor("w", {256, 2}, 43, 0);
  past.pad_to(512);
  EXPECT_EQ(error_of(past.read()), "mem.gguf: byte 53: tensor w: unknown ggml type id 43");
}

TEST(Gguf, RejectsBadTensors) {
  Builder dims;
  dims.u64(1).u64(0).tensor("w", {1, 2, 3, 4, 5}, 0, 0);
  dims.pad_to(512);
  EXPECT_EQ(error_of(dims.read()), "mem.gguf: byte 33: tensor w: 5 dimensions (expected 1 to 4)");
  Builder past;
  past.u64(1).u64(0).tensor("w", {256, 256}, 0, 0);
  past.pad_to(512);
  EXPECT_EQ(error_of(past.read()),
            "mem.gguf: byte 24: tensor w: its 262144 bytes of data at offset 0 run past the end of the file");
  Builder block;
  block.u64(1).u64(0).tensor("w", {33, 1}, 2, 0);
  block.pad_to(512);
  EXPECT_EQ(error_of(block.read()), "mem.gguf: byte 53: tensor w: row length 33 is not a multiple of the Q4_0 block of 32");
  Builder align;
  align.u64(1).u64(0).tensor("w", {4}, 0, 8);
  align.pad_to(512);
  EXPECT_EQ(error_of(align.read()), "mem.gguf: byte 24: tensor w: data offset 8 is not a multiple of the alignment 32");
  Builder dup;
  dup.u64(2).u64(0).tensor("w", {4}, 0, 0).tensor("w", {4}, 0, 32);
  dup.pad_to(512);
  EXPECT_EQ(error_of(dup.read()), "mem.gguf: byte 57: duplicate tensor w");
}

// 2000 tensors of 8 F32 weights all at offset 0 were read as 2000 x 32 bytes of weights in a 156 KB file.
TEST(Gguf, RejectsTensorsThatShareData) {
  Builder same;
  same.u64(2000).u64(0);
  for (int i = 0; i < 2000; ++i) same.tensor("w" + std::to_string(i), {8}, 0, 0);
  const std::size_t infos_end = same.size();
  same.pad_to(infos_end + 64);
  const std::size_t data = (infos_end + 31) / 32 * 32;
  EXPECT_EQ(error_of(same.read()), fmt::format("mem.gguf: byte 58: tensors 'w0' and 'w1' overlap at bytes {}-{}",
                                               data, data + 31));
  Builder apart;  // each tensor's data just after the one before: no overlap
  apart.u64(3).u64(0).tensor("a", {8}, 0, 64).tensor("b", {16}, 0, 0).tensor("c", {8}, 0, 96);
  apart.pad_to(512);
  EXPECT_TRUE(apart.read().ok()) << error_of(apart.read());
}

TEST(Gguf, RejectsBadMetadata) {
  Builder dup;
  dup.u64(0).u64(2).kv_string("a", "x").kv_string("a", "y");
  EXPECT_EQ(error_of(dup.read()), "mem.gguf: byte 46: duplicate metadata key a");
  Builder align;
  align.u64(0).u64(1).str("general.alignment").u32(4).u32(48);
  EXPECT_EQ(error_of(align.read()), "mem.gguf: byte 53: general.alignment must be a u32 power of 2");
  Builder boolean;
  boolean.u64(0).u64(1).str("b").u32(7).raw("\x02", 1);
  EXPECT_EQ(error_of(boolean.read()), "mem.gguf: byte 37: b: a bool must be 0 or 1 (got 2)");
}

TEST(Gguf, RejectsDeepNesting) {
  Builder b;
  b.u64(0).u64(1).str("n");
  b.u32(9);
  for (int i = 0; i < 5; ++i) b.u32(9).u64(1);
  b.pad_to(256);
  EXPECT_EQ(error_of(b.read()), "mem.gguf: byte 85: n: arrays nested more than 4 deep");
}

TEST(Gguf, MissingFile) {
  EXPECT_EQ(read_gguf_file("no/such.gguf").error().message, "cannot read GGUF file 'no/such.gguf': no such file");
}

TEST(GgufLora, ReadsPairs) {
  const auto f = adapter().read();
  ASSERT_TRUE(f.ok());
  const auto lora = read_lora_adapter(*f, "mem.gguf");
  ASSERT_TRUE(lora.ok()) << lora.error().message;
  ASSERT_EQ(lora->matrices.size(), 1u);
  EXPECT_EQ(lora->matrices[0].target, "attn_q.weight");
  EXPECT_EQ(lora->matrices[0].rank, 4u);
  EXPECT_EQ(lora->matrices[0].shape.d_in, 64u);
  EXPECT_EQ(lora->matrices[0].shape.d_out, 64u);
  EXPECT_EQ(lora->matrices[0].adapter_bytes, 1024);
  EXPECT_EQ(lora->alpha, 8.0);
}

TEST(GgufLora, RejectsModels) {
  const auto f = adapter("model").read();
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(read_lora_adapter(*f, "m.gguf").error().message,
            "m.gguf: not a LoRA adapter (general.type is \"model\", expected \"adapter\")");
}

TEST(GgufLora, RejectsUnpairedTensors) {
  Builder b;
  b.u64(1).u64(2).kv_string("general.type", "adapter").kv_string("adapter.type", "lora");
  b.tensor("blk.0.attn_v.weight.lora_a", {64, 4}, 1, 0);
  b.pad_to(1024);
  const auto f = b.read();
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(read_lora_adapter(*f, "m.gguf").error().message,
            "m.gguf: blk.0.attn_v.weight.lora_a has no matching blk.0.attn_v.weight.lora_b");
}

// Arrays cost no more memory than their bytes in the file: integers are kept as stored, other arrays are
// skipped (a 16 MiB array of u8 took 774 MB as one value per element).
TEST(Gguf, ArraysAreKeptCompactlyOrSkipped) {
  Builder b;
  b.u64(0).u64(3);
  b.str("counts").u32(9).u32(5).u64(3).u32(7).u32(0xFFFFFFFFu).u32(2);  // i32: 7, -1, 2
  b.str("big").u32(9).u32(0).u64(1 << 24);
  b.pad_to(b.size() + (1 << 24));
  b.str("scores").u32(9).u32(6).u64(2).u32(0).u32(0);
  const auto f = b.read();
  ASSERT_TRUE(f.ok()) << f.error().message;
  const auto& counts = std::get<GgufArray>(f->find("counts")->value);
  EXPECT_EQ(counts.as_uint(0), 7u);
  EXPECT_EQ(counts.as_uint(1), std::nullopt);
  EXPECT_EQ(counts.as_uint(2), 2u);
  const auto& big = std::get<GgufArray>(f->find("big")->value);
  EXPECT_EQ(big.length, 1u << 24);
  EXPECT_EQ(big.raw.size(), 1u << 24);  // one byte per u8
  EXPECT_TRUE(std::get<GgufArray>(f->find("scores")->value).raw.empty());
}

// An empty integer array holds no bytes (found by fuzzing: the copy into its empty storage was undefined
// behaviour, which the asan preset's UBSan reports).
TEST(Gguf, EmptyIntegerArray) {
  Builder b;
  b.u64(0).u64(1);
  b.str("empty").u32(9).u32(0).u64(0);
  const auto f = b.read();
  ASSERT_TRUE(f.ok()) << f.error().message;
  const auto& empty = std::get<GgufArray>(f->find("empty")->value);
  EXPECT_EQ(empty.length, 0u);
  EXPECT_TRUE(empty.raw.empty());
}

// Names, strings and arrays longer than edgeplan reads are errors, checked before anything is read.
TEST(Gguf, LengthsAreBounded) {
  Builder key;
  key.u64(0).u64(1).str(std::string(kGgufMaxName + 1, 'k')).u32(4).u32(1);
  EXPECT_EQ(error_of(key.read()), "mem.gguf: byte 24: a metadata key of 65536 bytes is longer than edgeplan reads "
                                  "(65535 at most)");
  const auto dir = std::filesystem::temp_directory_path() / ("edgeplan_gguf_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto sparse = [&](Builder& b, const std::string& name) {  // the header, then holes up to 1 GiB
    const std::string path = (dir / name).string();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.bytes().data()),
                                                static_cast<std::streamsize>(b.bytes().size()));
    std::filesystem::resize_file(path, 1ull << 30);
    return read_gguf_file(path);
  };
  Builder array;
  array.u64(0).u64(1).str("tokens").u32(9).u32(0).u64(kGgufMaxArray + 1);
  EXPECT_EQ(error_of(sparse(array, "a.gguf")),
            (dir / "a.gguf").string() + ": byte 42: tokens: an array of 67108865 elements is longer than edgeplan "
                                        "reads (67108864 at most)");
  Builder text;
  text.u64(0).u64(1).str("template").u32(8).u64(kGgufMaxString + 1);
  EXPECT_EQ(error_of(sparse(text, "s.gguf")),
            (dir / "s.gguf").string() + ": byte 44: a string of 67108865 bytes is longer than edgeplan reads "
                                        "(67108864 at most)");
  std::filesystem::remove_all(dir);
}

TEST(GgufLora, PairsFiftyThousandTensorsByName) {
  GgufFile f;
  f.metadata.emplace_back("general.type", GgufValue{GgufType::string, std::string("adapter")});
  f.metadata.emplace_back("adapter.type", GgufValue{GgufType::string, std::string("lora")});
  const GgmlType* f16 = find_ggml_type("F16");
  constexpr int kPairs = 50'000;
  for (int i = 0; i < kPairs; ++i) {
    f.tensors.push_back({"blk." + std::to_string(i) + ".attn_q.weight.lora_a", {64, 4}, f16, 0, 512});
  }
  for (int i = kPairs; i-- > 0;) {  // in the opposite order: a scan per lora_a would walk them all
    f.tensors.push_back({"blk." + std::to_string(i) + ".attn_q.weight.lora_b", {4, 64}, f16, 0, 512});
  }
  const auto lora = read_lora_adapter(f, "many.gguf");
  ASSERT_TRUE(lora.ok()) << lora.error().message;
  ASSERT_EQ(lora->matrices.size(), static_cast<std::size_t>(kPairs));
  EXPECT_EQ(lora->matrices.back().target, "attn_q.weight");
}

}  // namespace
}  // namespace edgeplan::io

namespace edgeplan::io {
namespace {

void write_file(const std::filesystem::path& p, const std::vector<std::byte>& bytes) {
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

TEST(GgufSplit, ShardNamesAreLlamaCpps) {
  EXPECT_EQ(gguf_split_paths("m/x-00002-of-00003.gguf"),
            (std::vector<std::string>{"m/x-00001-of-00003.gguf", "m/x-00002-of-00003.gguf", "m/x-00003-of-00003.gguf"}));
  EXPECT_EQ(gguf_split_paths("x.gguf"), std::nullopt);
  EXPECT_EQ(gguf_split_paths("x-00004-of-00003.gguf"), std::nullopt);
  EXPECT_EQ(gguf_split_paths("x-1-of-3.gguf"), std::nullopt);  // llama_split_path prints %05d
  EXPECT_EQ(model_file_name("dir/Llama-3.1-8B-Q6_K-00001-of-00002.gguf"), "Llama-3.1-8B-Q6_K");
}

// Given any shard, the whole model: before, the first shard alone was taken for the model.
TEST(GgufSplit, AnyShardReadsTheWholeModel) {
  const testing_dir::ScratchDir dir("gguf_split");
  const std::vector<std::vector<std::pair<std::string, std::uint64_t>>> parts{
      {{"token_embd.weight", 16}, {"blk.0.attn_q.weight", 32}}, {{"blk.0.ffn_up.weight", 64}}, {{"output.weight", 16}}};
  std::uint64_t bytes = 0;
  for (std::uint16_t i = 0; i < 3; ++i) {
    const auto b = split_shard(i, 3, 4, parts[i]);
    bytes += b.size();
    write_file(dir / fmt::format("tiny-{:05}-of-00003.gguf", i + 1), b);
  }
  for (int i = 1; i <= 3; ++i) {
    const std::string path = (dir / fmt::format("tiny-{:05}-of-00003.gguf", i)).string();
    const auto f = read_gguf_model(path);
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ(f->tensors.size(), 4u);
    std::vector<std::uint32_t> shards;  // each tensor's shard (its offset is in that shard's file)
    for (const GgufTensor& t : f->tensors) shards.push_back(t.shard);
    EXPECT_EQ(shards, (std::vector<std::uint32_t>{0, 0, 1, 2}));
    EXPECT_EQ(f->shards, 3u);
    EXPECT_EQ(f->file_bytes, bytes);
    const auto profile = model_file_profile(path);
    ASSERT_TRUE(profile.ok()) << profile.error().message;
    EXPECT_EQ(profile->name, "tiny");
  }
  const auto m = model_from_gguf(*read_gguf_model((dir / "tiny-00003-of-00003.gguf").string()), "tiny", "t");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(*m->formats.at("F32").bytes, 128.0 * (16 + 32 + 64 + 16));

  std::filesystem::remove(dir / "tiny-00002-of-00003.gguf");
  const std::string third = (dir / "tiny-00003-of-00003.gguf").string();
  EXPECT_EQ(read_gguf_model(third).error().message,
            third + ": shard 2 of 3 of this split model is missing: " + (dir / "tiny-00002-of-00003.gguf").string());
  write_file(dir / "tiny-00002-of-00003.gguf", split_shard(0, 3, 4, parts[1]));  // split.no says shard 1
  EXPECT_EQ(read_gguf_model(third).error().message,
            (dir / "tiny-00002-of-00003.gguf").string() + ": split.no and split.count must be 1 and 3 in shard 2 of 3");
  write_file(dir / "tiny-00002-of-00003.gguf", split_shard(1, 3, 4, {}));  // a tensor short
  EXPECT_EQ(read_gguf_model(third).error().message,
            third + ": the 3 shards hold 3 tensors but split.tensors.count is 4");
  write_file(dir / "renamed.gguf", split_shard(0, 3, 4, parts[0]));
  EXPECT_EQ(read_gguf_model((dir / "renamed.gguf").string()).error().message,
            (dir / "renamed.gguf").string() + ": split.count is 3 but the name is not llama.cpp's "
            "PREFIX-0000i-of-00003.gguf, so the other shards cannot be found");
}

// A file whose tensors contradict its own metadata is refused: tiny-llama.gguf with feed_forward_length 96, its
// FFN tensors 64 wide.
TEST(GgufModel, TensorsThatContradictTheMetadataAreRefused) {
  std::ifstream in(std::filesystem::path(EDGEPLAN_SOURCE_DIR) / "tests/data/tiny-llama.gguf", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "llama.feed_forward_length";
  const std::size_t at = bytes.find(key) + key.size() + 4;  // after the key and its value type
  ASSERT_EQ(bytes[at], 64);
  bytes[at] = 96;
  std::vector<std::byte> raw(bytes.size());
  std::memcpy(raw.data(), bytes.data(), bytes.size());
  const auto f = read_gguf(raw, "lying.gguf");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(model_from_gguf(*f, "lying", "lying.gguf").error().message,
            "lying.gguf: tensor blk.0.ffn_gate.weight is [32, 64] but the metadata (llama.*) makes it 32 x 96");
}

// A set is one model: a tensor twice, a shard of another set, or a split.count that is no number is an error
// naming the shard, never a model counted wrong.
TEST(GgufSplit, ASetIsOneModel) {
  const testing_dir::ScratchDir dir("gguf_split_one");
  auto path = [&](int i) { return dir / fmt::format("tiny-{:05}-of-00002.gguf", i); };
  const std::vector<std::pair<std::string, std::uint64_t>> a{{"token_embd.weight", 16}, {"blk.0.attn_q.weight", 32}};
  write_file(path(1), split_shard(0, 2, 3, a));
  write_file(path(2), split_shard(1, 2, 3, {{"blk.0.attn_q.weight", 32}}));  // shard 1's tensor again
  EXPECT_EQ(read_gguf_model(path(1).string()).error().message,
            path(2).string() + ": tensor blk.0.attn_q.weight of shard 2 of 2 is in an earlier shard too");
  write_file(path(2), split_shard(1, 2, 5, {{"output.weight", 16}}));  // of a set of 5 tensors
  EXPECT_EQ(read_gguf_model(path(1).string()).error().message,
            path(2).string() + ": shard 2 of 2 is of another set: its split.tensors.count is 5, shard 1's 3");
  // split.count as a string: before, shard 1 was read alone as the whole model.
  Builder b;
  b.u64(1).u64(3);
  b.kv_string("general.architecture", "llama");
  b.kv_string("split.count", "2");
  b.str("split.no").u32(2).raw("\0\0", 2);
  b.tensor("token_embd.weight", {32, 16}, 0, 0);
  b.pad_to((b.size() + 31) / 32 * 32 + 128 * 16);
  write_file(path(1), b.bytes());
  EXPECT_EQ(read_gguf_model(path(1).string()).error().message,
            path(1).string() + ": split.count must be a whole number (gguf-split writes a u16)");
}

}  // namespace
}  // namespace edgeplan::io
