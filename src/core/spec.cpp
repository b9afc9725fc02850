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

}  // namespace edgeplan
