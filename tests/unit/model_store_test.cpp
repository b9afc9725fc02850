// Models where users keep them: an Ollama store (io/model_store.hpp) and GGUF files known by their content.
#include "edgeplan/io/model_store.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.hpp"
#include "edgeplan/io/json.hpp"
#include "edgeplan/io/model_file.hpp"
#include "scratch_dir.hpp"

namespace edgeplan {
namespace {

namespace fs = std::filesystem;
using testing_cli::run_cli;
using testing_dir::ScratchDir;

// A digest that names tests/data/tiny-llama.gguf's blob (the store does not check the bytes against it, as a
// planner reads what Ollama wrote).
const std::string kDigest(64, 'a');

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// An Ollama store in `dir` holding tiny:1b (the repository's tiny GGUF as its model blob), set as OLLAMA_MODELS.
void make_store(const ScratchDir& dir, const std::string& layer_type = "application/vnd.ollama.image.model",
                const std::string& digest = "sha256:" + kDigest) {
  write(dir / "manifests/registry.ollama.ai/library/tiny/1b",
        R"({"schemaVersion":2,"layers":[{"mediaType":")" + layer_type + R"(","digest":")" + digest +
            R"("},{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:)" + std::string(64, 'b') +
            R"("}]})");
  fs::create_directories(dir / "blobs");
  fs::copy_file(fs::path(EDGEPLAN_SOURCE_DIR) / "tests/data/tiny-llama.gguf", dir / ("blobs/sha256-" + kDigest));
  ::setenv("OLLAMA_MODELS", dir.string().c_str(), 1);
}

TEST(OllamaStore, ANameResolvesToItsModelBlob) {
  const ScratchDir dir("ollama_store");
  make_store(dir);
  for (const std::string name : {"tiny:1b", "ollama:tiny:1b"}) {
    const testing_cli::CliRun run = run_cli({"kv", "--device", "phone8g", "--model", name, "--format", "json"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const io::Json j = io::Json::parse(run.out);
    EXPECT_EQ(j["inputs"]["model"]["name"], "tiny:1b");
    EXPECT_EQ(j["inputs"]["model"]["source"], "ollama:tiny:1b (" + (dir / ("blobs/sha256-" + kDigest)).string() + ")");
  }
  // The blob itself, by its content: it has no .gguf name.
  const std::string blob = (dir / ("blobs/sha256-" + kDigest)).string();
  EXPECT_TRUE(io::is_gguf_file(blob));
  EXPECT_TRUE(io::is_model_file(blob));
  const testing_cli::CliRun inspect = run_cli({"inspect", blob});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("GGUF v3, 21 tensors, file type Q8_0"), std::string::npos) << inspect.out;
  EXPECT_EQ(run_cli({"inspect", "ollama:tiny:1b"}).exit_code, 0);
  // A tag defaults to latest; a name that is no store name is not the store's.
  EXPECT_FALSE(io::find_stored_model("llama-3.2-1b").value());
  EXPECT_FALSE(io::find_stored_model(blob).value());
}

TEST(OllamaStore, WhatTheStoreDoesNotHoldIsNamedWithWhere) {
  const ScratchDir dir("ollama_missing");
  make_store(dir);
  EXPECT_EQ(run_cli({"kv", "--device", "phone8g", "--model", "tiny:2b"}).err,
            "edgeplan: error: Ollama's store at " + dir.string() + " has no model 'tiny:2b'; did you mean tiny:1b? "
            "(`ollama list` shows what it holds; `ollama pull tiny:2b` fetches it)\n");
  ::setenv("OLLAMA_MODELS", (dir / "none").string().c_str(), 1);
  const testing_cli::CliRun none = run_cli({"kv", "--device", "phone8g", "--model", "llama3.2:3b"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err, "edgeplan: error: 'llama3.2:3b' names an Ollama model, and there is no Ollama store at " +
                          (dir / "none").string() + " (set OLLAMA_MODELS to its models directory); a built-in "
                          "profile's name has no ':' (`edgeplan profiles`); did you mean llama-3.2-3b?\n");
  EXPECT_EQ(run_cli({"kv", "--device", "phone8g", "--model", "ollama:"}).exit_code, 2);
  // Other stores' names are not taken for Ollama's (remote_model_test.cpp).
  EXPECT_EQ(run_cli({"kv", "--device", "phone8g", "--model", "lmstudio:nobody"}).err,
            "edgeplan: error: 'lmstudio:nobody': expected lmstudio:PUBLISHER/REPO, with /FILE or :QUANT after it\n");
}

TEST(OllamaStore, ALyingManifestIsAnErrorNotAGuess) {
  {
    const ScratchDir dir("ollama_digest");
    make_store(dir, "application/vnd.ollama.image.model", "sha256:../../etc/passwd");
    const testing_cli::CliRun run = run_cli({"kv", "--device", "phone8g", "--model", "tiny:1b"});
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.err.find("is not sha256:<64 hex digits>"), std::string::npos) << run.err;
  }
  {
    const ScratchDir dir("ollama_layer");
    make_store(dir, "application/vnd.ollama.image.adapter");
    const testing_cli::CliRun run = run_cli({"kv", "--device", "phone8g", "--model", "tiny:1b"});
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.err.find("no layer of type application/vnd.ollama.image.model"), std::string::npos) << run.err;
  }
  {
    const ScratchDir dir("ollama_blob");
    make_store(dir, "application/vnd.ollama.image.model", "sha256:" + std::string(64, 'c'));
    const testing_cli::CliRun run = run_cli({"kv", "--device", "phone8g", "--model", "tiny:1b"});
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.err.find("its model blob"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("is missing (re-run `ollama pull tiny:1b`)"), std::string::npos) << run.err;
  }
}

}  // namespace
}  // namespace edgeplan
