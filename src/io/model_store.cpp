#include "edgeplan/io/model_store.hpp"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgeplan/io/input_file.hpp"
#include "edgeplan/util/names.hpp"

namespace edgeplan::io {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kOllamaPrefix = "ollama:";
constexpr std::string_view kModelLayer = "application/vnd.ollama.image.model";
constexpr std::uint64_t kMaxManifestBytes = 1u << 20;  // a manifest lists a handful of layers

// Ollama's model directory: OLLAMA_MODELS, else ~/.ollama/models.
fs::path ollama_root() {
  if (const char* dir = std::getenv("OLLAMA_MODELS"); dir && *dir) return dir;
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : ".") / ".ollama" / "models";
}

// The manifest path of an Ollama name: [HOST/][NAMESPACE/]MODEL[:TAG], with Ollama's defaults
// registry.ollama.ai, library and latest.
fs::path manifest_path(const fs::path& root, std::string name) {
  std::string tag = "latest";
  if (const auto colon = name.rfind(':'); colon != std::string::npos && name.find('/', colon) == std::string::npos) {
    tag = name.substr(colon + 1);
    name.resize(colon);
  }
  std::vector<std::string> parts;
  for (std::size_t at = 0;;) {
    const auto slash = name.find('/', at);
    parts.push_back(name.substr(at, slash == std::string::npos ? std::string::npos : slash - at));
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  if (parts.size() == 1) parts.insert(parts.begin(), "library");
  if (parts.size() == 2) parts.insert(parts.begin(), "registry.ollama.ai");
  fs::path p = root / "manifests";
  for (const std::string& part : parts) p /= part;
  return p / tag;
}

// The models a store's manifests name, as `ollama list` shows them (library ones without their prefix).
std::vector<std::string> ollama_names(const fs::path& root) {
  std::vector<std::string> names;
  std::error_code ec;
  const fs::path manifests = root / "manifests";
  for (auto it = fs::recursive_directory_iterator(manifests, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string rel = fs::relative(it->path(), manifests, ec).generic_string();
    const auto last = rel.rfind('/');
    if (last == std::string::npos) continue;
    rel = rel.substr(0, last) + ":" + rel.substr(last + 1);
    for (const std::string_view prefix : {"registry.ollama.ai/library/", "registry.ollama.ai/"}) {
      if (rel.starts_with(prefix)) {
        rel = rel.substr(prefix.size());
        break;
      }
    }
    names.push_back(rel);
  }
  return names;
}

Result<StoredModel> ollama_model(const std::string& name) {
  const fs::path root = ollama_root();
  const fs::path manifest = manifest_path(root, name);
  std::error_code ec;
  if (!fs::is_regular_file(manifest, ec)) {
    if (!fs::is_directory(root / "manifests", ec)) {
      return Error{fmt::format("'{}' names an Ollama model, and there is no Ollama store at {} (set OLLAMA_MODELS to "
                               "its models directory); a built-in profile's name has no ':' (`edgeplan profiles`)",
                               name, root.string())};
    }
    return Error{fmt::format("Ollama's store at {} has no model '{}'{} (`ollama list` shows what it holds; `ollama "
                             "pull {}` fetches it)", root.string(), name, util::did_you_mean(name, ollama_names(root)),
                             name)};
  }
  auto text = read_input(manifest, kMaxManifestBytes, "an Ollama manifest");
  if (!text) return text.error();
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception&) {
    return Error{fmt::format("{}: not a JSON Ollama manifest", manifest.string())};
  }
  const auto layers = json.find("layers");
  if (json.is_object() && layers != json.end() && layers->is_array()) {
    for (const nlohmann::json& layer : *layers) {
      if (!layer.is_object() || layer.value("mediaType", "") != kModelLayer) continue;
      const std::string digest = layer.value("digest", "");
      if (!digest.starts_with("sha256:") || digest.size() != 7 + 64 ||
          digest.find_first_not_of("0123456789abcdef", 7) != std::string::npos) {
        return Error{fmt::format("{}: the model layer's digest '{}' is not sha256:<64 hex digits>", manifest.string(),
                                 digest)};
      }
      const fs::path blob = root / "blobs" / ("sha256-" + digest.substr(7));
      if (!fs::is_regular_file(blob, ec)) {
        return Error{fmt::format("{}: its model blob {} is missing (re-run `ollama pull {}`)", manifest.string(),
                                 blob.string(), name)};
      }
      return StoredModel{blob.string(), name};
    }
  }
  return Error{fmt::format("{}: no layer of type {} (the model's weights)", manifest.string(), kModelLayer)};
}

}  // namespace

Result<std::optional<StoredModel>> find_stored_model(const std::string& arg) {
  for (const std::string_view store : {"hf:", "lmstudio:"}) {
    if (arg.starts_with(store)) {
      return Error{fmt::format("'{}': models named {}... are not read yet; give the path of the model's file (a .gguf, "
                               "or a config.json)", arg, store)};
    }
  }
  std::string name;
  if (arg.starts_with(kOllamaPrefix)) {
    name = arg.substr(kOllamaPrefix.size());
  } else {
    std::error_code ec;
    // A bare NAME:TAG that is no file (profile names hold no ':'; a URL is not Ollama's).
    const auto colon = arg.find(':');
    if (colon == std::string::npos || colon == 0 || arg.find("://") != std::string::npos || fs::exists(arg, ec)) {
      return std::optional<StoredModel>();
    }
    name = arg;
  }
  if (name.empty()) return Error{fmt::format("'{}': no model name after '{}'", arg, kOllamaPrefix)};
  auto m = ollama_model(name);
  if (!m) return m.error();
  return std::optional<StoredModel>(std::move(*m));
}

}  // namespace edgeplan::io
