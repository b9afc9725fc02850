#include "edgeplan/core/spec.hpp"

#include <cmath>

namespace edgeplan {

double spec_expected_tokens(double alpha, std::uint32_t gamma) {
  if (alpha >= 1.0) return gamma + 1.0;
  return (1.0 - std::pow(alpha, gamma + 1.0)) / (1.0 - alpha);
}

double spec_speedup(const SpecParams& p) {
  return spec_expected_tokens(p.alpha, p.gamma) / (p.gamma * p.cost + 1.0);
}

SpecBest spec_best_gamma(double alpha, double cost) {
  SpecBest best;
  for (std::uint32_t gamma = 1; gamma <= kSpecMaxGamma; ++gamma) {
    const double s = spec_speedup({alpha, gamma, cost});
    if (s > best.speedup) best = {gamma, s, gamma == kSpecMaxGamma};
  }
  return best;
}

std::vector<double> spec_alpha_range(double start, double stop, double step) {
  std::vector<double> out;
  const auto steps = static_cast<std::uint64_t>(std::floor((stop - start) / step + 1e-9));
  for (std::uint64_t i = 0; i <= steps; ++i) {
    out.push_back(std::round((start + static_cast<double>(i) * step) * 1e9) / 1e9);
  }
  return out;
}

}  // namespace edgeplan
