#include "edgeplan/core/fit.hpp"
#include "edgeplan/util/units.hpp"

#include <algorithm>
#include <numeric>

namespace edgeplan {

double quality_proxy(double params, double bits_per_weight) {
  return params / units::kGiga * std::min(bits_per_weight, 8.0) / 8.0;
}

bool dominates(const FitCandidate& a, const FitCandidate& b) {
  const double qa = quality_proxy(a.params, a.bits_per_weight), qb = quality_proxy(b.params, b.bits_per_weight);
  const bool no_worse = qa >= qb && a.tok_per_s >= b.tok_per_s && a.max_context >= b.max_context;
  const bool better = qa > qb || a.tok_per_s > b.tok_per_s || a.max_context > b.max_context;
  return no_worse && better;
}

std::vector<std::size_t> fit_ranking(std::span<const FitCandidate> c) {
  std::vector<std::size_t> order(c.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (c[a].params != c[b].params) return c[a].params > c[b].params;
    return c[a].bits_per_weight > c[b].bits_per_weight;
  });
  return order;
}

std::vector<bool> pareto_front(std::span<const FitCandidate> c) {
  std::vector<bool> out(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) {
    out[i] = std::none_of(c.begin(), c.end(), [&](const FitCandidate& d) { return dominates(d, c[i]); });
  }
  return out;
}

}  // namespace edgeplan
