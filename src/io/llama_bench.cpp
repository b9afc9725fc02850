#include "edgeplan/io/llama_bench.hpp"

#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgeplan/io/csv.hpp"
#include "edgeplan/io/fields.hpp"
#include "edgeplan/io/text.hpp"
#include "edgeplan/util/names.hpp"

namespace edgeplan::io {
namespace {

// One record as field name -> value text (JSON numbers are printed back to text).
using Record = std::map<std::string, std::string>;

struct Located {
  std::string where;
  Record fields;
};

Result<Record> record_of(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return Error{where + ": expected an object of llama-bench fields"};
  Record r;
  for (const auto& [key, value] : j.items()) {
    if (value.is_string()) {
      r[key] = value.get<std::string>();
    } else if (value.is_number() || value.is_boolean()) {
      r[key] = value.dump();
    }
  }
  return r;
}

// Hands each record to `each` as it is read (a record is not kept: a file of many rows costs one record);
// stops at the first error, of the file or of `each`.
using EachRecord = std::function<std::optional<Error>(const Located&)>;

std::optional<Error> records(std::string_view text, const std::string& display, const EachRecord& each) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return Error{display + ": no llama-bench results (the file is empty)"};
  if (text[first] == '[') {
    nlohmann::json all;
    try {
      all = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      return Error{fmt::format("{}: invalid JSON at byte {}", display, e.byte)};
    } catch (const nlohmann::json::out_of_range&) {  // a number past the double range: 1e999
      return Error{fmt::format("{}: invalid JSON: a number is out of range", display)};
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
      const std::string where = fmt::format("{}: record {}", display, i + 1);
      auto r = record_of(all[i], where);
      if (!r) return r.error();
      if (auto e = each({where, std::move(*r)})) return e;
    }
    return std::nullopt;
  }
  if (text[first] != '{') {
    return csv_records(text, display, [&](const CsvRecord& r) { return each({r.where, r.fields}); });
  }
  for (std::size_t i = 0; !text.empty(); ++i) {
    const std::string_view line = next_line(text);
    if (blank_line(line)) continue;
    const std::string where = fmt::format("{}:{}", display, i + 1);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      return Error{fmt::format("{}: invalid JSON at column {}", where, e.byte)};
    } catch (const nlohmann::json::out_of_range&) {
      return Error{fmt::format("{}: invalid JSON: a number is out of range", where)};
    }
    auto r = record_of(j, where);
    if (!r) return r.error();
    if (auto e = each({where, std::move(*r)})) return e;
  }
  return std::nullopt;
}

struct FieldReader {
  const Located& rec;

  Result<std::string> text(const std::string& key) const {
    auto it = rec.fields.find(key);
    if (it == rec.fields.end()) return Error{fmt::format("{}: missing field {}", rec.where, key)};
    return it->second;
  }

