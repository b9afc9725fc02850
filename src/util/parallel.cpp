#include "edgeplan/util/parallel.hpp"

#include <algorithm>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace edgeplan::util {

unsigned worker_count() { return std::max(1u, std::thread::hardware_concurrency()); }

void parallel_for(std::uint64_t n, const std::function<void(unsigned, std::uint64_t, std::uint64_t)>& body,
                  std::uint64_t grain, unsigned workers) {
  const std::uint64_t parts = std::max<std::uint64_t>(n / std::max<std::uint64_t>(grain, 1), 1);
  workers = static_cast<unsigned>(std::min<std::uint64_t>(workers == 0 ? worker_count() : workers, parts));
  std::vector<std::exception_ptr> errors(workers);
  auto part = [&](unsigned w) {
    try {
      body(w, n * w / workers, n * (w + 1) / workers);
    } catch (...) {
      errors[w] = std::current_exception();
    }
  };
  // A thread the system cannot start (a small address-space limit, a thread limit) leaves its part and those after
  // it to the calling thread, after part 0: the same parts, each run once, on fewer threads.
  std::vector<std::thread> threads;
  unsigned started = 1;
  for (; started < workers; ++started) {
    try {
      threads.emplace_back(part, started);
    } catch (const std::system_error&) {
      break;
    }
  }
  part(0);
  for (unsigned w = started; w < workers; ++w) part(w);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace edgeplan::util
