#include "edgeplan/io/model_store.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "edgeplan/io/gguf.hpp"
#include "edgeplan/io/http.hpp"
#include "edgeplan/io/input_file.hpp"
#include "edgeplan/io/model_file.hpp"
#include "edgeplan/util/names.hpp"

namespace edgeplan::io {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kOllamaPrefix = "ollama:";
constexpr std::string_view kModelLayer = "application/vnd.ollama.image.model";
constexpr std::uint64_t kMaxManifestBytes = 1u << 20;  // a manifest lists a handful of layers

fs::path home_dir() {
  const char* home = std::getenv("HOME");
  return home && *home ? fs::path(home) : fs::path(".");
}

// Ollama's model directory: OLLAMA_MODELS, else ~/.ollama/models.
fs::path ollama_root() {
  if (const char* dir = std::getenv("OLLAMA_MODELS"); dir && *dir) return dir;
  return home_dir() / ".ollama" / "models";
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
      return StoredModel{blob.string(), name, fmt::format("ollama:{} ({})", name, blob.string())};
    }
  }
  return Error{fmt::format("{}: no layer of type {} (the model's weights)", manifest.string(), kModelLayer)};
}

// --- Shared: picking a repository's GGUF file -------------------------------------------------------------------

std::string upper(std::string s) {
  std::ranges::transform(s, s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

std::string file_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A split set's shard past the first (PREFIX-00002-of-00003.gguf): not a model of its own.
bool later_shard(const std::string& path) {
  const auto shards = gguf_split_paths(path);
  return shards && shards->front() != path;
}

// Whether `name` holds `quant` as a word: not inside a longer name (Q4_K in Q4_K_M, Q4_XS in IQ4_XS).
bool names_quant(const std::string& name, const std::string& quant) {
  const std::string n = upper(name), q = upper(quant);
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (auto at = n.find(q); at != std::string::npos; at = n.find(q, at + 1)) {
    const bool starts = at == 0 || !std::isalnum(static_cast<unsigned char>(n[at - 1]));
    const bool ends = at + q.size() == n.size() || !word(n[at + q.size()]);
    if (starts && ends) return true;
  }
  return false;
}

// The directory's GGUF files (by name, as stores keep them), as paths relative to it, sorted.
std::vector<std::string> gguf_files_under(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().extension() == ".gguf" && it->is_regular_file(ec)) {
      out.push_back(fs::relative(it->path(), dir, ec).generic_string());
    }
  }
  std::ranges::sort(out);
  return out;
}

// --- LM Studio --------------------------------------------------------------------------------------------------

constexpr std::string_view kLmStudioPrefix = "lmstudio:";

// LM Studio's models folder: its settings.json's downloadsFolder, else ~/.lmstudio/models, else the folder of
// versions before 0.3, ~/.cache/lm-studio/models. LM Studio's home is ~/.lmstudio unless ~/.lmstudio-home-pointer
// names another.
fs::path lmstudio_root() {
  const fs::path home = home_dir();
  fs::path lms_home = home / ".lmstudio";
  if (std::ifstream pointer(home / ".lmstudio-home-pointer"); pointer) {
    std::string line;
    if (std::getline(pointer, line) && !line.empty()) lms_home = line;
  }
  if (auto text = read_input(lms_home / "settings.json", kMaxManifestBytes, "LM Studio's settings.json")) {
    try {
      const nlohmann::json j = nlohmann::json::parse(*text);
      if (j.is_object() && j.contains("downloadsFolder") && j["downloadsFolder"].is_string()) {
        return j["downloadsFolder"].get<std::string>();
      }
    } catch (const nlohmann::json::exception&) {
      // Not JSON: LM Studio's default folders below.
    }
  }
  std::error_code ec;
  if (fs::is_directory(lms_home / "models", ec)) return lms_home / "models";
  if (fs::is_directory(home / ".cache" / "lm-studio" / "models", ec)) return home / ".cache" / "lm-studio" / "models";
  return lms_home / "models";
}

// PUBLISHER/REPO[/FILE|:QUANT] split: the repository, and the file or the quant after it.
struct RepoRef {
  std::string repo, file, quant;
};