  Result<double> number(const std::string& key, bool whole) const {
    auto t = text(key);
    if (!t) return t.error();
    double v = 0;
    auto [p, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
    if (ec != std::errc() || p != t->data() + t->size() || !std::isfinite(v) || v < 0 ||
        (whole && v != std::floor(v))) {
      return Error{fmt::format("{}: field {} is not a {} ('{}')", rec.where, key,
                               whole ? "whole number >= 0" : "number >= 0", clipped(*t))};
    }
    if (v > kMaxMagnitude) {  // as in profiles: far above any real figure, and counts stay exact integers
      return Error{fmt::format("{}: field {} must be at most {:g} (got '{}')", rec.where, key, kMaxMagnitude, clipped(*t))};
    }
    return v;
  }
};

Result<BenchRow> bench_row(const Located& rec) {
  const FieldReader f{rec};
  BenchRow row;
  row.where = rec.where;
  auto model_type = f.text("model_type");
  if (!model_type) return model_type.error();
  row.model_type = *model_type;
  double* numbers[] = {&row.model_size_bytes, &row.model_n_params, &row.avg_tok_per_s};
  const char* number_keys[] = {"model_size", "model_n_params", "avg_ts"};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto given = rec.fields.find(number_keys[i]);
    if (i < 2 && rec.fields.contains("source") && given != rec.fields.end() && given->second.empty()) continue;
    auto v = f.number(number_keys[i], false);
    if (!v) return v.error();
    *numbers[i] = *v;
  }
  if (auto it = rec.fields.find("test"); it != rec.fields.end()) {
    if (it->second != "tg" && it->second != "pp") {
      return Error{fmt::format("{}: test must be tg (decode) or pp (prefill), not {}", rec.where, io::quoted(it->second))};
    }
    row.stated = it->second == "tg" ? BenchTest::decode : BenchTest::prefill;
  }
  std::uint64_t* counts[] = {&row.n_prompt, &row.n_gen};
  const char* count_keys[] = {"n_prompt", "n_gen"};
  for (std::size_t i = 0; i < 2; ++i) {
    if (row.stated && rec.fields.at(count_keys[i]).empty()) continue;  // not published
    auto v = f.number(count_keys[i], true);
    if (!v) return v.error();
    *counts[i] = static_cast<std::uint64_t>(*v);
  }
  if (rec.fields.contains("n_depth")) {
    auto v = f.number("n_depth", true);
    if (!v) return v.error();
    row.n_depth = static_cast<std::uint64_t>(*v);
  }
  if (rec.fields.contains("stddev_ts")) {
    auto v = f.number("stddev_ts", false);
    if (!v) return v.error();
    row.stddev_tok_per_s = *v;
  }
  if (auto it = rec.fields.find("backends"); it != rec.fields.end()) row.backends = it->second;
  if (auto it = rec.fields.find("type_k"); it != rec.fields.end()) row.type_k = it->second;
  if (auto it = rec.fields.find("type_v"); it != rec.fields.end()) row.type_v = it->second;
  if (auto it = rec.fields.find("device"); it != rec.fields.end()) row.device = it->second;
  if (auto it = rec.fields.find("runtime"); it != rec.fields.end()) row.runtime = it->second;
  if (auto it = rec.fields.find("model"); it != rec.fields.end()) row.model = it->second;
  if (auto it = rec.fields.find("source"); it != rec.fields.end()) row.source = it->second;
  row.format = model_type_format(row.model_type);
  if (auto it = rec.fields.find("format"); it != rec.fields.end() && !it->second.empty()) {
    auto ft = util::lookup_or_suggest(file_types(), it->second, [](const FileType& t) { return t.name; }, "file type");
    if (!ft) return Error{fmt::format("{}: format: {}", rec.where, ft.error().message)};
    row.format = *ft;
  }
  if (row.avg_tok_per_s <= 0) return Error{fmt::format("{}: avg_ts must be above 0", rec.where)};
  if (row.stated) {
    const bool decode = row.stated == BenchTest::decode;
    if ((decode ? row.n_prompt : row.n_gen) != 0) {
      return Error{fmt::format("{}: a {} test has no {}", rec.where, decode ? "tg" : "pp", decode ? "n_prompt" : "n_gen")};
    }
  } else if (row.n_prompt == 0 && row.n_gen == 0) {
    return Error{fmt::format("{}: n_prompt and n_gen are both 0", rec.where)};
  }
  return row;
}

}  // namespace

BenchTest BenchRow::kind(bool shaped) const {
  if (n_prompt == 0 && n_gen == 0) return stated == BenchTest::decode ? BenchTest::decode : BenchTest::not_fitted;
  return bench_test_kind(n_prompt, n_gen, n_depth, shaped);
}

std::string BenchRow::runtime_label() const {
  const std::string& name = runtime.empty() ? std::string("llama.cpp") : runtime;
  return backends.empty() ? name : fmt::format("{} {}", name, backends);
}

std::string BenchRow::test() const {
  if (stated && n_prompt == 0 && n_gen == 0) return stated == BenchTest::decode ? "tg" : "pp";
  std::string t;
  if (n_prompt > 0) t = fmt::format("pp{}", n_prompt);
  if (n_gen > 0) t += fmt::format("{}tg{}", t.empty() ? "" : "+", n_gen);
  if (n_depth > 0) t += fmt::format("@d{}", n_depth);
  return t;
}

Result<std::vector<BenchRow>> parse_llama_bench(std::string_view text, const std::string& display,
                                                std::size_t max_rows) {
  // A first pass reads the syntax of every record, so that a malformed record anywhere is reported before the
  // fields of any row; the second converts the records as they are read.
  if (auto e = records(text, display, [](const Located&) { return std::optional<Error>(); })) return *e;
  std::vector<BenchRow> out;
  auto error = records(text, display, [&](const Located& rec) -> std::optional<Error> {
    if (out.size() == max_rows) {
      return Error{fmt::format("{}: more than {} llama-bench results; edgeplan reads at most {} (split the file)",
                               rec.where, max_rows, max_rows)};
    }
    auto row = bench_row(rec);
    if (!row) return row.error();
    out.push_back(std::move(*row));
    return std::nullopt;
  });
  if (error) return *error;
  if (out.empty()) return Error{display + ": no llama-bench results (no test rows)"};
  return out;
}

const FileType* model_type_format(std::string_view model_type) {
  // "<arch> <size> <file type>": the file type is what follows the second space.
  for (int skip = 0; skip < 2; ++skip) {
    const auto space = model_type.find(' ');
    if (space == std::string_view::npos) return nullptr;
    model_type.remove_prefix(space + 1);
  }
  std::string name(model_type);
  for (const char* prefix : {"mostly ", "all "}) {
    if (name.starts_with(prefix)) name.erase(0, std::string_view(prefix).size());
  }
  for (const auto& [suffix, letter] : {std::pair{" - Small", "_S"}, {" - Medium", "_M"}, {" - Large", "_L"}}) {
    if (name.ends_with(suffix)) name.replace(name.size() - std::string_view(suffix).size(), std::string::npos, letter);
  }
  return find_file_type(name);
}

}  // namespace edgeplan::io
