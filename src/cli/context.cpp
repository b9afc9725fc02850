// What every command runs with (Context: the profile search path and --set overrides) and the small helpers
// command files share.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command.hpp"
#include "edgeplan/util/parallel.hpp"
#include "edgeplan/core/limits.hpp"
#include "edgeplan/io/inputs.hpp"
#include "edgeplan/io/model_file.hpp"
#include "edgeplan/io/model_store.hpp"
#include "edgeplan/io/runtime_class.hpp"
#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/text.hpp"
#include "edgeplan/io/warnings.hpp"
#include "edgeplan/util/names.hpp"
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

DeviceSpec Context::device(const std::string& name, io::Node& inputs, const std::string& runtime) const {
  const io::ProfileText text = find("devices", name);
  DeviceSpec d = unwrap(io::load_device(text, overrides_));
  if (d.storage && !d.storage->storage_class.empty()) {
    d.storage = with_storage_class(*d.storage, unwrap(io::load_storage_class(find("storage", d.storage->storage_class))));
  }
  const std::string own = d.provenance ? d.provenance->runtime : "";
  // Its own figures: a device without runtime classes, or one asked for the runtime it was itself fitted to.
  if (d.runtimes.empty() || (!runtime.empty() && !own.empty() && util::iequal(runtime, own))) {
    if (!runtime.empty() && !util::iequal(runtime, own)) {
      throw UsageError(fmt::format("--runtime '{}': {} names no runtime classes, and its own figures are {}", runtime,
                                   d.name, own.empty() ? "not a runtime's" : "of " + own));
    }
    return recorded(std::move(d), text, "device", inputs);
  }
  std::vector<RuntimeClass> classes;
  for (const std::string& c : d.runtimes) {
    const io::ProfileText class_text = find("runtimes", c);
    classes.push_back(unwrap(io::load_runtime_class(class_text)));
  }
  const auto chosen = runtime.empty() ? classes.begin() : std::find_if(classes.begin(), classes.end(),
      [&](const RuntimeClass& c) { return util::iequal(runtime, c.name) || util::iequal(runtime, c.runtime); });
  if (chosen == classes.end()) {
    std::vector<std::string> names;
    for (const RuntimeClass& c : classes) names.push_back(c.runtime);
    if (!own.empty()) names.push_back(own);
    // The one runtime whose name holds the word asked for ("sycl": llama.cpp SYCL); none when several do (the list
    // says them); else the nearest name.
    std::vector<std::string> holding;
    for (const std::string& n : names) {
      for (std::size_t at = 0; at + runtime.size() <= n.size(); ++at) {
        if (util::iequal(std::string_view(n).substr(at, runtime.size()), runtime)) {
          holding.push_back(n);
          break;
        }
      }
    }
    throw UsageError(fmt::format("--runtime '{}': {} runs {}{}", runtime, d.name, fmt::join(names, ", "),
                                 holding.size() == 1 ? fmt::format("; did you mean '{}'?", holding.front())
                                 : holding.empty()   ? util::did_you_mean(runtime, names)
                                                     : std::string()));
  }
  DeviceSpec out = recorded(with_runtime_class(std::move(d), *chosen), text, "device", inputs);
  io::Node j{{"name", chosen->name}, {"runtime", chosen->runtime}};
  io::Node fitted_on = io::Node::array();
  for (const std::string& f : chosen->fitted_on) fitted_on.push_back(f);
  j["fitted_on"] = std::move(fitted_on);
  inputs["runtime"] = std::move(j);
  return out;
}

