// Number texts of output rows made without a format string: a number with a fixed count of decimals as printf's
// "%.*f" (and fmt's "{:.Nf}") writes it, a whole number, a whole number grouped by thousands as the table view
// groups them (19,431), each appended to a string. A sweep makes a report's rows for every combination, and these
// are std::to_chars into a buffer on the stack, where a format call parses its string and formats through a
// growing buffer (fmt's exact fixed-precision writer, Dragon4, runs for most of report's figures).
//   io::text("decode ", io::Fixed{tok_per_s, 2}, " tok/s")
#pragma once

#include <charconv>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

namespace edgeplan::io {

// `value` with `decimals` digits after the point (0 to 17): the exact value of the double rounded to nearest,
// ties to even, as printf and fmt round it ("nan", "inf" and "-0.00" as they write them).
struct Fixed {
  double value = 0;
  int decimals = 2;
};

// A whole number with its digits grouped by thousands: 19431 -> "19,431".
struct Grouped {
  std::uint64_t value = 0;
};

void append_text(std::string& out, Fixed part);
void append_text(std::string& out, Grouped part);
inline void append_text(std::string& out, std::string_view part) { out.append(part); }
template <std::integral T>
  requires(!std::same_as<T, bool> && !std::same_as<T, char>)
void append_text(std::string& out, T part) {
  char digits[24];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, part).ptr);
}

// The parts one after the other: texts (std::string_view, std::string, const char*), Fixed, Grouped and whole
// numbers.
template <class... Parts>
std::string text(const Parts&... parts) {
  std::string out;
  (append_text(out, parts), ...);
  return out;
}

}  // namespace edgeplan::io
