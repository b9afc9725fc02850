// Fuzz harness: a request list or trace read line by line. The first byte picks CSV or JSON Lines, trace or
// request list, and whether malformed lines are skipped; the rest is the file.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "edgeplan/io/route.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace edgeplan::io;
  if (size == 0) return 0;
  const std::uint8_t mode = data[0];
  std::istringstream in(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  RecordReader reader(in, "fuzz", (mode & 1) ? RecordFormat::jsonl : RecordFormat::csv, (mode & 2) != 0,
                      (mode & 4) != 0);
  edgeplan::RouteRequest r;
  while (true) {
    const auto more = reader.next(r);
    if (!more || !*more) break;
  }
  return 0;
}
