#include "edgeplan/io/fixed.hpp"

#include <fmt/format.h>

namespace edgeplan::io {

void append_text(std::string& out, Fixed part) {
  char digits[64];
  const std::to_chars_result r =
      std::to_chars(digits, digits + sizeof digits, part.value, std::chars_format::fixed, part.decimals);
  if (r.ec == std::errc()) {
    out.append(digits, r.ptr);
  } else {  // more than 64 characters (a magnitude past 10^45): rare enough to format through fmt
    fmt::format_to(std::back_inserter(out), "{:.{}f}", part.value, part.decimals);
  }
}

void append_text(std::string& out, Grouped part) {
  char digits[24];
  const char* end = std::to_chars(digits, digits + sizeof digits, part.value).ptr;
  const auto n = static_cast<std::size_t>(end - digits);
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out += ',';
    out += digits[i];
  }
}

}  // namespace edgeplan::io
