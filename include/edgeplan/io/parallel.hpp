// Work split over this machine's cores, for sweeps: contiguous parts, one thread each, results in order.
#pragma once

#include <cstdint>
#include <functional>

namespace edgeplan::io {

// The threads parallel_for runs on: one per hardware thread (at least 1).
unsigned worker_count();

// Runs body(worker, begin, end) over [0, n) split into worker_count() contiguous parts (worker 0 gets the first),
// each on its own thread, and returns when all are done. An exception thrown by a part is rethrown here (the
// lowest part's, when several throw).
void parallel_for(std::uint64_t n, const std::function<void(unsigned worker, std::uint64_t begin, std::uint64_t end)>& body);

}  // namespace edgeplan::io
