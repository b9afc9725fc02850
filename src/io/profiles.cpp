#include "edgeplan/io/profile_reader.hpp"
#include "edgeplan/io/profiles.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "edgeplan/io/embedded.hpp"
#include "edgeplan/io/input_file.hpp"
#include "edgeplan/io/model_file.hpp"
#include "edgeplan/util/names.hpp"
#include "edgeplan/io/schema/kinds.hpp"
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
#ifdef __linux__  // the installed profiles beside the binary (PREFIX/bin/edgeplan -> PREFIX/share/edgeplan/profiles)
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path share = exe.parent_path().parent_path() / EDGEPLAN_SHARE_SUBDIR;
    if (fs::is_directory(share, ec)) p.dirs.push_back(share.string());
  }
#endif  // elsewhere the built-in profiles and EDGEPLAN_PROFILE_PATH serve
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
    if (!text) return Error{fmt::format("cannot read {} profile {}: {}", singular(kind), quoted(name_or_path, 4096), text.error().message)};
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
    if (!text) return Error{fmt::format("cannot read {} profile {}: {}", singular(kind), quoted(file.string(), 4096), text.error().message)};
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

// What `read` gives for a profile text and the overrides of its `profile`, read once: a sweep's command lines
// and combinations load the same few profiles again and again. The reading is a function of the text, its name
// and display and those overrides, so a kept result is the result; an error is read again each time. At most
// kKept results per kind of profile are kept, so memory stays bounded whatever loads profiles.
template <class Spec, class Read>
Result<Spec> read_once(const ProfileText& text, const std::string& profile, const std::vector<Override>& overrides,
                       Read read) {
  constexpr std::size_t kKept = 256;
  static std::mutex mutex;
  static std::map<std::vector<std::string>, Spec> kept;
  std::vector<std::string> key{text.name, text.display, text.text};
  for (const Override& o : overrides) {
    if (o.profile == profile) key.insert(key.end(), {o.key, o.value, o.original});
  }
  {
    const std::lock_guard lock(mutex);
    if (const auto it = kept.find(key); it != kept.end()) return it->second;
  }
  Result<Spec> spec = read_profile<Spec>(text, profile, overrides, read);
  if (spec) {
    const std::lock_guard lock(mutex);
    if (kept.size() < kKept) kept.emplace(std::move(key), *spec);
  }
  return spec;
}

}  // namespace

Result<DeviceSpec> load_device(const ProfileText& text, const std::vector<Override>& overrides) {
  return read_once<DeviceSpec>(text, "device", overrides, [&](Fields& f) {
    DeviceSpec d;
    d.name = text.name;
    schema::read_schema(schema::device_schema(), f, d);
    return d;
  });
}

Result<ModelSpec> load_model(const ProfileText& text, const std::vector<Override>& overrides) {
  return read_once<ModelSpec>(text, "model", overrides, [&](Fields& f) {
    ModelSpec m;
    m.name = text.name;
    schema::read_schema(schema::model_schema(), f, m);
    if (const auto format = m.file_format ? m.formats.find(*m.file_format) : m.formats.end();
        format != m.formats.end()) {
      format->second.tensors = text.file_tensors;
    }
    return m;
  });
}

}  // namespace edgeplan::io