std::optional<RepoRef> repo_ref(const std::string& ref) {
  RepoRef r;
  const auto first = ref.find('/');
  if (first == std::string::npos || first == 0) return std::nullopt;
  const auto second = ref.find('/', first + 1);
  r.repo = ref.substr(0, second);
  if (second != std::string::npos) {
    r.file = ref.substr(second + 1);
    if (r.file.empty()) return std::nullopt;
  } else if (const auto colon = r.repo.find(':'); colon != std::string::npos) {
    r.quant = r.repo.substr(colon + 1);
    r.repo.resize(colon);
    if (r.quant.empty()) return std::nullopt;
  }
  if (r.repo.size() == first + 1) return std::nullopt;
  return r;
}

Result<StoredModel> lmstudio_model(const std::string& arg, const std::string& ref_text) {
  const auto ref = repo_ref(ref_text);
  if (!ref) return Error{fmt::format("'{}': expected lmstudio:PUBLISHER/REPO, with /FILE or :QUANT after it", arg)};
  const fs::path root = lmstudio_root();
  const fs::path dir = root / ref->repo;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    std::vector<std::string> repos;  // PUBLISHER/REPO folders
    for (auto p = fs::directory_iterator(root, ec); !ec && p != fs::directory_iterator(); p.increment(ec)) {
      for (auto r = fs::directory_iterator(p->path(), ec); !ec && r != fs::directory_iterator(); r.increment(ec)) {
        if (r->is_directory(ec)) repos.push_back(p->path().filename().string() + "/" + r->path().filename().string());
      }
    }
    return Error{fmt::format("LM Studio's models folder {} has no {}{}", root.string(), ref->repo,
                             util::did_you_mean(ref->repo, repos))};
  }
  std::string file = ref->file;
  if (file.empty()) {
    auto picked = pick_gguf(gguf_files_under(dir), ref->quant, dir.string());
    if (!picked) return picked.error();
    file = *picked;
  }
  const fs::path path = dir / file;
  if (!fs::is_regular_file(path, ec)) return Error{fmt::format("{}: no such file in LM Studio's models folder", path.string())};
  const std::string name = fmt::format("{}/{}", ref->repo, file);
  return StoredModel{path.string(), name, fmt::format("lmstudio:{} ({})", name, path.string())};
}

// --- Hugging Face -----------------------------------------------------------------------------------------------

constexpr std::string_view kHfPrefix = "hf:";

// The Hugging Face cache, as huggingface_hub finds it: HF_HUB_CACHE, else HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.
fs::path hf_cache_root() {
  if (const char* d = std::getenv("HF_HUB_CACHE"); d && *d) return d;
  if (const char* d = std::getenv("HF_HOME"); d && *d) return fs::path(d) / "hub";
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return fs::path(d) / "huggingface" / "hub";
  return home_dir() / ".cache" / "huggingface" / "hub";
}

