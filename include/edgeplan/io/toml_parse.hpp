// Every TOML text edgeplan reads (profiles, plans, request lists, --set values) is parsed here. toml++ parses
// and destroys tables recursively, so tens of thousands of nested tables in a 100 KB file overflow the stack:
// the text is scanned first and refused when it nests deeper than kMaxTomlDepth levels.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

// The deepest nesting a TOML input may have, counting each table header or dotted-key segment, array and
// inline table as one level. Profiles need five or so.
inline constexpr std::size_t kMaxTomlDepth = 64;

// One pass over a TOML text. `too_deep`: where it first nests deeper than `max_depth` levels (line and column
// from 1), nullopt when it does not. It counts the open arrays, inline tables and table headers plus the dots of
// the keys inside them since the last line break or comma (a dot in a number counts too). A table header's depth
// is not carried into the keys under it, so the depth toml++ builds stays below twice the limit.
// `text`: the text less its plain comments (printable ASCII up to the line break; the line break stays), which
// is what toml++ is given: its per-character reader spent a third of a short run's instructions in the
// profiles' comments. Lines and the columns of everything toml++ reads are unchanged, so are its errors.
// (`text` is complete only when `too_deep` is nullopt.)
struct TomlPosition {
  std::size_t line = 0;
  std::size_t column = 0;
};
struct TomlScan {
  std::optional<TomlPosition> too_deep;
  std::string text;
};
TomlScan scan_toml(std::string_view text, std::size_t max_depth = kMaxTomlDepth);

// The table `text` holds; `display` names it in errors: "FILE:LINE:COL: invalid TOML: ...", or
// "FILE:LINE:COL: TOML nested deeper than 64 levels".
Result<toml::table> parse_toml(std::string_view text, const std::string& display);

}  // namespace edgeplan::io
