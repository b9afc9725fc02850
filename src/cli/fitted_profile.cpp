// The fitted device profile of `edgeplan calibrate` (cli/fitted_profile.hpp).
#include <array>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cli/fitted_profile.hpp"
#include "edgeplan/io/profile_reader.hpp"
#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/io/toml_parse.hpp"
#include "edgeplan/io/toml_text.hpp"

namespace edgeplan::cli {
namespace {

std::vector<std::string> key_path(const std::string& key) {
  std::vector<std::string> path;
  for (std::size_t from = 0;;) {
    const std::size_t dot = key.find('.', from);
    path.push_back(key.substr(from, dot - from));
    if (dot == std::string::npos) return path;
    from = dot + 1;
  }
}

}  // namespace

std::string fitted_profile(const Context& ctx, const std::string& device, const DeviceSpec& before,
                           const DeviceSpec& fitted, const std::string& results) {
  io::FieldSource source;
  const io::ProfileText text = ctx.find("devices", device);
  toml::table table = unwrap(io::parse_profile(text, "device", ctx.overrides(), source));
  const bool has_provenance = unwrap(io::parse_toml(text.text, text.display)).contains("provenance");
  const bool refitted = fitted.provenance != before.provenance;
  std::vector<std::vector<std::string>> paths;
  for (const io::Override& o : ctx.overrides()) {  // the fit's [provenance] replaces --set provenance.*
    if (o.profile == "device" && !(refitted && o.key.starts_with("provenance."))) paths.push_back(key_path(o.key));
  }
  std::vector<std::string> names;
  std::vector<io::TomlEdit> edits;
  // The fitted keys, in the profile's units as its schema rows give them.
  // bandwidth_gbps and prefill.tflops change only for a measured profile (raise_measured_peaks).
  std::vector<std::string> keys{"bandwidth_gbps", "utilization", "per_token_overhead_ms"};
  for (const auto& row : io::schema::section(io::schema::device_schema(), "prefill").rows) {
    keys.push_back(fmt::format("prefill.{}", row.key));
  }
  for (const std::string& key : keys) {
    const auto was = io::schema::held(io::schema::device_schema(), key, before);
    const auto now = io::schema::held(io::schema::device_schema(), key, fitted);
    const std::vector<std::string> path = key_path(key);
    toml::table* in = path.size() == 1 ? &table : table[path.front()].as_table();
    if (!in || !now || (was && *was == *now)) continue;
    in->insert_or_assign(path.back(), io::schema::number(*now));
    paths.push_back(path);
    names.push_back(key);
  }
  // [provenance] as the device schema writes it: edited key by key into the profile's section, or appended.
  const auto& rows = io::schema::section(io::schema::device_schema(), "provenance");
  constexpr std::string_view kMethodComment = "fitted by `edgeplan calibrate`";
  constexpr std::array<std::pair<std::string_view, std::string_view>, 1> kComments{{{"method", kMethodComment}}};
  io::TomlText provenance;
  if (refitted) io::schema::write_rows(rows, fitted, provenance, kComments);
  const toml::table written = unwrap(io::parse_toml(provenance.text(), "[provenance]"));
  if (refitted && has_provenance) {
    for (const auto& row : rows.rows) {
      if (const toml::node* v = written.at_path(fmt::format("provenance.{}", row.key)).node()) {
        edits.push_back({{"provenance", std::string(row.key)}, v, row.key == "method" ? std::string(kMethodComment) : ""});
      }
    }
  }
  for (const std::vector<std::string>& path : paths) {
    const toml::node* node = &table;
    for (const std::string& key : path) node = node->as_table()->get(key);
    edits.push_back({path, node});
  }
  std::string edited = unwrap(io::edit_toml(text.text, text.display, edits));
  if (refitted && !has_provenance) {
    if (!edited.empty() && !edited.ends_with('\n')) edited += '\n';
    edited += provenance.text();
  }
  std::string what = names.empty() ? "no fitted value changed" : fmt::format("{} fitted", fmt::join(names, ", "));
  if (refitted) what += "; [provenance] records the fit";
  std::string out = io::TomlText().comment(fmt::format("{} calibrated by `edgeplan calibrate` on {}: {}.",
                                                     fitted.name, results, what)).text() + edited;
  unwrap(io::load_device(io::ProfileText{text.name, text.display, text.origin, out}, {}));  // it loads back
  return out;
}

}  // namespace edgeplan::cli
