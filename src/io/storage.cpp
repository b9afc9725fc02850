// The [storage] section of a device profile (core/stream.hpp). Schema: docs/profiles.md, "storage".
#include <fmt/format.h>

#include "edgeplan/util/units.hpp"
#include "edgeplan/io/profiles.hpp"

namespace edgeplan::io {

void read_device_storage(Fields& f, DeviceSpec& d) {
  auto s = f.table("storage");
  if (!s) return;
  StorageSpec storage;
  storage.read_bytes_per_s = s->number("read_gbps", Range::positive) * units::kGBps;
  const std::uint32_t page_kib = s->count("page_kib", {1, limits::kPageKiB});
  storage.page_bytes = page_kib * units::kKiB;
  storage.page_fault_s = s->number("page_fault_us", Range::non_negative) / units::kUsPerS;
  const std::uint32_t readahead_kib = s->count("readahead_kib", {1, limits::kPageKiB});
  if (readahead_kib % page_kib != 0) {
    s->fail("readahead_kib", fmt::format("({}) must be a whole number of pages ({} is {})", readahead_kib,
                                         s->full_key("page_kib"), page_kib));
  }
  storage.readahead_pages = readahead_kib / page_kib;
  s->finish();
  d.storage = storage;
}

}  // namespace edgeplan::io
