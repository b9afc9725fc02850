#include "edgeplan/io/warnings.hpp"

#include <algorithm>
#include <mutex>
#include <utility>

namespace edgeplan::io {
namespace {

std::mutex& lock() {
  static std::mutex m;
  return m;
}

std::vector<std::string>& pending() {
  static std::vector<std::string> w;
  return w;
}

}  // namespace

void warn(std::string message) {
  const std::lock_guard<std::mutex> hold(lock());
  std::vector<std::string>& w = pending();
  if (std::find(w.begin(), w.end(), message) == w.end()) w.push_back(std::move(message));
}

std::vector<std::string> take_warnings() {
  const std::lock_guard<std::mutex> hold(lock());
  std::vector<std::string> out = std::exchange(pending(), {});
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace edgeplan::io
