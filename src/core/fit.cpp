#include "edgeplan/core/fit.hpp"
#include "edgeplan/util/units.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

namespace edgeplan {
namespace {

// llama.cpp, tools/perplexity/README.md, "LLaMA 3 8b Scoreboard" (wikitext-2, CUDA, revision in the README):
// the ΔPPL column. FP16's own row (0.0015) is the rounding of the stored reference logits, not a loss: the
// float formats count as lossless. Rows "None" where the scoreboard has them, else "WT 10m" (imatrix).
constexpr double kFp16Perplexity = 6.231636;  // PPL - ΔPPL of every row: the FP16 model
constexpr std::array kQualities{
    FormatQuality{"F32", 0, false},         FormatQuality{"F16", 0, false},
    FormatQuality{"BF16", 0, false},        FormatQuality{"Q8_0", 0.002650, false},
    FormatQuality{"Q6_K", 0.021748, false}, FormatQuality{"Q5_K_M", 0.056974, false},
    FormatQuality{"Q5_K_S", 0.104964, false}, FormatQuality{"Q5_1", 0.106223, false},
    FormatQuality{"Q5_0", 0.131591, false}, FormatQuality{"Q4_K_M", 0.175482, false},
    FormatQuality{"IQ4_NL", 0.223959, true}, FormatQuality{"IQ4_XS", 0.228071, true},
    FormatQuality{"Q4_K_S", 0.268895, false}, FormatQuality{"Q4_1", 0.451103, false},
    FormatQuality{"Q4_0", 0.468514, false}, FormatQuality{"Q3_K_L", 0.556242, false},
    FormatQuality{"Q3_K_M", 0.656864, false}, FormatQuality{"IQ3_M", 0.666694, true},
    FormatQuality{"IQ3_S", 0.733867, true}, FormatQuality{"IQ3_XS", 0.931409, true},
    FormatQuality{"IQ3_XXS", 1.226803, true}, FormatQuality{"Q3_K_S", 1.632152, false},
    FormatQuality{"IQ2_M", 2.369166, true}, FormatQuality{"Q2_K_S", 3.092145, true},
    FormatQuality{"IQ2_S", 3.419148, true}, FormatQuality{"Q2_K", 3.519934, false},
    FormatQuality{"IQ2_XS", 4.529791, true}, FormatQuality{"IQ2_XXS", 7.860148, true},
    FormatQuality{"IQ1_M", 19.262089, true}, FormatQuality{"IQ1_S", 54.462959, true},
};

// Perplexity against size: ln(PPL(7B) / PPL(70B)) / ln(N(70B) / N(7B)), Llama 2 at FP16 on wikitext-2 from the
// same README: 5.7946 (the Q8_0 row of "LLaMA 2 vs. LLaMA 3", 5.798542 / 1.000689) and 3.4313 ("Llama 2 70B
// Scoreboard"), with 6.74e9 and 68.98e9 parameters.
const double kPerplexitySlope = std::log(5.7946 / 3.4313) / std::log(68.98 / 6.74);

}  // namespace

double perplexity_slope() { return kPerplexitySlope; }

std::span<const FormatQuality> format_qualities() { return kQualities; }

std::optional<FormatQuality> format_quality(std::string_view format) {
  for (const FormatQuality& q : kQualities) {
    if (q.format == format) return q;
  }
  return std::nullopt;
}

std::optional<double> quality_proxy(double params, std::string_view format) {
  const std::optional<FormatQuality> q = format_quality(format);
  if (!q) return std::nullopt;
  const double ratio = 1 + q->delta_ppl / kFp16Perplexity;
  return params / units::kGiga * std::pow(ratio, -1 / kPerplexitySlope);
}

bool dominates(const FitCandidate& a, const FitCandidate& b) {
  if (a.quality.has_value() != b.quality.has_value()) return false;
  const double qa = a.quality.value_or(0), qb = b.quality.value_or(0);
  const bool no_worse = qa >= qb && a.tok_per_s >= b.tok_per_s && a.max_context >= b.max_context;
  const bool better = qa > qb || a.tok_per_s > b.tok_per_s || a.max_context > b.max_context;
  return no_worse && better;
}

std::vector<std::size_t> fit_ranking(std::span<const FitCandidate> c) {
  std::vector<std::size_t> order(c.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (c[a].quality.has_value() != c[b].quality.has_value()) return c[a].quality.has_value();
    if (c[a].quality != c[b].quality) return *c[a].quality > *c[b].quality;
    return c[a].tok_per_s > c[b].tok_per_s;
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
