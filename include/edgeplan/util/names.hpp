// Names: tables of named things looked up by name, and "did you mean" for names that are not there (the nearest
// candidate by edit distance), for unknown keys, formats, commands and flags.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/util/result.hpp"

namespace edgeplan::util {

// Levenshtein distance, case-sensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate within a distance of max(2, |word| / 3) of the word, or of the candidate's first
// |word| characters (so "bandwith" finds "bandwidth_gbps"); nullopt when none is that close.
std::optional<std::string> nearest(std::string_view word, std::span<const std::string> candidates);

// "; did you mean X?" or "" when nothing is close.
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

// Equal ignoring ASCII case: how edgeplan matches format, type and method names ("q4_k_m" is Q4_K_M).
bool iequal(std::string_view a, std::string_view b);

// The names of a table's entries, in table order, for messages and did-you-mean. `name_of(entry)` gives a name.
template <std::ranges::input_range Table, class NameOf>
std::vector<std::string> names_of(const Table& table, NameOf name_of) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(name_of(entry));
  return out;
}

// The entry of `table` named `name` (ignoring case), or nullptr.
template <std::ranges::contiguous_range Table, class NameOf>
auto find_named(const Table& table, std::string_view name, NameOf name_of) -> decltype(std::ranges::data(table)) {
  const auto it = std::ranges::find_if(table, [&](const auto& entry) { return iequal(name_of(entry), name); });
  return it == std::ranges::end(table) ? nullptr : std::ranges::data(table) + (it - std::ranges::begin(table));
}

// The entry named `name`, or an Error "unknown WHAT 'NAME'; did you mean X?" naming the nearest entry.
template <std::ranges::contiguous_range Table, class NameOf>
auto lookup_or_suggest(const Table& table, std::string_view name, NameOf name_of, std::string_view what)
    -> Result<decltype(std::ranges::data(table))> {
  if (const auto found = find_named(table, name, name_of)) return found;
  return Error{"unknown " + std::string(what) + " '" + std::string(name) + "'" + did_you_mean(name, names_of(table, name_of))};
}

// FNV-1a, 64 bits, of `name`: a short, stable stand-in for a long name (the file of a URL's cached header, the
// temporary file of an output whose name is near the file-name limit). Not a secure hash.
constexpr std::uint64_t name_hash(std::string_view name) {
  std::uint64_t h = 14695981039346656037ull;  // the offset basis
  for (const char ch : name) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  return h;
}

}  // namespace edgeplan::util
