#include "edgeplan/io/profiles.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "edgeplan/io/embedded.hpp"
#include "edgeplan/io/input_file.hpp"
#include "edgeplan/io/model_file.hpp"
#include "edgeplan/util/names.hpp"
#include "edgeplan/io/text.hpp"
#include "edgeplan/io/toml_parse.hpp"
#include "edgeplan/io/warnings.hpp"

namespace fs = std::filesystem;

namespace edgeplan::io {
namespace {

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 5 && s.ends_with(".toml"));
}

std::string singular(const std::string& kind) { return kind.ends_with("s") ? kind.substr(0, kind.size() - 1) : kind; }

Result<std::string> read_profile_text(const fs::path& p) { return read_input(p, kMaxProfileBytes, "a TOML profile"); }

}  // namespace

Result<SearchPath> default_search_path(const std::vector<std::string>& flag_dirs) {
  SearchPath p;
  std::error_code ec;
  for (const std::string& dir : flag_dirs) {
    if (!fs::is_directory(dir, ec)) return Error{fmt::format("--profiles {}: no such directory", dir)};
    p.dirs.push_back(dir);
  }
  if (const char* env = std::getenv("EDGEPLAN_PROFILE_PATH")) {
    std::string_view rest = env;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const std::string dir(rest.substr(0, colon));
      if (!dir.empty() && fs::is_directory(dir, ec)) {
        p.dirs.push_back(dir);
      } else if (!dir.empty()) {
        warn(fmt::format("EDGEPLAN_PROFILE_PATH: {} is not a directory; it is skipped", dir));
      }
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  p.user_dirs = p.dirs.size();
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path share = exe.parent_path().parent_path() / EDGEPLAN_SHARE_SUBDIR;
    if (fs::is_directory(share, ec)) p.dirs.push_back(share.string());
  }
  return p;
}

std::string resolve_beside(const std::string& name_or_path, const ProfileText& from) {
  if (from.origin == "builtin" || !(looks_like_path(name_or_path) || is_model_file(name_or_path))) return name_or_path;
  const fs::path p(name_or_path);
  if (p.is_absolute()) return name_or_path;
  return (fs::path(from.display).parent_path() / p).string();
}

Result<ProfileText> find_profile(const std::string& kind, const std::string& name_or_path, const SearchPath& path) {
  if (name_or_path.empty()) return Error{"empty " + singular(kind) + " name"};
  if (looks_like_path(name_or_path)) {
    auto text = read_profile_text(name_or_path);
    if (!text) return Error{fmt::format("cannot read {} profile '{}': {}", singular(kind), name_or_path, text.error().message)};
    return ProfileText{fs::path(name_or_path).stem().string(), name_or_path, name_or_path, std::move(*text)};
  }
  const std::string wanted = kind + "/" + name_or_path + ".toml";
  const auto builtin = std::find_if(embedded_profiles().begin(), embedded_profiles().end(),
                                    [&](const EmbeddedFile& f) { return f.path == wanted; });
  for (std::size_t i = 0; i < path.dirs.size(); ++i) {
    const fs::path file = fs::path(path.dirs[i]) / kind / (name_or_path + ".toml");
    std::error_code ec;
    if (!fs::exists(file, ec)) continue;
    auto text = read_profile_text(file);
    if (!text) return Error{fmt::format("cannot read {} profile '{}': {}", singular(kind), file.string(), text.error().message)};
    const bool shadows = i < path.user_dirs && builtin != embedded_profiles().end();
    return ProfileText{name_or_path, file.string(), path.dirs[i], std::move(*text), shadows ? "builtin:" + wanted : ""};
  }
  if (builtin != embedded_profiles().end()) {
    return ProfileText{name_or_path, "builtin:" + wanted, "builtin", std::string(builtin->text)};
  }
  std::vector<std::string> names;
  for (const ProfileText& p : list_profiles(kind, path)) names.push_back(p.name);
  return Error{fmt::format("unknown {} '{}'{} (`edgeplan profiles` lists them)", singular(kind), name_or_path,
                           util::did_you_mean(name_or_path, names))};
}

