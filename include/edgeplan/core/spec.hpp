// Speculative decoding and multi-token prediction (Leviathan et al., 2023). With per-token acceptance
// rate alpha, draft length gamma and draft cost ratio c (one draft step / one target step):
//   expected tokens per target step = (1 - alpha^(gamma+1)) / (1 - alpha)   (gamma + 1 when alpha = 1)
//   speedup = expected tokens / (gamma x c + 1)
// Source: reference chapter section 7.2 (speculative.py). Documented in docs/model.md, "spec".
#pragma once

#include <cstdint>

namespace edgeplan {

struct SpecParams {
  double alpha = 0;       // per-token acceptance rate, [0, 1]
  std::uint32_t gamma = 0;// draft tokens per target step
  double cost = 0;        // draft step cost / target step cost, >= 0
};

double spec_expected_tokens(double alpha, std::uint32_t gamma);
double spec_speedup(const SpecParams& p);

}  // namespace edgeplan
