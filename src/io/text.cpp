#include "edgeplan/io/text.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace edgeplan::io {
namespace {

// The length of the well-formed UTF-8 sequence at the start of `s`, 0 when it does not start with one.
std::size_t sequence_length(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte (RFC 3629, section 4)
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < n || byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return n;
}

// Appends the next character of `rest` to `out`, escaped, and removes it from `rest`.
void append_escaped_char(std::string& out, std::string_view& rest) {
  const std::size_t n = sequence_length(rest);
  const auto b0 = static_cast<unsigned char>(rest[0]);
  const bool c1 = n == 2 && b0 == 0xC2 && static_cast<unsigned char>(rest[1]) < 0xA0;  // U+0080 .. U+009F
  if (n == 1 && b0 >= 0x20 && b0 != 0x7F) {
    out += rest[0];
  } else if (n == 1 && (b0 == '\n' || b0 == '\r' || b0 == '\t')) {
    out += b0 == '\n' ? "\\n" : b0 == '\r' ? "\\r" : "\\t";
  } else if (n > 1 && !c1) {
    out.append(rest.substr(0, n));
  } else {
    for (std::size_t i = 0; i < std::max<std::size_t>(n, 1); ++i) {
      out += fmt::format("\\x{:02X}", static_cast<unsigned char>(rest[i]));
    }
  }
  rest.remove_prefix(std::max<std::size_t>(n, 1));
}

bool plain(std::string_view text) {
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b >= 0x7F) return false;
  }
  return true;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  while (!text.empty()) {
    const std::size_t n = sequence_length(text);
    if (n == 0) return false;
    text.remove_prefix(n);
  }
  return true;
}

std::string escaped(std::string_view text) {
  std::string out;
  append_escaped(out, text);
  return out;
}

void append_escaped(std::string& out, std::string_view text) {
  if (plain(text)) {
    out.append(text);
    return;
  }
  out.reserve(out.size() + text.size());
  while (!text.empty()) append_escaped_char(out, text);
}

namespace {

// The escaped text between `quote`s, and the length in bytes when it was cut short.
std::string clip(std::string_view text, std::size_t max_chars, std::string_view quote) {
  std::string out(quote);
  std::string_view rest = text;
  for (std::size_t chars = 0; !rest.empty() && chars < max_chars; ++chars) append_escaped_char(out, rest);
  if (rest.empty()) return out.append(quote);
  return fmt::format("{}...{} ({} bytes)", out, quote, text.size());
}

}  // namespace

std::string clipped(std::string_view text, std::size_t max_chars) { return clip(text, max_chars, ""); }

std::string quoted(std::string_view text, std::size_t max_chars) { return clip(text, max_chars, "'"); }

}  // namespace edgeplan::io
