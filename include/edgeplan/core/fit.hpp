// What `fit` ranks: a model stored in one format on one device, and how candidates compare.
//   quality proxy = effective parameters (billions) = params x (PPL ratio of the format) ^ (-1 / b)
// The PPL ratio of a format is llama.cpp's published perplexity of Llama-3-8B in that format over its FP16
// perplexity (tools/perplexity/README.md, "LLaMA 3 8b Scoreboard"); b = 0.2253 is how fast perplexity falls
// with size, ln(PPL 7B / PPL 70B) / ln(N 70B / N 7B) from the same README's Llama 2 7B and 70B FP16 figures. So a
// format that raises perplexity by a factor r counts as the model that many times smaller whose FP16
// perplexity is r times higher. Ranking: highest proxy first, then fastest decode; a format without a
// published figure has no proxy and ranks after every format with one. Pareto front: no other candidate is at
// least as good in quality, decode rate and longest context and better in one. Documented in docs/model.md,
// "report, check, fit".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace edgeplan {

// A format's published quality loss: the perplexity it adds to Llama-3-8B (FP16: 6.2316 on wikitext-2).
struct FormatQuality {
  std::string_view format;  // file type name, as in core/formats.hpp
  double delta_ppl;         // perplexity added over FP16
  bool imatrix;             // measured with an importance matrix (llama.cpp's "WT 10m" rows)
};

// Every format llama.cpp's scoreboard measures (without an importance matrix where it measures both).
std::span<const FormatQuality> format_qualities();
std::optional<FormatQuality> format_quality(std::string_view format);

// b above: how fast perplexity falls with the parameter count (ln PPL per ln N).
double perplexity_slope();

// Effective parameters, in billions, of `params` parameters stored as `format`; nullopt when no quality loss
// is published for the format.
std::optional<double> quality_proxy(double params, std::string_view format);

struct FitCandidate {
  std::optional<double> quality;  // quality_proxy
  double tok_per_s = 0;           // decode rate at the required context
  std::uint64_t max_context = 0;  // longest context that fits
};

// a is at least as good as b in quality, rate and context, and better in one of them. A candidate without a
// quality neither dominates nor is dominated by one with a quality: they are not comparable.
bool dominates(const FitCandidate& a, const FitCandidate& b);

// Indices of `c` in ranking order: highest quality first (those without one last), then fastest; ties keep
// their order.
std::vector<std::size_t> fit_ranking(std::span<const FitCandidate> c);

// Whether each candidate is on the Pareto front (dominated by none of the others).
std::vector<bool> pareto_front(std::span<const FitCandidate> c);

}  // namespace edgeplan
