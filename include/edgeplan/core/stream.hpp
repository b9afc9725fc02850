// Loading weights from storage through mmap: the time to bring a weight file into DRAM under full preload
// (mlock), demand paging, prefetch windows and hot subsets, and the decode rate when the weights do not all
// fit in memory ("LLM in a flash", Alizadeh et al. 2023). A load reads `pages` pages of `page_bytes`:
//   bandwidth term = pages x page_bytes / read rate
//   fault term     = faults x page_fault_cost, faults = ceil(pages / window) (mlock: no faults)
//   hot fraction f touches pages_f = ceil(f x pages) pages.
// A model larger than its memory budget keeps what fits resident and reads the rest from storage every
// token. Source: reference chapter section 7.5 (streaming.py). Documented in docs/model.md, "stream".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "edgeplan/core/device.hpp"

namespace edgeplan {

// How pages reach DRAM.
enum class LoadMode {
  preload,  // read sequentially and locked (mlock): bandwidth only, no faults
  paged,    // demand paging: one fault per window of pages
};

struct LoadInputs {
  double file_bytes = 0;           // bytes of weights to bring in
  double hot_fraction = 1;         // fraction of the pages touched, (0, 1]
  LoadMode mode = LoadMode::paged;
  std::uint64_t window_pages = 1;  // pages read per fault (1 = no prefetch); ignored by preload
};

struct LoadResult {
  std::uint64_t file_pages = 0;    // ceil(file_bytes / page)
  std::uint64_t pages = 0;         // pages read: ceil(hot_fraction x file_pages)
  std::uint64_t faults = 0;        // ceil(pages / window); 0 under preload
  double bandwidth_s = 0;          // pages x page / read rate
  double fault_s = 0;              // faults x page-fault cost
  double total_s = 0;              // bandwidth_s + fault_s
  // Where the storage's read rate is its class's: total_s at the class's fastest and slowest read rates.
  std::optional<Interval> total_range;
};

// A storage class (profiles/storage/NAME.toml; docs/model.md, "storage classes"): one kind of storage as devices ship
// it (UFS 4.0 in phones, NVMe gen 4 in laptops), its typical sequential read rate and the range of published reads of
// shipping devices. A device that names it and gives no read rate of its own reads at the typical rate, and its load
// times carry the range.
struct StorageClass {
  std::string name;                // the profile's name: "ufs-4.0"
  double read_bytes_per_s = 0;     // typical
  double read_low_bytes_per_s = 0; // slowest published device of the class
  double read_high_bytes_per_s = 0;// fastest
  std::string source;              // where the figures come from
  bool operator==(const StorageClass&) const = default;
};

// `s` under its class c: the class's typical rate and range where s has no read rate of its own (0); else s as it is.
StorageSpec with_storage_class(StorageSpec s, const StorageClass& c);

// Pages of `page_bytes` needed to hold `bytes` (the last one partly filled).
std::uint64_t pages_for(double bytes, double page_bytes);

LoadResult load_time(const StorageSpec& storage, const LoadInputs& in);

struct FlashInputs {
  double weight_bytes = 0;         // whole model
  double budget_bytes = 0;         // DRAM the weights may occupy
  double hot_fraction = 1;         // fraction of the weights each token touches (sparse activation), (0, 1]
  std::uint64_t window_pages = 1;  // pages read per fault when streaming
};

struct FlashResult {
  double touched_bytes = 0;        // hot_fraction x weight_bytes: read by every token
  double resident_bytes = 0;       // part of it kept in DRAM: min(touched, budget)
  double streamed_bytes = 0;       // the rest, read from storage every token
  LoadResult stream;               // the per-token storage read of streamed_bytes
  double s_per_token = 0;          // decode of the touched bytes from DRAM + stream.total_s
  double tok_per_s = 0;            // 1 / s_per_token
  // Where a measured rate falls: the DRAM part over its runtime class's decode band (time_interval), the storage
  // part over its storage class's range (LoadResult::total_range), the slow ends together and the fast ends
  // together; none when the device has neither.
  std::optional<Interval> tok_per_s_range;
};

// Decode with the weights partly in storage: every token reads the touched bytes from DRAM (decode.hpp)
// and, first, the part that does not fit from storage (no overlap of the two is assumed).
FlashResult flash_decode(const DeviceSpec& device, const FlashInputs& in);

}  // namespace edgeplan
