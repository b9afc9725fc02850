// Reading a profile's TOML: parsed with the --set overrides applied, then read by the strict reader (fields.hpp).
// Apart from profiles.hpp (finding profiles), so that what only finds or loads profiles does not compile toml++.
#pragma once

#include <string>
#include <vector>

#include <toml++/toml.h>

#include "edgeplan/io/fields.hpp"
#include "edgeplan/io/profiles.hpp"
#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

// Parses a profile's TOML and applies the overrides for `profile`; fills `source` for Fields messages.
Result<toml::table> parse_profile(const ProfileText& text, const std::string& profile,
                                  const std::vector<Override>& overrides, FieldSource& source);

// Reads a parsed profile with `read`, turning a FieldError into an Error.
template <class T, class Read>
Result<T> read_profile(const ProfileText& text, const std::string& profile, const std::vector<Override>& overrides,
                       Read read) {
  FieldSource source;
  auto table = parse_profile(text, profile, overrides, source);
  if (!table) return table.error();
  try {
    Fields fields(*table, source, profile);
    T value = read(fields);
    fields.finish();
    return value;
  } catch (const FieldError& e) {
    return Error{e.what()};
  }
}

}  // namespace edgeplan::io
