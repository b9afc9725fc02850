// A device as the planners see it: the memory an app may use and the DRAM bandwidth it decodes from.
// Later mechanisms add their own sections (compute units, storage, thermal) beside these fields.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace edgeplan {

// Where the weight file lives, as mmap sees it (core/stream.hpp).
struct StorageSpec {
  double read_bytes_per_s = 0;      // sequential read rate of the storage
  double page_bytes = 0;            // page size of the mapping
  double page_fault_s = 0;          // cost of one major page fault (trap, I/O issue, mapping)
  std::uint64_t readahead_pages = 1;// pages the OS reads per fault on its own (1 = no readahead)
};

// Adapter hot-swap costs (core/lora.hpp).
struct LoraSwapSpec {
  double swap_fixed_s = 0;          // fixed cost of one swap besides moving the bytes
};

struct DeviceSpec {
  std::string name;
  double memory_bytes = 0;          // memory the OS lets one app use for the model (not RAM on the box)
  double reserved_bytes = 0;        // part of that kept for the app, runtime and OS
  double bandwidth_bytes_per_s = 0; // peak DRAM bandwidth
  double utilization = 1;           // achievable fraction of peak bandwidth in decode, (0, 1]
  double per_token_overhead_s = 0;  // fixed cost per decoded token (launches, sync); 0 on the reference
  std::optional<StorageSpec> storage;  // [storage]: needed by stream
  std::optional<LoraSwapSpec> lora;    // [lora]: needed by lora
};

}  // namespace edgeplan
