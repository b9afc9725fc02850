#include "edgeplan/core/runtime_class.hpp"
#include "edgeplan/core/stream.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace edgeplan {
namespace {

// The chapter's storage (section 7.5): 68 GB/s, 16 KiB pages, 25 us per fault.
StorageSpec chapter_storage() {
  StorageSpec s;
  s.read_bytes_per_s = 68e9;
  s.page_bytes = 16384;
  s.page_fault_s = 25e-6;
  s.readahead_pages = 1;
  return s;
}

constexpr double kFile = 5.184e9;  // ref-8b Q4_K_M

TEST(Stream, PagesRoundUp) {
  EXPECT_EQ(pages_for(kFile, 16384), 316407u);
  EXPECT_EQ(pages_for(16384, 16384), 1u);
  EXPECT_EQ(pages_for(16385, 16384), 2u);
  EXPECT_EQ(pages_for(0, 16384), 0u);
}

TEST(Stream, PreloadIsBandwidthOnly) {
  const LoadResult r = load_time(chapter_storage(), {kFile, 1, LoadMode::preload, 1});
  EXPECT_EQ(r.pages, 316407u);
  EXPECT_EQ(r.faults, 0u);
  EXPECT_DOUBLE_EQ(r.bandwidth_s, 316407.0 * 16384 / 68e9);
  EXPECT_NEAR(r.total_s, 0.076, 0.0005);
  EXPECT_EQ(r.fault_s, 0);
}

TEST(Stream, DemandPagingFaultsEveryPage) {
  const LoadResult r = load_time(chapter_storage(), {kFile, 1, LoadMode::paged, 1});
  EXPECT_EQ(r.faults, 316407u);
  EXPECT_DOUBLE_EQ(r.fault_s, 316407 * 25e-6);
  EXPECT_NEAR(r.fault_s, 7.910, 0.0005);
  EXPECT_NEAR(r.total_s, 7.986, 0.0005);
}

TEST(Stream, PrefetchWindowBatchesFaults) {
  const LoadResult r = load_time(chapter_storage(), {kFile, 1, LoadMode::paged, 32});
  EXPECT_EQ(r.faults, 9888u);  // ceil(316407 / 32)
  EXPECT_NEAR(r.fault_s, 0.247, 0.0005);
  EXPECT_NEAR(r.total_s, 0.323, 0.0005);
}

TEST(Stream, HotSubsetTouchesAFractionOfThePages) {
  const LoadResult r = load_time(chapter_storage(), {kFile, 0.3, LoadMode::paged, 1});
  EXPECT_EQ(r.file_pages, 316407u);
  EXPECT_EQ(r.pages, 94923u);  // ceil(0.3 x 316407)
  EXPECT_NEAR(r.total_s, 2.396, 0.0005);
  const LoadResult w = load_time(chapter_storage(), {kFile, 0.3, LoadMode::paged, 32});
  EXPECT_EQ(w.faults, 2967u);  // ceil(94923 / 32)
  EXPECT_NEAR(w.total_s, 0.097, 0.0005);
}

TEST(Stream, WindowLargerThanFileIsOneFault) {
  const LoadResult r = load_time(chapter_storage(), {16384 * 3, 1, LoadMode::paged, 1000});
  EXPECT_EQ(r.faults, 1u);
}

DeviceSpec phone() {
  DeviceSpec d = fixtures::phone8g();
  d.storage = chapter_storage();
  return d;
}

TEST(Flash, FittingModelDecodesFromDram) {
  const FlashResult r = flash_decode(phone(), {kFile, 7e9, 1, 1});
  EXPECT_EQ(r.streamed_bytes, 0);
  EXPECT_EQ(r.stream.faults, 0u);
  EXPECT_NEAR(r.tok_per_s, 11.15, 0.005);
}

// A storage class gives a device without a read rate of its own its typical rate, and every load its range: the same
// pages and faults at the class's fastest and slowest devices.
TEST(Stream, AStorageClassGivesTheRateAndTheRangeOfItsDevices) {
  const StorageClass ufs{.name = "ufs-4.0", .read_bytes_per_s = 2.5e9, .read_low_bytes_per_s = 2e9,
                         .read_high_bytes_per_s = 4e9, .source = "test"};
  StorageSpec s = chapter_storage();
  s.read_bytes_per_s = 0;
  s.storage_class = "ufs-4.0";
  const StorageSpec classed = with_storage_class(s, ufs);
  EXPECT_EQ(classed.read_bytes_per_s, 2.5e9);
  const LoadResult r = load_time(classed, {kFile, 1, LoadMode::paged, 32});
  const double bytes = static_cast<double>(r.pages) * 16384;
  ASSERT_TRUE(r.total_range);
  EXPECT_DOUBLE_EQ(r.total_s, bytes / 2.5e9 + r.fault_s);
  EXPECT_DOUBLE_EQ(r.total_range->low, bytes / 4e9 + r.fault_s);
  EXPECT_DOUBLE_EQ(r.total_range->high, bytes / 2e9 + r.fault_s);
  // A rate of the device's own (measured, or --set) stands, with no range.
  s.read_bytes_per_s = 1e9;
  const StorageSpec own = with_storage_class(s, ufs);
  EXPECT_EQ(own.read_bytes_per_s, 1e9);
  EXPECT_FALSE(load_time(own, {kFile, 1, LoadMode::preload, 1}).total_range);
}

TEST(Flash, TheRestIsStreamedEveryToken) {
  const FlashResult r = flash_decode(phone(), {16e9, 6e9, 1, 32});
  EXPECT_DOUBLE_EQ(r.resident_bytes, 6e9);
  EXPECT_DOUBLE_EQ(r.streamed_bytes, 10e9);
  EXPECT_EQ(r.stream.pages, 610352u);   // ceil(10e9 / 16384)
  EXPECT_EQ(r.stream.faults, 19074u);   // ceil(610352 / 32)
  const double dram_s = 16e9 / (68e9 * 0.85);
  const double storage_s = 610352.0 * 16384 / 68e9 + 19074 * 25e-6;
  EXPECT_DOUBLE_EQ(r.s_per_token, dram_s + storage_s);
  EXPECT_DOUBLE_EQ(r.tok_per_s, 1 / (dram_s + storage_s));
}

TEST(Flash, HotFractionThatFitsStreamsNothing) {
  const FlashResult r = flash_decode(phone(), {16e9, 6e9, 0.25, 1});
  EXPECT_DOUBLE_EQ(r.touched_bytes, 4e9);
  EXPECT_EQ(r.streamed_bytes, 0);
  EXPECT_DOUBLE_EQ(r.tok_per_s, 68e9 * 0.85 / 4e9);
}

// Its interval: the DRAM part over the runtime class's decode band, the storage part over the storage class's range.
TEST(Flash, ARateUnderAClassHasTheIntervalOfBothParts) {
  DeviceSpec d = phone();
  EXPECT_FALSE(flash_decode(d, {16e9, 6e9, 1, 32}).tok_per_s_range);  // neither class: no interval
  d.errors = SpeedErrors{ErrorBand{-0.1, 0.2, 10, 0.05, 0.3}, std::nullopt};
  d.storage->read_low_bytes_per_s = 34e9;   // half the typical 68 GB/s
  d.storage->read_high_bytes_per_s = 136e9;  // twice it
  const FlashResult r = flash_decode(d, {16e9, 6e9, 1, 32});
  ASSERT_TRUE(r.tok_per_s_range);
  const double dram_s = 16e9 / (68e9 * 0.85), bytes = 610352.0 * 16384, faults_s = 19074 * 25e-6;
  const Interval dram = time_interval(dram_s, d.errors->decode);  // dram_s x (1 - 0.1) to x (1 + 0.2)
  EXPECT_DOUBLE_EQ(dram.low, dram_s * 0.9);
  EXPECT_DOUBLE_EQ(r.tok_per_s_range->low, 1 / (dram.high + bytes / 34e9 + faults_s));
  EXPECT_DOUBLE_EQ(r.tok_per_s_range->high, 1 / (dram.low + bytes / 136e9 + faults_s));
  EXPECT_LT(r.tok_per_s_range->low, r.tok_per_s);
  EXPECT_GT(r.tok_per_s_range->high, r.tok_per_s);
}

TEST(Flash, NoBudgetStreamsEverything) {
  const FlashResult r = flash_decode(phone(), {1e9, -5e9, 1, 1});
  EXPECT_EQ(r.resident_bytes, 0);
  EXPECT_DOUBLE_EQ(r.streamed_bytes, 1e9);
}

}  // namespace
}  // namespace edgeplan
