// Models where users keep them (docs/profiles.md, "Model stores"). A --model argument may name:
//   - an Ollama model: `ollama:NAME[:TAG]`, or a bare `NAME:TAG` that is no file. Its manifest (OLLAMA_MODELS, else
//     ~/.ollama/models: manifests/HOST/NAMESPACE/MODEL/TAG) gives the digest of the model layer, whose blob
//     (blobs/sha256-HEX) is a GGUF file.
//   - an LM Studio model: `lmstudio:PUBLISHER/REPO[/FILE|:QUANT]`, a file under LM Studio's models folder (the
//     downloadsFolder of its settings.json, else ~/.lmstudio/models, else the older ~/.cache/lm-studio/models).
//   - a Hugging Face repository: `hf:ORG/REPO[/FILE|:QUANT][@REVISION]`, from the local Hugging Face cache
//     (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub) when it holds that revision, else from the Hub
//     (HF_ENDPOINT) as a URL whose header is read with range requests (io/http.hpp).
// A folder (a snapshot, a download) is read as its GGUF file, picked as below, else its config.json.
// A repository's file is picked as llama.cpp's -hf picks it: the GGUF file whose name holds QUANT (default Q4_K_M),
// else the first GGUF file; a split set by its first shard; mmproj files (vision projectors) never.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

// A model a store holds: the file (a path or a URL) it resolves to, the name it goes by ("llama3.2:3b") and how
// outputs name it ("ollama:llama3.2:3b (PATH)").
struct StoredModel {
  std::string path;
  std::string name;
  std::string display;
};

// The model `arg` names in a store; nullopt when `arg` is no store name (a profile name, a path, a URL); an error
// naming the store's directory when it is one the store does not hold.
Result<std::optional<StoredModel>> find_stored_model(const std::string& arg);

// The file of a repository's that a QUANT (empty: the default) picks, among `files` (paths inside the repository);
// an error lists what the repository offers. `repo` names the repository in messages.
Result<std::string> pick_gguf(std::span<const std::string> files, const std::string& quant, const std::string& repo);

// What the stores hold, for `edgeplan models`: each model's name as --model takes it, its store and its file.
struct StoreEntry {
  std::string name;   // as --model takes it: ollama:llama3.2:3b, lmstudio:PUBLISHER/REPO/FILE, hf:ORG/REPO/FILE
  std::string store;  // ollama, lmstudio, hf-cache
  std::string path;   // the file
};
std::vector<StoreEntry> list_stored_models();

}  // namespace edgeplan::io
