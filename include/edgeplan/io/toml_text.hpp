// TOML that edgeplan writes (`import`, `bench --write-profile`, `calibrate --write-profile`): every key and value is
// formatted and escaped by toml++ (a name holding `"`, `\` or a newline reads back as written), in the order
// given, with comments on lines of their own or after a value; and edits of a profile's text that replace only
// the changed values, so its comments and layout survive.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

class TomlText {
 public:
  // "# text" on a line of its own; control characters (a newline too) are escaped, so it stays one line.
  TomlText& comment(std::string_view text);
  // A blank line, then the header of table `path` ("[formats.Q8_0]").
  TomlText& table(const std::vector<std::string>& path);
  // `key = value`, then "  # comment" padded to a column when a comment is given.
  TomlText& set(std::string_view key, const toml::node& value, std::string_view comment = {});
  TomlText& set(std::string_view key, std::string_view value, std::string_view comment = {});
  TomlText& set(std::string_view key, double value, std::string_view comment = {});
  TomlText& set(std::string_view key, std::int64_t value, std::string_view comment = {});
  TomlText& set(std::string_view key, bool value, std::string_view comment = {});

  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// One value as TOML text, as TomlText writes it ("0.85", "\"a\\\"b\"").
std::string toml_value_text(const toml::node& value);

// A key of a table, bare or quoted as TOML needs ("Q8_0", "\"a b\"").
std::string toml_key_text(std::string_view key);

// An edit of a profile: the value at `path` (keys from the root) becomes `value`; with a `comment`, the
// comment after the value on its line becomes it (the old one, which described the old value, is dropped).
struct TomlEdit {
  std::vector<std::string> path;
  const toml::node* value;
  std::string comment = {};
};

// `text` (a TOML document; `display` names it in messages) with each edit applied in place: an existing value's
// text is replaced, a missing key is added after the last value of its table, and every other byte is kept.
// Fails when the text is not TOML, or a key to add belongs to an inline table or to a table without values.
Result<std::string> edit_toml(std::string_view text, const std::string& display, const std::vector<TomlEdit>& edits);

}  // namespace edgeplan::io
