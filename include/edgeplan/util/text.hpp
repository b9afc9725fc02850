// Text the user types: comma lists and numbers, read one way everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace edgeplan::util {

// "a, b,c" as its items with blanks trimmed; nullopt when an item is empty ("a,,b", "", "a,").
std::optional<std::vector<std::string>> split_list(std::string_view text);

// The whole of `text` as a finite decimal number (as std::from_chars reads it: no sign '+', no blanks, no
// hexadecimal); nullopt otherwise.
std::optional<double> parse_number(std::string_view text);

// A count of tokens as people name context sizes: "8192", "8k" (8,192: k is 1,024, as "a 128k context" is 131,072
// tokens), "1M" (1,048,576). nullopt when `text` is not a whole number with at most that suffix, or overflows.
std::optional<std::uint64_t> parse_tokens(std::string_view text);

// A byte size as people write it: a number with an optional unit, B, kB, MB, GB, TB (powers of 1,000) or KiB,
// MiB, GiB, TiB (powers of 1,024): "512MiB", "6GiB", "2GB", "1.5GiB", "4096". Rounded to a whole byte; nullopt
// when the text is not one, is negative, or the bytes pass 2^63.
std::optional<std::uint64_t> parse_bytes(std::string_view text);

}  // namespace edgeplan::util
