// Text the user types: comma lists and numbers, read one way everywhere.
#pragma once

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

}  // namespace edgeplan::util
