// The [storage] and [lora] device sections and the model's lora_shapes (src/io/storage.cpp, src/io/lora.cpp).
#include <gtest/gtest.h>

#include "edgeplan/io/profiles.hpp"

namespace edgeplan::io {
namespace {

const std::string kCore =
    "memory_gib = 8.0\nreserved_gib = 0.8\nbandwidth_gbps = 68.0\nutilization = 0.85\nper_token_overhead_ms = 0.0\n";

Result<DeviceSpec> device(const std::string& extra) {
  return load_device({"d", "d.toml", "test", kCore + extra}, {});
}

std::string error_of(const Result<DeviceSpec>& r) { return r ? "" : r.error().message; }

TEST(StorageProfile, ReadsTheSection) {
  const auto d = device("[storage]\nread_gbps = 2.5\npage_kib = 4\npage_fault_us = 100\nreadahead_kib = 128\n");
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_TRUE(d->storage.has_value());
  EXPECT_EQ(d->storage->read_bytes_per_s, 2.5e9);
  EXPECT_EQ(d->storage->page_bytes, 4096);
  EXPECT_DOUBLE_EQ(d->storage->page_fault_s, 100e-6);
  EXPECT_EQ(d->storage->readahead_pages, 32u);
  EXPECT_FALSE(d->lora.has_value());
}

TEST(StorageProfile, IsOptional) {
  const auto d = device("");
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->storage.has_value());
}

TEST(StorageProfile, Errors) {
  EXPECT_EQ(error_of(device("[storage]\nread_gbps = 2.5\npage_kib = 16\npage_fault_us = 100\nreadahead_kib = 24\n")),
            "d.toml:10:17: device.storage.readahead_kib (24) must be a whole number of pages "
            "(device.storage.page_kib is 16)");
  EXPECT_EQ(error_of(device("[storage]\nread_gbps = 2.5\npage_kib = 16\npage_fault_us = 100\n")),
            "d.toml:6:1: missing required key device.storage.readahead_kib");
  EXPECT_EQ(error_of(device("[storage]\nread_gbps = 0\npage_kib = 16\npage_fault_us = 1\nreadahead_kib = 16\n")),
            "d.toml:7:13: device.storage.read_gbps must be greater than 0 (got 0)");
  EXPECT_EQ(error_of(device("[storage]\nread_gbps = 1\npage_kib = 16\npage_fault_ms = 1\nreadahead_kib = 16\n")),
            "d.toml:9:17: unknown key device.storage.page_fault_ms; did you mean device.storage.page_fault_us?");
  EXPECT_EQ(error_of(device("[storage]\nread_gbps = 1\npage_kib = 16\npage_fault_us = 1\nreadahead_kib = 16\n"
                            "page_fault = 2\n")),
            "d.toml:11:14: unknown key device.storage.page_fault; did you mean device.storage.page_fault_us?");
}

TEST(LoraProfile, DeviceSection) {
  const auto d = device("[lora]\nswap_fixed_us = 250\n");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_DOUBLE_EQ(d->lora->swap_fixed_s, 250e-6);
  EXPECT_EQ(error_of(device("[lora]\nswap_fixed_us = -1\n")),
            "d.toml:7:17: device.lora.swap_fixed_us must be 0 or more (got -1)");
  EXPECT_EQ(error_of(device("[lora]\nswap_us = 1\n")), "d.toml:7:11: unknown key device.lora.swap_us; did you mean device.lora.swap_fixed_us?");
}

Result<ModelSpec> model(const std::string& extra) {
  return load_model({"m", "m.toml", "test",
                     "params = 8e9\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\nhead_dim = 128\n"
                     "ffn = 11008\n" + extra},
                    {});
}

TEST(LoraProfile, ModelShapes) {
  EXPECT_EQ(model("")->lora_shapes, LoraShapes::real);
  EXPECT_EQ(model("lora_shapes = \"real\"\n")->lora_shapes, LoraShapes::real);
  EXPECT_EQ(model("lora_shapes = \"chapter\"\n")->lora_shapes, LoraShapes::chapter);
  EXPECT_EQ(model("lora_shapes = \"chaptre\"\n").error().message,
            "m.toml:8:15: model.lora_shapes must be one of real, chapter (got \"chaptre\"); did you mean chapter?");
}

}  // namespace
}  // namespace edgeplan::io