std::vector<ProfileText> list_profiles(const std::string& kind, const SearchPath& path) {
  std::map<std::string, ProfileText> found;
  for (const std::string& dir : path.dirs) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fs::path(dir) / kind, ec)) {
      if (entry.path().extension() != ".toml") continue;
      const std::string name = entry.path().stem().string();
      if (found.contains(name)) continue;
      auto text = read_profile_text(entry.path());  // not a regular file, or too large: not listed
      if (text) found.emplace(name, ProfileText{name, entry.path().string(), dir, std::move(*text)});
    }
  }
  const std::string prefix = kind + "/";
  for (const EmbeddedFile& f : embedded_profiles()) {
    if (!f.path.starts_with(prefix)) continue;
    const std::string name = fs::path(std::string(f.path)).stem().string();
    if (found.contains(name)) continue;
    found.emplace(name, ProfileText{name, "builtin:" + std::string(f.path), "builtin", std::string(f.text)});
  }
  std::vector<ProfileText> out;
  for (auto& [name, p] : found) out.push_back(std::move(p));
  return out;
}

Result<std::vector<Override>> parse_overrides(const std::vector<std::string>& args,
                                              const std::vector<std::string>& profiles) {
  std::vector<Override> out;
  for (const std::string& arg : args) {
    const std::string original = "--set " + clipped(arg);
    const auto eq = arg.find('=');
    if (eq == std::string::npos) return Error{original + ": expected KEY=VALUE, for example device.bandwidth_gbps=120"};
    const std::string key = arg.substr(0, eq);
    const auto dot = key.find('.');
    const std::string profile = key.substr(0, dot);
    if (std::find(profiles.begin(), profiles.end(), profile) == profiles.end()) {
      std::string list;
      for (const std::string& p : profiles) list += (list.empty() ? "" : ", ") + p + ".";
      return Error{fmt::format("{}: the key must start with one of {}{}", original, list,
                               util::did_you_mean(profile, profiles))};
    }
    if (dot == std::string::npos || dot + 1 == key.size()) {
      return Error{original + ": expected a key after '" + profile + ".'"};
    }
    out.push_back({profile, key.substr(dot + 1), arg.substr(eq + 1), original});
  }
  return out;
}

Result<toml::table> parse_profile(const ProfileText& text, const std::string& profile,
                                  const std::vector<Override>& overrides, FieldSource& source) {
  source.file = text.display;
  auto parsed = parse_toml(text.text, text.display);
  if (!parsed) return parsed.error();
  toml::table& table = *parsed;
  try {
    for (const Override& o : overrides) {
      if (o.profile != profile) continue;
      apply_override(table, o.key, o.value, o.original);
      source.overrides[profile + "." + o.key] = o.original;
    }
  } catch (const FieldError& e) {
    return Error{e.what()};
  }
  return parsed;
}

namespace {

constexpr double gib(double v) { return v * 1073741824.0; }
constexpr double gbps(double v) { return v * 1e9; }
constexpr double same(double v) { return v; }
constexpr double ms(double v) { return v / 1e3; }

constexpr std::array kDeviceNumbers{
    DeviceNumber{"memory_gib", Range::positive, gib, &DeviceSpec::memory_bytes},
    DeviceNumber{"reserved_gib", Range::non_negative, gib, &DeviceSpec::reserved_bytes},
    DeviceNumber{"bandwidth_gbps", Range::positive, gbps, &DeviceSpec::bandwidth_bytes_per_s},
    DeviceNumber{"utilization", Range::unit_interval, same, &DeviceSpec::utilization},
    DeviceNumber{"per_token_overhead_ms", Range::non_negative, ms, &DeviceSpec::per_token_overhead_s},
};

}  // namespace

