// Finding and loading TOML profiles. A name resolves through the search path: the --profiles
// directories, then EDGEPLAN_PROFILE_PATH (colon-separated), then the installed share directory
// (<prefix>/share/edgeplan/profiles beside the binary), then the profiles compiled into the binary. An
// argument that names a .toml file (or contains a '/') is read as a path. Each directory holds one
// sub-directory per kind: devices/, models/, ... Schema: docs/profiles.md.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/core/device.hpp"
#include "edgeplan/core/model.hpp"
#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

struct SearchPath {
  std::vector<std::string> dirs;  // searched in order, before the compiled-in profiles
  std::size_t user_dirs = 0;      // how many of dirs, from the front, the user named (--profiles, the variable)
};

// --profiles dirs, then EDGEPLAN_PROFILE_PATH, then the share directory next to the running binary. A --profiles
// directory that does not exist is an error; an EDGEPLAN_PROFILE_PATH entry that does not exist is a warning.
Result<SearchPath> default_search_path(const std::vector<std::string>& flag_dirs);

// The text of one profile and where it came from.
struct ProfileText {
  std::string name;     // "phone8g"
  std::string display;  // path shown in messages: "profiles/devices/phone8g.toml" or "builtin:devices/phone8g.toml"
  std::string origin;   // "builtin" or the directory / file it was read from
  std::string text;
  std::string shadows{};  // the built-in profile a file in a user's directory hides ("builtin:devices/x.toml"), or ""
  // A GGUF file's tensors with their types (model_file_profile), which the text does not carry: load_model gives
  // them to the model's file_format (FormatSize::tensors).
  std::shared_ptr<const std::vector<TypedTensor>> file_tensors{};
};

// `kind` is the sub-directory: "devices", "models", ...
Result<ProfileText> find_profile(const std::string& kind, const std::string& name_or_path, const SearchPath& path);

// A profile reference read from the file `from` (a plan naming its device): a relative path resolves against
// the folder `from` is in, not the current directory; a profile name, or anything read from a built-in file,
// stays as it is.
std::string resolve_beside(const std::string& name_or_path, const ProfileText& from);

// Every profile of `kind` visible through the path, first match per name, sorted by name.
std::vector<ProfileText> list_profiles(const std::string& kind, const SearchPath& path);

// One `--set PROFILE.KEY=VALUE`.
struct Override {
  std::string profile;   // "device", "model", ...
  std::string key;       // "bandwidth_gbps", "units.npu.ops"
  std::string value;     // TOML value text
  std::string original;  // "--set device.bandwidth_gbps=120", for messages
};

// Parses the --set arguments; `profiles` are the accepted first segments.
Result<std::vector<Override>> parse_overrides(const std::vector<std::string>& args,
                                              const std::vector<std::string>& profiles);

// Read by their schema tables (io/schema/kinds.hpp); a text read before with the same overrides is not read
// again (at most 256 results per kind are kept).
Result<DeviceSpec> load_device(const ProfileText& text, const std::vector<Override>& overrides);
Result<ModelSpec> load_model(const ProfileText& text, const std::vector<Override>& overrides);


}  // namespace edgeplan::io
