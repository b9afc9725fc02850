#include "edgeplan/util/names.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace edgeplan::util {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest(std::string_view word, std::span<const std::string> candidates) {
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const std::string& c : candidates) {
    // A word may be a candidate missing its tail (a unit suffix): compare with the candidate's prefix too.
    const std::size_t d = std::min(edit_distance(word, c), edit_distance(word, std::string_view(c).substr(0, word.size())));
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

bool iequal(std::string_view a, std::string_view b) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return std::ranges::equal(a, b, [&](char x, char y) { return lower(x) == lower(y); });
}

std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  const auto n = nearest(word, candidates);
  return n ? "; did you mean " + *n + "?" : "";
}

}  // namespace edgeplan::util