std::span<const DeviceNumber> device_numbers() { return kDeviceNumbers; }

bool device_numbers_consistent(const DeviceSpec& d) { return d.reserved_bytes < d.memory_bytes; }

void read_device_core(Fields& f, DeviceSpec& d) {
  f.optional_string("description");
  for (const DeviceNumber& n : kDeviceNumbers) d.*n.member = n.convert(f.number(n.key, n.range));
  if (!device_numbers_consistent(d)) {
    f.fail("reserved_gib", fmt::format("({} GiB) must be less than {} ({} GiB)", d.reserved_bytes / 1073741824.0,
                                       f.full_key("memory_gib"), d.memory_bytes / 1073741824.0));
  }
  if (auto p = f.table("prefill")) {
    const double efficiency = p->number("efficiency", Range::unit_interval);
    d.prefill = PrefillSpec{p->number("tflops", Range::positive) * 1e12, efficiency,
                            p->number_or("quantized_efficiency", Range::unit_interval, efficiency)};
    p->finish();
  }
}

Result<DeviceSpec> load_device(const ProfileText& text, const std::vector<Override>& overrides) {
  return read_profile<DeviceSpec>(text, "device", overrides, [&](Fields& f) {
    DeviceSpec d;
    d.name = text.name;
    read_device_core(f, d);
    read_device_units(f, d);
    read_device_kv_cache(f, d);
    read_device_storage(f, d);
    read_device_lora(f, d);
    read_device_route(f, d);
    return d;
  });
}

Result<ModelSpec> load_model(const ProfileText& text, const std::vector<Override>& overrides) {
  return read_profile<ModelSpec>(text, "model", overrides, [&](Fields& f) {
    ModelSpec m;
    m.name = text.name;
    f.optional_string("description");
    f.optional_string("source");
    m.params = f.optional_number("params", Range::positive);
    m.layers = f.count("layers", layers_range);
    m.hidden = f.count("hidden", width_range);
    m.heads = f.count("heads", heads_range);
    m.kv_heads = f.count("kv_heads", heads_range);
    if (m.heads % m.kv_heads != 0) {
      f.fail("kv_heads", fmt::format("({}) must divide {} ({})", m.kv_heads, f.full_key("heads"), m.heads));
    }
    m.head_dim = f.count("head_dim", head_dim_range);
    m.ffn = f.count("ffn", width_range);
    m.vocab = f.optional_count("vocab", vocab_range);
    m.tied_embeddings = f.boolean_or("tied_embeddings", false);
    m.qkv_bias = f.boolean_or("qkv_bias", false);
    m.rope_freqs = f.boolean_or("rope_freqs", false);
    read_model_architecture(f, m);
    read_model_lora(f, m);
    if (!m.vocab && !m.params) f.fail({}, "needs params or vocab (to count its weights)");
    if (auto formats = f.table("formats")) {
      for (const std::string& name : formats->remaining_keys()) {
        auto entry = formats->table(name);
        if (!find_file_type(name)) {
          std::vector<std::string> known;
          for (const FileType& t : file_types()) known.emplace_back(t.name);
          formats->fail(name, "is not a known format" + util::did_you_mean(name, known));
        }
        FormatSize size;
        size.bits_per_weight = entry->optional_number("bits_per_weight", Range::positive);
        size.bytes = entry->optional_number("bytes", Range::positive);
        if (size.bits_per_weight.has_value() == size.bytes.has_value()) {
          entry->fail({}, "needs exactly one of bits_per_weight and bytes");
        }
        size.active_bytes = entry->optional_number("active_bytes", Range::positive);
        if (size.active_bytes && (!size.bytes || *size.active_bytes > *size.bytes)) {
          entry->fail("active_bytes", "needs bytes and must not exceed it");
        }
        entry->finish();
        m.formats.emplace(name, size);
      }
      formats->finish();
    }
    return m;
  });
}

}  // namespace edgeplan::io
