// "Did you mean": the nearest candidate by edit distance, for unknown keys, names and flags.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace edgeplan::io {

// Levenshtein distance, case-sensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate within a distance of max(2, |word| / 3) of the word, or of the candidate's first
// |word| characters (so "bandwith" finds "bandwidth_gbps"); nullopt when none is that close.
std::optional<std::string> nearest(std::string_view word, std::span<const std::string> candidates);

// "; did you mean X?" or "" when nothing is close.
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

}  // namespace edgeplan::io
