// What every command runs with (Context: the profile search path and --set overrides) and the small helpers
// command files share.
#include <cmath>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "edgeplan/core/limits.hpp"
#include "edgeplan/io/inputs.hpp"
#include "edgeplan/io/model_file.hpp"
#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/text.hpp"
#include "edgeplan/io/warnings.hpp"
#include "edgeplan/util/text.hpp"

namespace edgeplan::cli {
namespace {

// The profiles a --set key may start with.
const std::vector<std::string> kOverrideProfiles{"device", "model", "cloud"};

}  // namespace

Context::Context(const CommonOptions& options) : path_(unwrap(io::default_search_path(options.profile_dirs))) {
  overrides_ = unwrap(io::parse_overrides(options.sets, kOverrideProfiles));
  const io::Format* format = io::find_format(options.format);
  charts_ = format && format->draws;
}

io::ProfileText Context::find(const std::string& kind, const std::string& name) const {
  io::ProfileText text = unwrap(io::find_profile(kind, name, path_));
  if (!text.shadows.empty()) io::warn(fmt::format("{} is read from {}, which shadows {}", name, text.display, text.shadows));
  return text;
}

namespace {

// Records a loaded profile under inputs[key]: its name, where it came from, and the values used.
template <class Spec>
Spec recorded(Spec spec, const io::ProfileText& text, const char* key, io::Node& inputs) {
  io::Node j = {{"name", spec.name}, {"source", text.display}};
  j.update(io::to_json(spec));
  inputs[key] = std::move(j);
  return spec;
}

}  // namespace

DeviceSpec Context::device(const std::string& name, io::Node& inputs) const {
  const io::ProfileText text = find("devices", name);
  return recorded(unwrap(io::load_device(text, overrides_)), text, "device", inputs);
}

ModelSpec Context::model(const std::string& name, io::Node& inputs) const {
  const io::ProfileText text = io::is_model_file(name) ? unwrap(io::model_file_profile(name)) : find("models", name);
  return recorded(unwrap(io::load_model(text, overrides_)), text, "model", inputs);
}

std::vector<std::string> split_list(const std::string& text, const std::string& option) {
  std::optional<std::vector<std::string>> items = util::split_list(text);
  if (!items) throw UsageError(fmt::format("{} '{}': empty item in the list", option, text));
  return std::move(*items);
}

std::string with_thousands(std::uint64_t v) { return io::group_digits(std::to_string(v)); }

std::vector<std::uint64_t> chart_contexts(std::uint64_t reach) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t c = 1024;; c *= 2) {
    out.push_back(c);
    if (c >= reach || c >= (std::uint64_t{1} << 24)) return out;
  }
}

std::string rounded_with_thousands(double v) {
  if (!std::isfinite(v)) return fmt::format("{}", v);
  return (v < 0 ? "-" : "") + io::group_digits(fmt::format("{:.0f}", std::abs(v)));
}

double parse_number(const std::string& text, const std::string& what) {
  const std::optional<double> v = util::parse_number(text);
  if (!v) throw UsageError(fmt::format("{}: '{}' is not a number", what, text));
  return *v;
}
void add_runtime_options(Options& opts, RuntimeFlags& f) {
  opts.add(Opt::ubatch, f.ubatch).positive();
  opts.add(Opt::flash_attn, f.flash_attn).show_default();
  opts.add(Opt::parallel, f.parallel).show_default().range(1, 256);
  opts.add(Opt::no_mmap, f.no_mmap);
}

RuntimeOptions runtime_options(const RuntimeFlags& f, DeviceSpec& device) {
  if (f.ubatch) device.kv_cache.ubatch_tokens = *f.ubatch;
  return runtime_options(f);
}

RuntimeOptions runtime_options(const RuntimeFlags& f) {
  RuntimeOptions o;
  const std::optional<FlashAttn> fa = find_flash_attn(f.flash_attn);
  if (!fa) throw UsageError(fmt::format("--flash-attn: '{}' is not auto, on or off", f.flash_attn));
  o.flash_attn = *fa;
  o.parallel = f.parallel;
  o.mmap = !f.no_mmap;
  return o;
}

const DeviceSpec& with_ubatch(const RuntimeFlags& f, const DeviceSpec& d, DeviceSpec& copy) {
  if (!f.ubatch) return d;
  copy = d;
  copy.kv_cache.ubatch_tokens = *f.ubatch;
  return copy;
}

void runtime_results(const RuntimeBuffers& b, const RuntimeOptions& o, const DeviceSpec& device, io::Node& results) {
  results["compute_bytes"] = io::Node::count(b.compute_bytes);
  results["output_bytes"] = io::Node::count(b.output_bytes);
  results["repack_bytes"] = io::Node::count(b.repack_bytes);
  results["amx_bytes"] = io::Node::count(b.amx_bytes);
  results["unmapped_bytes"] = io::Node::count(b.unmapped_bytes);
  results["runtime_bytes"] = io::Node::count(b.added_bytes);
  results["flash_attn"] = b.flash_attn;
  results["parallel"] = o.parallel;
  results["ubatch"] = device.kv_cache.ubatch_tokens;
}

}  // namespace edgeplan::cli
