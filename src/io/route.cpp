#include "edgeplan/io/route.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "edgeplan/util/names.hpp"
#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/io/text.hpp"
#include "edgeplan/util/text.hpp"
#include "edgeplan/io/profile_reader.hpp"

namespace edgeplan::io {
namespace {

const std::array<std::string, 6> kColumnNames{"arrival_s", "name", "privacy", "input_tok", "output_tok", "slo_s"};

}  // namespace

Result<CloudSpec> load_cloud(const ProfileText& text, const std::vector<Override>& overrides) {
  return read_profile<CloudSpec>(text, "cloud", overrides, [&](Fields& f) {
    CloudSpec c;
    c.name = text.name;
    schema::read_schema(schema::cloud_schema(), f, c);
    return c;
  });
}

Result<std::vector<RouteRequest>> load_requests(const ProfileText& text) {
  return read_profile<std::vector<RouteRequest>>(text, "requests", {}, [&](Fields& f) {
    f.optional_string("description");
    std::vector<RouteRequest> out;
    for (Fields& e : f.tables("request")) {
      RouteRequest r;
      schema::read_schema(schema::request_schema(), e, r);
      e.finish();
      out.push_back(std::move(r));
    }
    if (out.empty()) f.fail({}, "has no [[request]] tables");
    return out;
  });
}

Node to_json(const CloudSpec& c) {
  Node j = Node::object();
  schema::echo(schema::cloud_schema(), c, j);
  return j;
}

std::optional<RecordFormat> record_format(const std::string& path) {
  if (path.ends_with(".csv")) return RecordFormat::csv;
  if (path.ends_with(".jsonl") || path.ends_with(".ndjson")) return RecordFormat::jsonl;
  return std::nullopt;
}

RecordReader::RecordReader(std::istream& in, std::string display, RecordFormat format, bool trace, bool skip_bad)
    : in_(&in), display_(std::move(display)), format_(format), trace_(trace), skip_bad_(skip_bad) {}

std::optional<std::string> RecordReader::column_of(std::string_view key, Column& c) const {
  for (std::size_t i = 0; i < kColumnNames.size(); ++i) {
    if (kColumnNames[i] != key) continue;
    c = static_cast<Column>(i);
    if (c == arrival_s && !trace_) return "arrival_s belongs in a trace (--trace), not in a request list";
    return std::nullopt;
  }
  std::vector<std::string> known(kColumnNames.begin() + (trace_ ? 0 : 1), kColumnNames.end());
  return fmt::format("unknown column '{}'{}", clipped(key), util::did_you_mean(key, known));
}

Result<bool> RecordReader::header(std::string_view text) {
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const std::string_view key = text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    Column c = ignored;
    if (auto e = column_of(key, c)) return Error{fmt::format("{}:{}: {}", display_, line_, *e)};
    for (Column seen : columns_) {
      if (seen == c) return Error{fmt::format("{}:{}: column '{}' appears twice", display_, line_, clipped(key))};
    }
    columns_.push_back(c);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  for (std::size_t i = trace_ ? 0 : 1; i < kColumnNames.size(); ++i) {
    const Column c = static_cast<Column>(i);
    if (c == name && trace_) continue;
    if (std::find(columns_.begin(), columns_.end(), c) == columns_.end()) {
      return Error{fmt::format("{}:{}: the header has no column {}", display_, line_, kColumnNames[i])};
    }
  }
  return true;
}

std::optional<std::string> RecordReader::set_number(Column c, double v, RouteRequest& r) {
  switch (c) {
    case arrival_s:
      if (v < 0) return fmt::format("arrival_s must be 0 or more (got {})", v);
      r.arrival_s = v;
      return std::nullopt;
    case input_tok:
    case output_tok: {
      const double min = c == input_tok ? 0 : 1;
      if (v != std::floor(v) || v < min || v > limits::kRequestTokens) {
        return fmt::format("{} must be a whole number from {} to {} (got {})", kColumnNames[c], min,
                           limits::kRequestTokens, v);
      }
      (c == input_tok ? r.input_tok : r.output_tok) = v;
      return std::nullopt;
    }
    case slo_s:
      if (v <= 0) return fmt::format("slo_s must be greater than 0 (got {})", v);
      r.slo_s = v;
      return std::nullopt;
    default:
      return fmt::format("{} must be text, not a number", kColumnNames[c]);
  }
}

std::optional<std::string> RecordReader::set_text(Column c, std::string_view v, RouteRequest& r) {
  if (c == name) {
    if (v.empty() && !trace_) return std::string("name is empty");
    r.name.assign(v);
    return std::nullopt;
  }
  if (c == privacy) {
    if (auto p = parse_privacy(v)) {
      r.privacy = *p;
      return std::nullopt;
    }
    return fmt::format("privacy must be one of confidential, internal, public (got '{}'){}", clipped(v),
                       util::did_you_mean(v, privacy_names()));
  }
  return fmt::format("{} must be a number (got '{}')", kColumnNames[c], clipped(v));
}

std::optional<std::string> RecordReader::parse_csv(std::string_view text, RouteRequest& r) {
  fields_.clear();
  for (std::size_t start = 0;;) {
    const auto comma = text.find(',', start);
    fields_.push_back(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (fields_.size() != columns_.size()) {
    return fmt::format("expected {} fields as in the header, got {}", columns_.size(), fields_.size());
  }
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    const std::string_view field = fields_[i];
    const Column c = columns_[i];
    if (field.find('"') != std::string_view::npos) return std::string("quoted fields are not supported");
    std::optional<std::string> e;
    if (c == name || c == privacy) {
      e = set_text(c, field, r);
    } else {
      if (const std::optional<double> v = util::parse_number(field)) {
        e = set_number(c, *v, r);
      } else {
        e = fmt::format("{} must be a number (got '{}')", kColumnNames[c], clipped(field));
      }
    }
    if (e) return e;
  }
  return std::nullopt;
}

std::optional<std::string> RecordReader::parse_jsonl(std::string_view text, RouteRequest& r) {
  // nlohmann keeps the last of two equal keys; a line that gives a column twice is refused, as in CSV.
  std::vector<std::string> keys;
  std::string twice;
  const auto note_key = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::key && depth == 1 && twice.empty()) {
      const auto& k = parsed.get_ref<const std::string&>();
      if (std::find(keys.begin(), keys.end(), k) != keys.end()) twice = k;
      keys.push_back(k);
    }
    return true;
  };
  const nlohmann::json j = nlohmann::json::parse(text, note_key, false);
  if (j.is_discarded()) return std::string("invalid JSON");
  if (!j.is_object()) return std::string("expected a JSON object");
  if (!twice.empty()) return fmt::format("column '{}' appears twice", clipped(twice));
  seen_ = 0;
  for (const auto& [key, value] : j.items()) {
    Column c = ignored;
    if (auto e = column_of(key, c)) return e;
    seen_ |= 1u << c;
    std::optional<std::string> e;
    if (value.is_number()) {
      e = set_number(c, value.get<double>(), r);
    } else if (value.is_string()) {
      e = set_text(c, value.get_ref<const std::string&>(), r);
    } else {
      e = fmt::format("{} must be {}, not {}", clipped(key), c == name || c == privacy ? "a string" : "a number", value.type_name());
    }
    if (e) return e;
  }
  for (std::size_t i = trace_ ? 0 : 1; i < kColumnNames.size(); ++i) {
    if (i == name && trace_) continue;
    if (!(seen_ & (1u << i))) return "missing " + kColumnNames[i];
  }
  return std::nullopt;
}

