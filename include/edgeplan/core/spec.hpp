// Speculative decoding and multi-token prediction (Leviathan et al., 2023). With per-token acceptance
// rate alpha, draft length gamma and draft cost ratio c (one draft step / one target step):
//   expected tokens per target step = (1 - alpha^(gamma+1)) / (1 - alpha)   (gamma + 1 when alpha = 1)
//   speedup = expected tokens / (gamma x c + 1)
// The best gamma is the whole gamma in [1, kSpecMaxGamma] with the highest speedup, or 0 (no speculation)
// when none beats 1. A draft model's cost is its decode time per token over the target's (decode.hpp,
// spec_draft_cost). Source: reference chapter sections 7.2 and 7.8 (speculative.py, best_gamma).
// Documented in docs/model.md, "spec".
#pragma once

#include <cstdint>
#include <vector>

namespace edgeplan {

struct SpecParams {
  double alpha = 0;       // per-token acceptance rate, [0, 1]
  std::uint32_t gamma = 0;// draft tokens per target step
  double cost = 0;        // draft step cost / target step cost, >= 0
};

inline constexpr std::uint32_t kSpecMaxGamma = 64;  // longest draft considered

double spec_expected_tokens(double alpha, std::uint32_t gamma);
double spec_speedup(const SpecParams& p);

struct SpecBest {
  std::uint32_t gamma = 0;   // argmax of the speedup (smallest on ties); 0 when nothing beats 1
  double speedup = 1;        // speedup at that gamma
  bool at_limit = false;     // gamma == kSpecMaxGamma: the speedup still grows with gamma
};

// The best draft length for acceptance rate alpha and cost ratio cost.
SpecBest spec_best_gamma(double alpha, double cost);

// alpha = start, start + step, ... up to stop (inclusive, within 1e-9 of a step); values rounded to 1e-9
// so that 0.5 + 2 x 0.05 is 0.6. Requires step > 0 and start <= stop.
std::vector<double> spec_alpha_range(double start, double stop, double step);

}  // namespace edgeplan
