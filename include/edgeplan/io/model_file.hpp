// Model files users already have, read as model profiles: a Hugging Face config.json (src/io/hf_config.cpp)
// or a GGUF file's header (src/io/gguf_model.cpp) becomes a ModelSpec, which model_profile_toml() writes as the equivalent TOML profile (`edgeplan import`);
// any command's --model accepts such a file through model_file_profile(). Mapping: docs/profiles.md,
// section "Model files".
#pragma once

#include <string>
#include <string_view>

#include "edgeplan/core/model.hpp"
#include "edgeplan/util/result.hpp"
#include "edgeplan/io/gguf.hpp"
#include "edgeplan/io/profiles.hpp"

namespace edgeplan::io {

// Whether an argument names a model file rather than a TOML profile: it ends in .json or .gguf, or is a GGUF file
// by its content (is_gguf_file).
bool is_model_file(const std::string& name_or_path);
// Whether a path is a GGUF file: it ends in .gguf, is a URL (read as a GGUF), or is a file that starts with GGUF's magic, whatever it is
// called (an Ollama blob, sha256-...).
bool is_gguf_file(const std::string& path);

// A model from the text of a Hugging Face config.json; `display` names the file in messages. Reads the
// text settings nested under text_config (Gemma 3) when present.
Result<ModelSpec> model_from_hf_config(std::string_view json_text, const std::string& name, const std::string& display);

// A model from a GGUF header: shape from the metadata, and the file's tensor bytes as the size of its file
// type (general.file_type), with expert stacks read at used / experts. An architecture llama.cpp loads and edgeplan
// has no tensor list for, or any with `generic`, is read by the generic rule (ModelSpec::generic_of).
Result<ModelSpec> model_from_gguf(const GgufFile& f, const std::string& name, const std::string& display,
                                  bool generic = false);

// A GGUF file's general.file_type: the format llama.cpp names so (nullptr when absent or unknown), and its name for
// people ("Q4_K_M", "not stated", "40 (not a file type llama.cpp defines)").
const FileType* gguf_file_type(const GgufFile& f);
std::string gguf_file_type_name(const GgufFile& f);

// The TOML model profile that loads back as m; `source` is recorded in its source key.
std::string model_profile_toml(const ModelSpec& m, const std::string& source);

// The model name a file stands for: the directory of a config.json, else the file's stem.
std::string model_file_name(const std::string& path);

// Reads a model file and returns the equivalent profile text (display = the file's path), the model named `name`
// where given (a store's name for it), else model_file_name(path); a GGUF file by the generic rule with `generic`.
Result<ProfileText> model_file_profile(const std::string& path, const std::string& name = "", bool generic = false);

}  // namespace edgeplan::io