Result<bool> RecordReader::next(RouteRequest& r) {
  while (std::getline(*in_, buffer_)) {
    ++line_;
    std::string_view text = buffer_;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (format_ == RecordFormat::csv && columns_.empty()) {
      auto h = header(text);
      if (!h) return h.error();
      continue;
    }
    r.name.clear();
    const auto error = format_ == RecordFormat::csv ? parse_csv(text, r) : parse_jsonl(text, r);
    if (!error) return true;
    const std::string message = fmt::format("{}:{}: {}", display_, line_, *error);
    if (!skip_bad_) return Error{message};
    if (skipped_++ == 0) first_skipped_ = message;
  }
  if (in_->bad()) return Error{fmt::format("{}: read error after line {}", display_, line_)};
  if (format_ == RecordFormat::csv && columns_.empty()) return Error{display_ + ": empty file: expected a header line"};
  return false;
}

void write_outcome_header(std::ostream& out) {
  out << "line,name,arrival_s,privacy,input_tok,output_tok,slo_s,destination,kind,wait_s,latency_s,slo_met,"
         "throttled_s,cost_usd,energy_j,reason\n";
}

void write_outcome(std::ostream& out, std::uint64_t line, const RouteRequest& r, const TraceOutcome& o,
                   const std::vector<CloudSpec>& clouds) {
  const RouteDecision& d = o.decision;
  const CloudSpec* cloud = d.on_device() ? nullptr : &clouds[static_cast<std::size_t>(d.cloud)];
  fmt::print(out, "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", line, csv_field(r.name), r.arrival_s,
             to_string(r.privacy), r.input_tok, r.output_tok, r.slo_s, cloud ? cloud->name : "device",
             cloud ? cloud_kind(*cloud) : "device", o.wait_s, d.latency_s, d.slo_met,
             d.on_device() ? o.run.throttled_s : 0.0, o.cost_usd, o.energy_j,
             csv_field(reason_text(d.reason, r.privacy, o.run.throttled())));
}

}  // namespace edgeplan::io
