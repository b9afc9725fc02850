// Work split over this machine's cores: contiguous parts, one thread each, results in order. The one
// parallel loop of edgeplan (sweeps, rendering, quantization error).
#pragma once

#include <cstdint>
#include <functional>

namespace edgeplan::util {

// Items below which a thread costs more than it saves, for loops of light items (a few hundred nanoseconds each).
inline constexpr std::uint64_t kParallelGrain = 16384;

// The threads parallel_for runs on by default: one per hardware thread (at least 1).
unsigned worker_count();

// Runs body(worker, begin, end) over [0, n) split into contiguous parts (worker 0 gets the first), each on its
// own thread, and returns when all are done: `workers` parts (0: worker_count()), fewer when a part would get
// less than `grain` items (one part runs on the calling thread). An exception thrown by a part is rethrown here
// (the lowest part's, when several throw), after every part has finished.
void parallel_for(std::uint64_t n, const std::function<void(unsigned worker, std::uint64_t begin, std::uint64_t end)>& body,
                  std::uint64_t grain = 1, unsigned workers = 0);

}  // namespace edgeplan::util