bool is_commit(const std::string& rev) {
  return rev.size() == 40 && rev.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The snapshot folder of repo@rev in the cache, when the cache holds it.
std::optional<fs::path> hf_snapshot(const std::string& repo, const std::string& rev) {
  std::string folder = "models--" + repo;
  for (std::size_t at = folder.find('/'); at != std::string::npos; at = folder.find('/', at + 2)) folder.replace(at, 1, "--");
  const fs::path dir = hf_cache_root() / folder;
  std::string commit = rev;
  if (!is_commit(rev)) {
    std::ifstream ref(dir / "refs" / rev);
    if (!ref || !std::getline(ref, commit) || !is_commit(commit)) return std::nullopt;
  }
  std::error_code ec;
  const fs::path snapshot = dir / "snapshots" / commit;
  if (!fs::is_directory(snapshot, ec)) return std::nullopt;
  return snapshot;
}

// The repository's files on the Hub (GET /api/models/REPO/tree/REV?recursive=true), with their sizes.
Result<std::vector<std::string>> hub_files(const std::string& repo, const std::string& rev) {
  const std::string url = fmt::format("{}/api/models/{}/tree/{}?recursive=true", hub_endpoint(), repo, rev);
  auto text = http_get(url, 64u << 20, fmt::format("the file list of {} on the Hugging Face Hub", repo));
  if (!text) return text.error();
  std::vector<std::string> files;
  try {
    const nlohmann::json j = nlohmann::json::parse(*text);
    if (!j.is_array()) throw nlohmann::json::type_error::create(302, "not an array", nullptr);
    for (const nlohmann::json& e : j) {
      if (e.is_object() && e.value("type", "") == "file" && e.contains("path") && e["path"].is_string()) {
        files.push_back(e["path"].get<std::string>());
      }
    }
  } catch (const nlohmann::json::exception&) {
    return Error{fmt::format("{}: the Hub's answer is not a JSON list of files", url.substr(0, url.find('?')))};
  }
  std::ranges::sort(files);
  return files;
}

Result<StoredModel> hf_model(const std::string& arg, std::string ref_text) {
  std::string rev = "main";
  if (const auto at = ref_text.rfind('@'); at != std::string::npos) {
    rev = ref_text.substr(at + 1);
    ref_text.resize(at);
    if (rev.empty() || rev.find_first_of("/?#") != std::string::npos) {
      return Error{fmt::format("'{}': the revision after '@' must be a branch, a tag or a commit", arg)};
    }
  }
  const auto ref = repo_ref(ref_text);
  if (!ref) return Error{fmt::format("'{}': expected hf:ORG/REPO, with /FILE or :QUANT after it and @REVISION last", arg)};
  const std::string shown_rev = rev == "main" ? "" : "@" + rev;
  // The cache first, when its snapshot of the revision holds what is asked for (a snapshot holds what was
  // downloaded); else the Hub.
  if (const std::optional<fs::path> snapshot = hf_snapshot(ref->repo, rev)) {
    std::error_code ec;
    std::optional<std::string> file;
    if (!ref->file.empty()) {
      file = ref->file;
    } else if (const std::vector<std::string> ggufs = gguf_files_under(*snapshot); !ggufs.empty()) {
      if (auto picked = pick_gguf(ggufs, ref->quant, ref->repo)) file = *picked;
    } else if (ref->quant.empty()) {
      file = "config.json";  // a safetensors checkpoint
    }
    if (file && fs::is_regular_file(*snapshot / *file, ec)) {
      const std::string name = fmt::format("{}/{}", ref->repo, *file), path = (*snapshot / *file).string();
      return StoredModel{path, name, fmt::format("hf:{}{} ({})", name, shown_rev, path)};
    }
  }
  std::string file = ref->file;
  if (file.empty()) {
    auto files = hub_files(ref->repo, rev);
    if (!files) return files.error();
    std::vector<std::string> ggufs;
    std::ranges::copy_if(*files, std::back_inserter(ggufs), [](const std::string& f) { return f.ends_with(".gguf"); });
    if (ggufs.empty()) {
      return Error{fmt::format("hf:{}{} holds no GGUF file on the Hub; edgeplan reads a remote GGUF's header, and a "
                               "safetensors checkpoint from the Hugging Face cache (huggingface-cli download {} "
                               "config.json, then give hf:{} again)", ref->repo, shown_rev, ref->repo, ref->repo)};
    }
    auto picked = pick_gguf(ggufs, ref->quant, "hf:" + ref->repo + shown_rev);
    if (!picked) return picked.error();
    file = *picked;
  }
  const std::string url = fmt::format("{}/{}/resolve/{}/{}", hub_endpoint(), ref->repo, rev, file);
  const std::string name = fmt::format("{}/{}", ref->repo, file);
  return StoredModel{url, name, fmt::format("hf:{}{} ({})", name, shown_rev, url)};
}

}  // namespace

Result<std::string> pick_gguf(std::span<const std::string> files, const std::string& quant, const std::string& repo) {
  std::vector<std::string> models;
  for (const std::string& f : files) {
    if (f.ends_with(".gguf") && upper(file_name(f)).find("MMPROJ") == std::string::npos && !later_shard(f)) {
      models.push_back(f);
    }
  }
  if (models.empty()) return Error{fmt::format("{} holds no GGUF model file", repo)};
  const std::string wanted = quant.empty() ? "Q4_K_M" : quant;
  std::vector<std::string> matches;
  std::ranges::copy_if(models, std::back_inserter(matches), [&](const std::string& f) { return names_quant(file_name(f), wanted); });
  if (matches.size() == 1) return matches.front();
  if (matches.empty() && quant.empty()) return models.front();  // llama.cpp -hf: the first file when no Q4_K_M
  const std::vector<std::string>& listed = matches.empty() ? models : matches;
  return Error{fmt::format("{} has {} GGUF file{} {}: {}{}; name one after a '/'", repo,
                           matches.empty() ? "no" : std::to_string(matches.size()), matches.size() == 1 ? "" : "s",
                           matches.empty() ? fmt::format("of type {}, but", wanted) : "of type " + wanted,
                           fmt::join(listed.begin(), listed.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(listed.size(), 12)), ", "),
                           listed.size() > 12 ? fmt::format(" and {} more", listed.size() - 12) : "")};
}

