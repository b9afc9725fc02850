#include "edgeplan/core/stream.hpp"

#include "edgeplan/core/runtime_class.hpp"

#include <algorithm>
#include <cmath>

#include "edgeplan/core/decode.hpp"

namespace edgeplan {

std::uint64_t pages_for(double bytes, double page_bytes) {
  return static_cast<std::uint64_t>(std::ceil(bytes / page_bytes));
}

StorageSpec with_storage_class(StorageSpec s, const StorageClass& c) {
  if (s.read_bytes_per_s > 0) return s;
  s.read_bytes_per_s = c.read_bytes_per_s;
  s.read_low_bytes_per_s = c.read_low_bytes_per_s;
  s.read_high_bytes_per_s = c.read_high_bytes_per_s;
  return s;
}

LoadResult load_time(const StorageSpec& storage, const LoadInputs& in) {
  LoadResult r;
  r.file_pages = pages_for(in.file_bytes, storage.page_bytes);
  r.pages = static_cast<std::uint64_t>(std::ceil(in.hot_fraction * static_cast<double>(r.file_pages)));
  if (in.mode == LoadMode::paged) r.faults = (r.pages + in.window_pages - 1) / in.window_pages;
  const double bytes = static_cast<double>(r.pages) * storage.page_bytes;
  r.bandwidth_s = bytes / storage.read_bytes_per_s;
  r.fault_s = static_cast<double>(r.faults) * storage.page_fault_s;
  r.total_s = r.bandwidth_s + r.fault_s;
  if (storage.read_low_bytes_per_s > 0) {
    r.total_range = Interval{bytes / storage.read_high_bytes_per_s + r.fault_s,
                             bytes / storage.read_low_bytes_per_s + r.fault_s};
  }
  return r;
}

FlashResult flash_decode(const DeviceSpec& device, const FlashInputs& in) {
  FlashResult r;
  r.touched_bytes = in.hot_fraction * in.weight_bytes;
  r.resident_bytes = std::clamp(in.budget_bytes, 0.0, r.touched_bytes);
  r.streamed_bytes = r.touched_bytes - r.resident_bytes;
  r.stream = load_time(*device.storage, {r.streamed_bytes, 1, LoadMode::paged, in.window_pages});
  const double dram_s = decode(device, {r.touched_bytes, 0}).s_per_token;
  r.s_per_token = dram_s + r.stream.total_s;
  r.tok_per_s = 1.0 / r.s_per_token;
  if (device.errors || r.stream.total_range) {
    const Interval dram = device.errors ? time_interval(dram_s, device.errors->decode) : Interval{dram_s, dram_s};
    const Interval read = r.stream.total_range.value_or(Interval{r.stream.total_s, r.stream.total_s});
    r.tok_per_s_range = Interval{1.0 / (dram.high + read.high), 1.0 / (dram.low + read.low)};
  }
  return r;
}

}  // namespace edgeplan
