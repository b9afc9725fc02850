// Text that comes from outside (file contents, names in model files, paths, option values) on its way to a
// message or to the output. An error line names what it echoes quoted, escaped and cut short, so a 1 MB key
// or a newline inside a GGUF string cannot flood or split it; the table, CSV and Markdown views escape control
// characters; JSON replaces bytes that are not UTF-8 (RFC 3629) with U+FFFD and says so in a warning (io/warnings.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace edgeplan::io {

// Whether `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
bool is_valid_utf8(std::string_view text);

// `text` with control characters (C0, DEL, C1) written as \n, \r, \t or \xNN and every byte that is not part of
// well-formed UTF-8 as \xNN; other text unchanged.
std::string escaped(std::string_view text);
// Appends escaped(text) to `out` (without a copy when the text needs no escape).
void append_escaped(std::string& out, std::string_view text);

// Characters of untrusted text a message shows before cutting it short.
inline constexpr std::size_t kQuotedChars = 80;

// `text` escaped and cut after `max_chars` characters, with "..." and its length in bytes when cut:
// 'xxxx... (1048576 bytes)'. For text a message shows inside quotes of its own, or a key.
std::string clipped(std::string_view text, std::size_t max_chars = kQuotedChars);

// clipped(text) in single quotes: 'general.name', or 'xxxx...' (1048576 bytes).
std::string quoted(std::string_view text, std::size_t max_chars = kQuotedChars);

}  // namespace edgeplan::io