std::vector<StoreEntry> list_stored_models() {
  std::vector<StoreEntry> out;
  const fs::path ollama = ollama_root();
  for (const std::string& name : ollama_names(ollama)) {
    if (auto m = ollama_model(name)) out.push_back({"ollama:" + name, "ollama", m->path});
  }
  const fs::path lms = lmstudio_root();
  for (const std::string& f : gguf_files_under(lms)) {
    if (later_shard(f) || upper(file_name(f)).find("MMPROJ") != std::string::npos) continue;
    out.push_back({fmt::format("{}{}", kLmStudioPrefix, f), "lmstudio", (lms / f).string()});
  }
  std::error_code ec;
  const fs::path hf = hf_cache_root();
  for (auto it = fs::directory_iterator(hf, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string folder = it->path().filename().string();
    if (!folder.starts_with("models--")) continue;
    std::string repo = folder.substr(8);
    if (const auto dashes = repo.find("--"); dashes != std::string::npos) repo.replace(dashes, 2, "/");
    const std::optional<fs::path> snapshot = hf_snapshot(repo, "main");
    if (!snapshot) continue;
    const std::vector<std::string> ggufs = gguf_files_under(*snapshot);
    for (const std::string& f : ggufs) {
      if (later_shard(f) || upper(file_name(f)).find("MMPROJ") != std::string::npos) continue;
      out.push_back({fmt::format("{}{}/{}", kHfPrefix, repo, f), "hf-cache", (*snapshot / f).string()});
    }
    if (ggufs.empty() && fs::is_regular_file(*snapshot / "config.json", ec)) {
      out.push_back({fmt::format("{}{}", kHfPrefix, repo), "hf-cache", (*snapshot / "config.json").string()});
    }
  }
  return out;
}

Result<std::optional<StoredModel>> find_stored_model(const std::string& arg) {
  std::error_code ec;
  if (!is_url(arg) && fs::is_directory(arg, ec)) {  // a model's folder: a snapshot, a download
    std::string file;
    if (const std::vector<std::string> ggufs = gguf_files_under(arg); !ggufs.empty()) {
      auto picked = pick_gguf(ggufs, "", arg);
      if (!picked) return picked.error();
      file = *picked;
    } else if (fs::is_regular_file(fs::path(arg) / "config.json", ec)) {
      file = "config.json";
    } else {
      return Error{fmt::format("{}: a folder without a GGUF file or a config.json: no model to read", arg)};
    }
    const std::string path = (fs::path(arg) / file).string();
    return std::optional<StoredModel>(StoredModel{path, model_file_name(path), path});
  }
  if (arg.starts_with(kHfPrefix)) {
    auto m = hf_model(arg, arg.substr(kHfPrefix.size()));
    if (!m) return m.error();
    return std::optional<StoredModel>(std::move(*m));
  }
  if (arg.starts_with(kLmStudioPrefix)) {
    auto m = lmstudio_model(arg, arg.substr(kLmStudioPrefix.size()));
    if (!m) return m.error();
    return std::optional<StoredModel>(std::move(*m));
  }
  std::string name;
  if (arg.starts_with(kOllamaPrefix)) {
    name = arg.substr(kOllamaPrefix.size());
  } else {
    // A bare NAME:TAG that is no file (profile names hold no ':'; a URL is not Ollama's).
    const auto colon = arg.find(':');
    if (colon == std::string::npos || colon == 0 || is_url(arg) || arg.find("://") != std::string::npos ||
        fs::exists(arg, ec)) {
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
