#include "edgeplan/io/fixed.hpp"

#include <bit>
#include <cstring>

namespace edgeplan::io {
namespace {

__extension__ typedef unsigned __int128 Wide;  // GCC's and Clang's 128-bit integer (__extension__: not ISO C++)

constexpr std::uint64_t kPowersOf10[] = {1,
                                         10,
                                         100,
                                         1000,
                                         10000,
                                         100000,
                                         1000000,
                                         10000000,
                                         100000000,
                                         1000000000,
                                         10000000000,
                                         100000000000,
                                         1000000000000,
                                         10000000000000,
                                         100000000000000,
                                         1000000000000000,
                                         10000000000000000,
                                         100000000000000000};

// The digits of v rounded to `decimals` (0 to 17) into `out` (at least 48 characters), with the exact binary value
// worked out in integers: v = m x 2^e, so v x 10^decimals = m x 10^decimals x 2^e, rounded to nearest, ties to
// even, as printf does. Returns the end, or nullptr where the rounded digits pass 2^64 or v is not finite (then
// std::to_chars writes it).
char* fixed_digits(double v, int decimals, char* out) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  const auto biased = static_cast<int>((bits >> 52) & 0x7FF);
  if (biased == 0x7FF || decimals < 0 || decimals > 17) return nullptr;
  const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
  const std::uint64_t m = biased == 0 ? fraction : fraction | (std::uint64_t{1} << 52);
  const int e = biased == 0 ? -1074 : biased - 1075;
  const Wide scaled = static_cast<Wide>(m) * kPowersOf10[decimals];  // < 2^110
  Wide n = 0;
  if (e >= 0) {
    if (e > 17) return nullptr;  // past 2^127: let to_chars write it
    n = scaled << e;
  } else if (-e < 128) {
    const int shift = -e;
    n = scaled >> shift;
    const Wide rest = scaled & ((static_cast<Wide>(1) << shift) - 1);
    const Wide half = static_cast<Wide>(1) << (shift - 1);
    if (rest > half || (rest == half && (n & 1) != 0)) ++n;
  }
  if ((n >> 64) != 0) return nullptr;
  char digits[24];
  const char* end = std::to_chars(digits, digits + sizeof digits, static_cast<std::uint64_t>(n)).ptr;
  auto count = static_cast<std::size_t>(end - digits);
  const auto after = static_cast<std::size_t>(decimals);
  char* p = out;
  if (bits >> 63) *p++ = '-';
  if (count <= after) {  // 0.0ddd: zeros before the digits
    *p++ = '0';
    *p++ = '.';
    for (std::size_t z = count; z < after; ++z) *p++ = '0';
    std::memcpy(p, digits, count);
    return p + count;
  }
  std::memcpy(p, digits, count - after);
  p += count - after;
  if (after == 0) return p;
  *p++ = '.';
  std::memcpy(p, digits + count - after, after);
  return p + after;
}

}  // namespace

void TextBuilder::add(std::string_view part) {
  if (!spilled_ && size_ + part.size() <= kInline) {
    std::memcpy(inline_ + size_, part.data(), part.size());
    size_ += part.size();
    return;
  }
  if (!spilled_) {
    long_.assign(inline_, size_);
    spilled_ = true;
  }
  long_.append(part);
}

void TextBuilder::add(Fixed part) {
  char digits[400];  // to_chars writes up to 309 integer digits, the point and 17 decimals
  char* end = fixed_digits(part.value, part.decimals, digits);
  if (!end) end = std::to_chars(digits, digits + sizeof digits, part.value, std::chars_format::fixed, part.decimals).ptr;
  add(std::string_view(digits, static_cast<std::size_t>(end - digits)));
}

void TextBuilder::add(Grouped part) {
  char digits[24], grouped[32];
  const char* end = std::to_chars(digits, digits + sizeof digits, part.value).ptr;
  const auto n = static_cast<std::size_t>(end - digits);
  std::size_t g = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) grouped[g++] = ',';
    grouped[g++] = digits[i];
  }
  add(std::string_view(grouped, g));
}

}  // namespace edgeplan::io
