// Unit constants. GB = 1e9 bytes and GiB = 2^30 bytes, exactly as the reference chapter uses them.
#pragma once

namespace edgeplan::units {

inline constexpr double kGB = 1e9;                  // bytes in a gigabyte
inline constexpr double kGiB = 1073741824.0;        // bytes in a gibibyte
inline constexpr double kMiB = 1048576.0;           // bytes in a mebibyte
inline constexpr double kKiB = 1024.0;              // bytes in a kibibyte
inline constexpr double kGiga = 1e9;                // 10^9: G in GB/s, GFLOPS, billions of parameters
inline constexpr double kTera = 1e12;               // 10^12: T in TFLOPS, TOPS
inline constexpr double kGBps = 1e9;                // bytes/s in a GB/s
inline constexpr double kUsPerS = 1e6;              // microseconds in a second
inline constexpr double kMsPerS = 1e3;              // milliseconds in a second
inline constexpr double kJPerWh = 3600;             // joules in a watt-hour

}  // namespace edgeplan::units
