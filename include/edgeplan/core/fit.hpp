// What `fit` ranks: a model stored in one format on one device, and how candidates compare.
//   quality proxy = params (billions) x min(bits per weight, 8) / 8
// (bigger models are better; below 8 bits per weight, quantization costs quality in proportion). Ranking:
// largest model first, then most bits per weight. Pareto front: no other candidate is at least as good in
// quality, decode rate and longest context and better in one. Documented in docs/model.md, "report, check, fit".
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace edgeplan {

struct FitCandidate {
  double params = 0;             // parameters of the model
  double bits_per_weight = 0;    // of the format
  double tok_per_s = 0;          // decode rate at the required context
  std::uint64_t max_context = 0; // longest context that fits
};

double quality_proxy(double params, double bits_per_weight);

// a is at least as good as b in quality, rate and context, and better in one of them.
bool dominates(const FitCandidate& a, const FitCandidate& b);

// Indices of `c` in ranking order: largest model first, then most bits per weight; ties keep their order.
std::vector<std::size_t> fit_ranking(std::span<const FitCandidate> c);

// Whether each candidate is on the Pareto front (dominated by none of the others).
std::vector<bool> pareto_front(std::span<const FitCandidate> c);

}  // namespace edgeplan
