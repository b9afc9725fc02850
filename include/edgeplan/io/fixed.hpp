// Number texts of output rows made without a format string: a number with a fixed count of decimals as printf's
// "%.*f" (and fmt's "{:.Nf}") writes it, a whole number, a whole number grouped by thousands as the table view
// groups them (19,431), and texts, put together on the stack and made a std::string once. A sweep makes a
// report's rows for every combination, where a format call parses its string and formats through a growing
// buffer (fmt's exact fixed-precision writer, Dragon4, ran for most of report's figures).
//   io::text("decode ", io::Fixed{tok_per_s, 2}, " tok/s")
#pragma once

#include <charconv>
#include <concepts>
#include <cstddef>
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

// A text made of parts, on the stack up to kInline characters (past them in a std::string).
class TextBuilder {
 public:
  static constexpr std::size_t kInline = 160;

  void add(std::string_view part);
  void add(Fixed part);
  void add(Grouped part);
  template <std::integral T>
    requires(!std::same_as<T, bool> && !std::same_as<T, char>)
  void add(T part) {
    char digits[24];
    add(std::string_view(digits, static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, part).ptr - digits)));
  }
  std::string str() const { return spilled_ ? long_ : std::string(inline_, size_); }

 private:
  char inline_[kInline];
  std::size_t size_ = 0;
  bool spilled_ = false;  // the text is in long_
  std::string long_;
};

// The parts one after the other: texts (std::string_view, std::string, const char*), Fixed, Grouped and whole
// numbers.
template <class... Parts>
std::string text(const Parts&... parts) {
  TextBuilder b;
  (b.add(parts), ...);
  return b.str();
}

}  // namespace edgeplan::io