io::ProfileText Context::model_text(const std::string& name) const {
  Result<std::optional<io::StoredModel>> found = io::find_stored_model(name);
  if (!found) {  // a store name it does not hold: perhaps a profile's name mistyped (llama3.2:3b for llama-3.2-3b)
    std::vector<std::string> names;
    for (const io::ProfileText& p : io::list_profiles("models", path_)) names.push_back(p.name);
    throw UsageError(found.error().message + util::did_you_mean(name, names));
  }
  // `--set model.generic_of=ARCH` reads a GGUF file by the generic rule even when edgeplan models its architecture
  // in detail (to compare the two; tests/llamacpp/check-generic).
  const bool generic = std::ranges::any_of(overrides_, [](const io::Override& o) {
    return o.profile == "model" && o.key == "generic_of";
  });
  if (const std::optional<io::StoredModel>& stored = *found) {
    io::ProfileText text = unwrap(io::model_file_profile(stored->path, stored->name, generic));
    text.display = stored->display;
    return text;
  }
  return io::is_model_file(name) ? unwrap(io::model_file_profile(name, "", generic)) : find("models", name);
}

ModelSpec Context::model(const io::ProfileText& text, io::Node& inputs) const {
  return recorded(unwrap(io::load_model(text, overrides_)), text, "model", inputs);
}

ModelSpec Context::model(const std::string& name, io::Node& inputs) const { return model(model_text(name), inputs); }

std::vector<std::string> split_list(const std::string& text, const std::string& option) {
  std::optional<std::vector<std::string>> items = util::split_list(text);
  if (!items) throw UsageError(fmt::format("{} '{}': empty item in the list", option, text));
  return std::move(*items);
}

unsigned thread_count(unsigned asked, std::string& note) {
  const unsigned hardware = util::worker_count();
  if (asked == 0) return hardware;
  if (asked <= hardware) return asked;
  note = fmt::format("--threads {}: this machine runs {} hardware threads; {} are used", asked, hardware, hardware);
  return hardware;
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


const FileType& need_format(const std::string& name) {
  return *need("--quant", util::lookup_or_suggest(file_types(), name, [](const FileType& t) { return t.name; }, "format"));
}

std::string quant_or_file_format(const std::string& quant, const ModelSpec& m, std::string_view fallback) {
  if (!quant.empty()) return quant;
  return m.file_format.value_or(std::string(fallback));
}

std::vector<std::string> requantize_note(const ModelSpec& m, const FileType& ft) {
  if (!m.file_format || *m.file_format == ft.name) return {};
  return {fmt::format("{} is a {} file: {} re-quantizes its shape with llama.cpp's rules, a what-if (without --quant "
                      "the figures are the file's own tensors)",
                      m.name, *m.file_format, ft.name)};
}

std::string kv_type_help(std::string_view what) {
  std::vector<std::string_view> names;
  for (const KvType& t : kv_types()) names.push_back(t.name);
  return fmt::format("{}: {} (int8, int4: the reference's idealised types), or k=TYPE,v=TYPE", what,
                     fmt::join(names, ", "));
}

KvCacheType need_kv_type(const std::string& text, const ModelSpec& model) {
  auto one = [](std::string_view name) -> const KvType& {
    return *need("--kv-type", util::lookup_or_suggest(kv_types(), name, [](const KvType& t) { return t.name; }, "cache type"));
  };
  KvCacheType t;
  if (text.find('=') == std::string::npos) {
    t = one(text);
  } else {
    for (const std::string& item : split_list(text, "--kv-type")) {
      const std::size_t eq = item.find('=');
      const std::string side = eq == std::string::npos ? item : item.substr(0, eq);
      const KvType** slot = side == "k" ? &t.k : side == "v" ? &t.v : nullptr;
      if (!slot || eq == std::string::npos || *slot) {
        throw UsageError(fmt::format("--kv-type: '{}' is not a type or k=TYPE,v=TYPE, e.g. k=q8_0,v=q4_0", text));
      }
      *slot = &one(item.substr(eq + 1));
    }
    if (!t.k || !t.v) throw UsageError(fmt::format("--kv-type {}: give both k=TYPE and v=TYPE", text));
  }
  if (const std::optional<std::string> why = kv_cache_refusal(model, t)) {
    throw UsageError(fmt::format("--kv-type {}: llama.cpp refuses it for {}: {}", text, model.name, *why));
  }
  return t;
}

}  // namespace edgeplan::cli
