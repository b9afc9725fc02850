// Reading CSV text (RFC 4180 quoting: a quoted field may hold commas, and "" stands for a quote), the one reader
// of comma-separated records with a header row: llama-bench's -o csv output and the published measurements
// (profiles/measurements/*.csv) are read through it. Request traces are not: their reader takes no quotes and
// streams a file of any size (io/route.hpp).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

// Splits one CSV line into its fields; `where` ("file.csv:4") names it in the error of an unterminated quote.
Result<std::vector<std::string>> csv_fields(std::string_view line, const std::string& where);

// The next line of `text` (without its newline), removed from the front of text.
std::string_view next_line(std::string_view& text);

// Whether a line holds nothing but blanks (spaces, tabs, a carriage return).
bool blank_line(std::string_view line);

// One data row of a CSV text: its header's names to its fields, and where it stands ("file.csv:4").
struct CsvRecord {
  std::string where;
  std::map<std::string, std::string> fields;
};

// Hands each data row of `text` to `each` in order (blank lines skipped), the first non-blank line being the
// header; stops at the first error, of the text (a row with another number of fields than the header, a header
// that names a column twice) or of `each`. `display` names the text in messages.
std::optional<Error> csv_records(std::string_view text, const std::string& display,
                                 const std::function<std::optional<Error>(const CsvRecord&)>& each);

}  // namespace edgeplan::io
