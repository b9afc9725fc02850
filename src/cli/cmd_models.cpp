// edgeplan models: the models the stores on this machine hold (Ollama, LM Studio, the Hugging Face cache), each by
// the name --model takes, with its format, architecture and size (io/model_store.hpp).
#include <filesystem>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "edgeplan/io/model_file.hpp"
#include "edgeplan/io/model_store.hpp"

namespace edgeplan::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kNone =
    "no models found: Ollama's store (OLLAMA_MODELS, else ~/.ollama/models), LM Studio's models folder "
    "(~/.lmstudio/models) and the Hugging Face cache (HF_HUB_CACHE, else ~/.cache/huggingface/hub) hold none";

struct Described {
  std::string format, arch;
  std::uint64_t bytes = 0;
};

// A GGUF file's header (every shard's), or a safetensors checkpoint's config.json and the weight files beside it.
Described describe(const std::string& path) {
  Described d;
  std::error_code ec;
  if (path.ends_with("config.json")) {
    d.format = "safetensors (config.json)";
    for (auto it = fs::directory_iterator(fs::path(path).parent_path(), ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      if (it->path().extension() == ".safetensors") d.bytes += it->file_size(ec);
    }
    return d;
  }
  const Result<io::GgufFile> f = io::read_gguf_model(path);
  if (!f) {
    d.format = "unreadable: " + f.error().message;
    return d;
  }
  d.format = io::gguf_file_type_name(*f);
  d.arch = f->string("general.architecture").value_or("not stated");
  d.bytes = f->file_bytes;
  return d;
}

}  // namespace

Runner setup_models(Options&) {
  return [](const Context&) {
    io::Report r;
    r.command = "models";
    r.title = "models in this machine's stores (ollama:, lmstudio:, hf: names as --model takes them)";
    io::Table t{"models",
                {{"name", "name"}, {"store", "store"}, {"format", "format"}, {"arch", "arch"},
                 io::counted({"size (GB)", "bytes", 2, false, 1e9}), {"file", "path"}},
                {}};
    for (const io::StoreEntry& e : io::list_stored_models()) {
      const Described d = describe(e.path);
      t.add({e.name, e.store, d.format, d.arch, static_cast<double>(d.bytes), e.path});
    }
    if (t.rows.empty()) {
      r.notes.emplace_back(kNone);
    }
    r.tables.push_back(std::move(t));
    return r;
  };
}

}  // namespace edgeplan::cli
