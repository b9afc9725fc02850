// Measuring this machine (`edgeplan bench`) and describing it as a device profile. Memory read bandwidth
// is a STREAM-style read kernel (McCalpin's STREAM, read-only: a sum over a buffer far larger than the
// caches, one contiguous slice per thread, all threads at once; best of the repeats). Matrix multiplies
// go through OpenBLAS's cblas_sgemm, so they measure the machine rather than edgeplan's code:
// GFLOPS = 2 x M x N x K / time. Storage read rate: one sequential pass over a file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

// Best read bandwidth over `repeats` passes of `threads` threads over a buffer of `buffer_bytes`, bytes/s.
double measure_read_bandwidth(std::uint64_t buffer_bytes, unsigned threads, unsigned repeats);

// C (M x N) = A (M x K) x B (K x N) in fp32.
struct GemmShape {
  std::string name;  // "square 512", "ffn_down"
  std::uint64_t m = 0, n = 0, k = 0;
  [[nodiscard]] double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

// Best time of `repeats` sgemm calls after one warm-up, s. Fails when OpenBLAS cannot be loaded, or when edgeplan
// was built without it (its cblas.h is optional at build time: cmake/Dependencies.cmake).
Result<double> measure_gemm_s(const GemmShape& shape, unsigned repeats);

// One sequential read of the whole file: bytes read and seconds taken. Fails when the file cannot be read.
struct FileRead {
  double bytes = 0;
  double seconds = 0;
};
Result<FileRead> measure_file_read(const std::string& path);

// MemTotal and MemAvailable from the text of /proc/meminfo.
struct HostMemory {
  double total_bytes = 0;
  double available_bytes = 0;
};
Result<HostMemory> parse_meminfo(std::string_view text);
Result<HostMemory> read_meminfo();  // /proc/meminfo; fails outside Linux

// What `bench --write-profile` writes: a device profile of this host that the other commands load.
struct HostProfile {
  std::string description;                        // one line for `edgeplan profiles`
  HostMemory memory;
  double read_bytes_per_s = 0;                    // measured memory read bandwidth
  std::optional<double> gemm_flops_per_s;         // best measured sgemm rate; gives [prefill]
  std::optional<double> storage_bytes_per_s;      // measured file read rate: a commented-out [storage]
  std::vector<std::string> comments;              // extra lines put at the top ("measured on ...")
};
std::string device_profile_toml(const HostProfile& p);

}  // namespace edgeplan::io
