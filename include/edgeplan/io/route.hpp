// Reading what `route` needs: cloud profiles (clouds/NAME.toml), request lists (requests/NAME.toml, or a
// CSV / JSON Lines file) and traces (CSV / JSON Lines, streamed one line at a time so a trace of any length
// runs in constant memory), and writing the per-request CSV of a trace. Schema: docs/profiles.md.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "edgeplan/util/result.hpp"
#include "edgeplan/core/route.hpp"
#include "edgeplan/io/profiles.hpp"
#include "edgeplan/io/report.hpp"

namespace edgeplan::io {

Result<CloudSpec> load_cloud(const ProfileText& text, const std::vector<Override>& overrides);
// A requests profile: [[request]] tables with name, privacy, input_tok, output_tok, slo_s.
Result<std::vector<RouteRequest>> load_requests(const ProfileText& text);

Node to_json(const CloudSpec& c);

enum class RecordFormat { csv, jsonl };
// By extension: .csv or .jsonl / .ndjson; nullopt otherwise.
std::optional<RecordFormat> record_format(const std::string& path);

// Reads requests one line at a time. CSV: a header line naming the columns, then one request per line;
// JSON Lines: one object per line. Columns: arrival_s (a trace's, required there and refused elsewhere),
// name (required in a request list, optional in a trace), privacy, input_tok, output_tok, slo_s. Blank
// lines are ignored. A malformed line is an error naming file:line, or with skip_bad counted and skipped.
class RecordReader {
 public:
  RecordReader(std::istream& in, std::string display, RecordFormat format, bool trace, bool skip_bad);

  // The next request into r: true, or false at the end of the input; an Error for a malformed line.
  Result<bool> next(RouteRequest& r);
  std::uint64_t line() const { return line_; }        // line of the last request read
  std::uint64_t skipped() const { return skipped_; }  // malformed lines skipped
  const std::string& first_skipped() const { return first_skipped_; }  // the message of the first one

 private:
  enum Column : int { arrival_s, name, privacy, input_tok, output_tok, slo_s, ignored };
  Result<bool> header(std::string_view text);
  std::optional<std::string> parse_csv(std::string_view text, RouteRequest& r);
  std::optional<std::string> parse_jsonl(std::string_view text, RouteRequest& r);
  std::optional<std::string> set_number(Column c, double v, RouteRequest& r);
  std::optional<std::string> set_text(Column c, std::string_view v, RouteRequest& r);
  std::optional<std::string> column_of(std::string_view key, Column& c) const;

  std::istream* in_;
  std::string display_;
  RecordFormat format_;
  bool trace_;
  bool skip_bad_;
  std::string buffer_;
  std::vector<Column> columns_;  // CSV: the header's columns in order
  std::vector<std::string_view> fields_;  // CSV: the fields of the current line
  std::uint64_t line_ = 0;
  std::uint64_t skipped_ = 0;
  std::string first_skipped_;
  unsigned seen_ = 0;  // bit per Column set on the current line
};

// The per-request CSV of a trace.
void write_outcome_header(std::ostream& out);
void write_outcome(std::ostream& out, std::uint64_t line, const RouteRequest& r, const TraceOutcome& o,
                   const std::vector<CloudSpec>& clouds);

}  // namespace edgeplan::io
