// Models where users keep them (docs/profiles.md, "Model files"): Ollama's local store. A --model argument
// `ollama:NAME[:TAG]`, or a bare `NAME:TAG` that is no file, names a model Ollama pulled: its manifest
// (OLLAMA_MODELS, else ~/.ollama/models: manifests/HOST/NAMESPACE/MODEL/TAG) gives the digest of the model layer,
// whose blob (blobs/sha256-HEX) is a GGUF file.
#pragma once

#include <optional>
#include <string>

#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

// A model a store holds: the file it resolves to and the name it goes by ("llama3.2:3b").
struct StoredModel {
  std::string path;
  std::string name;
};

// The model `arg` names in a store; nullopt when `arg` is no store name (a profile name, a path); an error naming
// the store's directory when it is one the store does not hold.
Result<std::optional<StoredModel>> find_stored_model(const std::string& arg);

}  // namespace edgeplan::io
