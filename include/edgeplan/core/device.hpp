// A device as the planners see it: the memory an app may use and the DRAM bandwidth it decodes from, and
// the optional sections each mechanism reads (prefill compute, compute units, storage, LoRA swaps,
// thermal behaviour, power).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "edgeplan/core/kv.hpp"
#include "edgeplan/core/prefill.hpp"
#include "edgeplan/core/runtime.hpp"
#include "edgeplan/core/thermal.hpp"

namespace edgeplan {

// Compute units and the link between them, for operator placement (core/place.hpp).
enum class UnitKind { npu, gpu, cpu };                   // also the default priority order
enum class OpKind { matmul, elementwise, softmax, norm };  // what a unit declares it runs

struct ComputeUnit {
  std::optional<double> int8_ops_per_s;    // matmul with int8 weights; required when ops has matmul
  std::optional<double> fp16_flops_per_s;  // activation x activation matmul in fp16; same
  double bandwidth_bytes_per_s = 0;        // effective bandwidth for memory-bound ops and weight reads
  std::vector<OpKind> ops;                 // the op kinds this unit runs
  std::optional<double> bandwidth_fraction = std::nullopt;  // bandwidth given as this fraction of the device's (it follows it)
};

struct UnitLink {
  double bandwidth_bytes_per_s = 0;  // between any two units
  double latency_s = 0;              // fixed cost per transfer
};

// Where the weight file lives, as mmap sees it (core/stream.hpp).
struct StorageSpec {
  double read_bytes_per_s = 0;      // sequential read rate of the storage; 0 until its class gives it
  double page_bytes = 0;            // page size of the mapping
  double page_fault_s = 0;          // cost of one major page fault (trap, I/O issue, mapping)
  std::uint64_t readahead_pages = 1;// pages the OS reads per fault on its own (1 = no readahead)
  std::string storage_class;        // the storage class it names (profiles/storage/), or ""
  // Where the read rate is its class's (with_storage_class): the slowest and fastest devices of the class; 0: none.
  double read_low_bytes_per_s = 0;
  double read_high_bytes_per_s = 0;
};

// Adapter hot-swap costs (core/lora.hpp).
struct LoraSwapSpec {
  double swap_fixed_s = 0;          // fixed cost of one swap besides moving the bytes
};

// Power draw per phase and the battery, for energy per request (core/power.hpp, route).
struct PowerSpec {
  double prefill_w = 0;               // while prefilling a prompt (compute-bound)
  double decode_w = 0;                // while decoding (memory-bound)
  double idle_w = 0;                  // while idle between requests
  std::optional<double> battery_wh;   // battery capacity; none on mains (a Jetson kit, a plugged-in laptop)
  std::string source;                 // where the watts were measured (publication, runtime, model); may be empty
};

// How a profile's decode and prefill figures were obtained ([provenance]; docs/profiles.md).
enum class Calibration {
  reference,  // the chapter's definitions (phone8g): a scenario, not a measured device
  fitted,     // fitted to `measurements` runs of `runtime` on this device, largest in-sample error residual_percent
  carried,    // not measured here: utilization, overhead and prefill efficiency of the fitted profile `from`
  datasheet,  // vendor figures at the default utilization, nothing fitted
  measured,   // this host's memory read and matmul rates measured by `edgeplan bench`, nothing fitted to a runtime
  class_model,  // not measured here: the figures of runtime class `from`, fitted across the devices of its class
};
const char* to_string(Calibration c);  // "reference", "fitted", "carried", "datasheet", "measured", "class"

struct Provenance {
  Calibration method = Calibration::datasheet;
  std::string runtime;            // runtime and backend measured, "llama.cpp Metal"; empty for datasheet/reference
  std::uint32_t measurements = 0; // runs fitted (fitted)
  double residual_percent = 0;    // largest in-sample |predicted / measured - 1| of the fit, % (fitted)
  std::string from;               // carried: the fitted profile carried over; fitted: where the runs came from
  std::string kernels;            // measured: the kernel and ISA each figure came from
  bool operator==(const Provenance&) const = default;
};
// Only a fitted profile is calibrated; a profile without [provenance] is not.
bool calibrated(const std::optional<Provenance>& p);

// One-token matmul rates by weight type ([decode]; docs/model.md, "decode"): the FLOP/s of the runtime's
// matrix-vector kernel for weights of type kPrefillTypes[i] streamed from DRAM, as bench's gemv table measures them;
// and the FLOP/s of one token's attention over the cached context (bench's one-query flash attention), where given.
struct DecodeRates {
  std::array<std::optional<double>, kPrefillTypes.size()> type_flops{};
  std::optional<double> attention_flops;
};

// The out-of-sample error of a speed figure: percentiles of predicted / measured - 1 over the figures of devices
// predicted with themselves left out of their runtime class's fit (core/runtime_class.hpp).
struct ErrorBand {
  double low = 0;             // 10th percentile (<= 0)
  double high = 0;            // 90th percentile (>= 0)
  std::uint32_t figures = 0;  // figures predicted; 0: no band (a class of one device)
  double median_abs = 0;      // median |error|
  double max_abs = 0;         // largest |error|
  bool operator==(const ErrorBand&) const = default;
};

// Where a measured figure falls around a predicted one: low <= high.
struct Interval {
  double low = 0;
  double high = 0;
  bool operator==(const Interval&) const = default;
};

// The bands of a device's decode and prefill figures: its runtime class's.
struct SpeedErrors {
  ErrorBand decode;
  std::optional<ErrorBand> prefill;
};

struct DeviceSpec {
  std::string name;
  double memory_bytes = 0;          // memory the OS lets one app use for the model (not RAM on the box)
  double reserved_bytes = 0;        // part of that the OS and other apps keep (not the runtime's buffers)
  double bandwidth_bytes_per_s = 0; // peak DRAM bandwidth
  double utilization = 1;           // achievable fraction of peak bandwidth in decode, (0, 1]
  double per_token_overhead_s = 0;  // fixed cost per decoded token (launches, sync); 0 on the reference
  std::optional<PrefillSpec> prefill;  // compute for prompt processing, where the profile gives it
  std::optional<DecodeRates> decode;   // [decode]: one-token matmul rates, decode's compute term where given
  KvCacheSettings kv_cache;            // [kv_cache]: how the runtime pads and caps the cache
  RuntimeSpec runtime;                 // [runtime]: llama.cpp's buffers counted or not, the ISA its repack sees
  std::map<UnitKind, ComputeUnit> units;  // [units.npu], [units.gpu], [units.cpu]; empty when not given
  std::optional<UnitLink> link;           // [link]; required with two or more units
  std::optional<StorageSpec> storage;  // [storage]: needed by stream
  std::optional<LoraSwapSpec> lora;    // [lora]: needed by lora
  std::optional<ThermalSpec> thermal;        // sustained-load throttling ([thermal])
  std::optional<PowerSpec> power;            // power draw and battery ([power])
  std::optional<Provenance> provenance;      // how the figures were obtained ([provenance])
  std::vector<std::string> runtimes;         // the runtime classes it runs (profiles/runtimes/), the first its default
  std::optional<SpeedErrors> errors;         // where its runtime class gives bands (with_runtime_class)
};

}  // namespace edgeplan
