// Models read where users keep them, beyond Ollama (model_store_test.cpp): GGUF files over HTTP read with range
// requests from a server on 127.0.0.1 (range_server.hpp), Hugging Face names from the Hub and from the local cache,
// and LM Studio's folder (io/http.hpp, io/model_store.hpp).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "cli_run.hpp"
#include "edgeplan/io/gguf.hpp"
#include "edgeplan/io/http.hpp"
#include "edgeplan/io/json.hpp"
#include "edgeplan/io/model_file.hpp"
#include "edgeplan/io/model_store.hpp"
#include "gguf_builder.hpp"
#include "range_server.hpp"
#include "scratch_dir.hpp"

namespace edgeplan {
namespace {

namespace fs = std::filesystem;
using testing_cli::run_cli;
using testing_dir::ScratchDir;
using testing_http::RangeServer;

// Sets an environment variable for one test, and puts back what was there.
class Env {
 public:
  Env(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~Env() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

const fs::path kTiny = fs::path(EDGEPLAN_SOURCE_DIR) / "tests/data/tiny-llama.gguf";

std::vector<std::byte> file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(c.size());
  std::memcpy(out.data(), c.data(), c.size());
  return out;
}

io::Json kv_json(const std::string& model) {
  const testing_cli::CliRun run = run_cli({"kv", "--device", "phone8g", "--model", model, "--format", "json"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return run.exit_code == 0 ? io::Json::parse(run.out) : io::Json();
}

std::string kv_error(const std::string& model) {
  const testing_cli::CliRun run = run_cli({"kv", "--device", "phone8g", "--model", model});
  EXPECT_EQ(run.exit_code, 2) << run.out;
  return run.err;
}

constexpr std::uint64_t kThreeGiB = 3ull << 30;

TEST(RemoteModel, AUrlIsCostedFromItsHeaderAloneAsTheSameFileOnDisk) {
  const ScratchDir cache("remote_cache");
  const Env cache_env("EDGEPLAN_CACHE_DIR", cache.string());
  RangeServer server;
  // The tiny GGUF followed by zeros: a 3 GiB file, of which only the header may cross the network.
  server.file("/m/tiny.gguf", file_bytes(kTiny), kThreeGiB);
  const io::Json remote = kv_json(server.url("/m/tiny.gguf"));
  const io::Json local = kv_json(kTiny.string());
  EXPECT_EQ(remote["results"], local["results"]);
  EXPECT_EQ(remote["inputs"]["model"]["name"], "tiny");
  // The bound this test states: at most 1 MiB of the 3 GiB read (the header is 26 kB; the first read asks for
  // 256 KiB).
  EXPECT_LE(server.body_bytes(), 1u << 20);
  EXPECT_GT(server.body_bytes(), 20'000u);

  // Again: the header comes from the cache, after one request that checks the file (its first byte).
  const std::uint64_t before = server.body_bytes();
  const int requests = server.requests();
  EXPECT_EQ(kv_json(server.url("/m/tiny.gguf"))["results"], local["results"]);
  EXPECT_EQ(server.requests(), requests + 1);
  EXPECT_EQ(server.body_bytes(), before + 1);

  // A redirect is followed (the Hub answers with one to its CDN).
  server.redirect("/r/tiny.gguf", server.url("/m/tiny.gguf"));
  EXPECT_EQ(kv_json(server.url("/r/tiny.gguf"))["results"], local["results"]);
}

TEST(RemoteModel, AServerThatFailsIsAnErrorThatSaysHow) {
  const ScratchDir cache("remote_fail_cache");
  const Env cache_env("EDGEPLAN_CACHE_DIR", cache.string());
  RangeServer server;
  server.file("/m/tiny.gguf", file_bytes(kTiny), kThreeGiB);
  const std::string url = server.url("/m/tiny.gguf");

  EXPECT_EQ(kv_error(server.url("/m/none.gguf")),
            fmt::format("edgeplan: error: cannot read GGUF file '{}': no such file on the server (HTTP 404)\n",
                        server.url("/m/none.gguf")));

  server.mode(RangeServer::Mode::ignore_range);
  EXPECT_NE(kv_error(url).find("the server ignores range requests (it answered a request for bytes 0-0 with the "
                               "whole file); edgeplan reads only the header of a remote file: download it and give "
                               "its path"),
            std::string::npos);

  server.mode(RangeServer::Mode::truncate);  // the first byte comes whole (half of 1 byte is none: it ends early)
  EXPECT_NE(kv_error(url).find("the server's answer ended early"), std::string::npos);

  server.mode(RangeServer::Mode::slow);
  {
    const Env timeout("EDGEPLAN_HTTP_TIMEOUT", "1");
    EXPECT_EQ(kv_error(url), fmt::format("edgeplan: error: cannot read GGUF file '{}': no answer from {} within 1 s "
                                         "(EDGEPLAN_HTTP_TIMEOUT sets the wait)\n", url, server.url("").substr(7)));
  }
  {
    const Env timeout("EDGEPLAN_HTTP_TIMEOUT", "soon");
    EXPECT_NE(kv_error(url).find("EDGEPLAN_HTTP_TIMEOUT 'soon': expected whole seconds from 1 to 3600"),
              std::string::npos);
  }

  // Nothing listening: offline.
  server.mode(RangeServer::Mode::normal);
  EXPECT_NE(kv_error("http://127.0.0.1:1/m/tiny.gguf").find("cannot reach 127.0.0.1:1"), std::string::npos);
}

// An answer that ends early past the first read: the header's second piece is cut short.
TEST(RemoteModel, AHeaderCutShortIsAnError) {
  const ScratchDir cache("remote_cut_cache");
  const Env cache_env("EDGEPLAN_CACHE_DIR", cache.string());
  RangeServer server;
  server.file("/m/tiny.gguf", file_bytes(kTiny), kThreeGiB);
  auto opened = io::RemoteFile::open(server.url("/m/tiny.gguf"));
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  io::RemoteFile& f = *opened;
  EXPECT_EQ(f.size(), kThreeGiB);
  server.mode(RangeServer::Mode::truncate);
  std::vector<std::byte> out(100);
  const auto r = f.read(0, out.size(), out.data());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("the server's answer ended early"), std::string::npos) << r.error().message;
}

TEST(RemoteModel, ASplitSetIsReadShardByShard) {
  const ScratchDir cache("remote_split_cache");
  const Env cache_env("EDGEPLAN_CACHE_DIR", cache.string());
  RangeServer server;
  const std::vector<std::vector<std::pair<std::string, std::uint64_t>>> parts{
      {{"token_embd.weight", 16}, {"blk.0.attn_q.weight", 32}}, {{"blk.0.ffn_up.weight", 64}}, {{"output.weight", 16}}};
  for (std::uint16_t i = 0; i < 3; ++i) {
    server.file(fmt::format("/s/tiny-{:05}-of-00003.gguf", i + 1), io::split_shard(i, 3, 4, parts[i]), 1ull << 30);
  }
  const auto f = io::read_gguf_model(server.url("/s/tiny-00002-of-00003.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->shards, 3u);
  EXPECT_EQ(f->tensors.size(), 4u);
  EXPECT_EQ(f->file_bytes, 3ull << 30);
  EXPECT_LE(server.body_bytes(), 3u << 20);
  const auto profile = io::model_file_profile(server.url("/s/tiny-00001-of-00003.gguf"));
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(profile->name, "tiny");
}

// The Hub's side of hf:ORG/REPO, served locally (HF_ENDPOINT): its file list and its files.
void serve_repo(RangeServer& server, const std::string& repo, const std::vector<std::string>& ggufs) {
  std::string list = R"([{"type":"directory","path":"docs"},{"type":"file","path":"README.md","size":10})";
  for (const std::string& f : ggufs) {
    list += fmt::format(R"(,{{"type":"file","path":"{}","size":{}}})", f, kThreeGiB);
    server.file(fmt::format("/{}/resolve/main/{}", repo, f), file_bytes(kTiny), kThreeGiB);
  }
  server.text(fmt::format("/api/models/{}/tree/main", repo), list + "]");
}

TEST(HuggingFace, AHubRepositoryGivesTheFileOfItsQuantAsLlamaCppPicksIt) {
  const ScratchDir cache("hf_hub_cache"), hf("hf_hub_empty");
  const Env cache_env("EDGEPLAN_CACHE_DIR", cache.string()), hf_env("HF_HUB_CACHE", hf.string());
  RangeServer server;
  const Env endpoint("HF_ENDPOINT", server.url(""));
  serve_repo(server, "org/Tiny-GGUF", {"Tiny-IQ4_XS.gguf", "Tiny-Q4_K_M.gguf", "Tiny-Q8_0.gguf", "mmproj-Tiny-F16.gguf"});
  const io::Json j = kv_json("hf:org/Tiny-GGUF");
  EXPECT_EQ(j["inputs"]["model"]["name"], "org/Tiny-GGUF/Tiny-Q4_K_M.gguf");
  EXPECT_EQ(j["inputs"]["model"]["source"],
            fmt::format("hf:org/Tiny-GGUF/Tiny-Q4_K_M.gguf ({})", server.url("/org/Tiny-GGUF/resolve/main/Tiny-Q4_K_M.gguf")));
  EXPECT_EQ(kv_json("hf:org/Tiny-GGUF:q8_0")["inputs"]["model"]["name"], "org/Tiny-GGUF/Tiny-Q8_0.gguf");
  EXPECT_EQ(kv_json("hf:org/Tiny-GGUF/Tiny-IQ4_XS.gguf")["inputs"]["model"]["name"], "org/Tiny-GGUF/Tiny-IQ4_XS.gguf");
  EXPECT_EQ(kv_error("hf:org/Tiny-GGUF:Q4_XS"),  // IQ4_XS is another type
            "edgeplan: error: hf:org/Tiny-GGUF has no GGUF files of type Q4_XS, but: Tiny-IQ4_XS.gguf, "
            "Tiny-Q4_K_M.gguf, Tiny-Q8_0.gguf; name one after a '/'\n");
  {
    const Env token("HF_TOKEN", "hf_secret");
    kv_json("hf:org/Tiny-GGUF:Q8_0");
    EXPECT_NE(server.last_request().find("Authorization: Bearer hf_secret"), std::string::npos);
  }
  EXPECT_NE(kv_error("hf:org/Missing").find("cannot read the file list of org/Missing on the Hugging Face Hub"),
            std::string::npos);
}

TEST(HuggingFace, TheLocalCacheIsReadFirstWithoutTheNetwork) {
  const ScratchDir hf("hf_local_cache");
  const Env hf_env("HF_HUB_CACHE", hf.string());
  RangeServer server;
  const Env endpoint("HF_ENDPOINT", server.url(""));
  const std::string commit(40, 'c');
  const fs::path repo = hf / "models--org--Tiny-GGUF";
  fs::create_directories(repo / "refs");
  std::ofstream(repo / "refs/main") << commit;
  fs::create_directories(repo / "snapshots" / commit);
  fs::copy_file(kTiny, repo / "snapshots" / commit / "Tiny-Q4_K_M.gguf");
  const io::Json j = kv_json("hf:org/Tiny-GGUF");
  EXPECT_EQ(j["inputs"]["model"]["source"],
            fmt::format("hf:org/Tiny-GGUF/Tiny-Q4_K_M.gguf ({})", (repo / "snapshots" / commit / "Tiny-Q4_K_M.gguf").string()));
  EXPECT_EQ(server.requests(), 0);

  // A safetensors checkpoint in the cache: its config.json.
  const fs::path st = hf / "models--org--Tiny";
  fs::create_directories(st / "refs");
  std::ofstream(st / "refs/main") << commit;
  fs::create_directories(st / "snapshots" / commit);
  fs::copy_file(fs::path(EDGEPLAN_SOURCE_DIR) / "tests/data/hf/Llama-3.2-1B/config.json",
                st / "snapshots" / commit / "config.json");
  EXPECT_EQ(kv_json("hf:org/Tiny")["inputs"]["model"]["name"], "org/Tiny/config.json");
  EXPECT_EQ(server.requests(), 0);

  std::vector<std::string> names;
  for (const io::StoreEntry& e : io::list_stored_models()) {
    if (e.store == "hf-cache") names.push_back(e.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"hf:org/Tiny", "hf:org/Tiny-GGUF/Tiny-Q4_K_M.gguf"}));
}

TEST(LmStudio, AModelInItsFolderIsFoundByPublisherAndRepository) {
  const ScratchDir home("lmstudio_home");
  const Env home_env("HOME", home.string());
  const fs::path dir = home / ".lmstudio/models/lmstudio-community/Tiny-GGUF";
  fs::create_directories(dir);
  fs::copy_file(kTiny, dir / "Tiny-Q4_K_M.gguf");
  fs::copy_file(kTiny, dir / "Tiny-Q8_0.gguf");
  EXPECT_EQ(kv_json("lmstudio:lmstudio-community/Tiny-GGUF")["inputs"]["model"]["source"],
            fmt::format("lmstudio:lmstudio-community/Tiny-GGUF/Tiny-Q4_K_M.gguf ({})", (dir / "Tiny-Q4_K_M.gguf").string()));
  EXPECT_EQ(kv_json("lmstudio:lmstudio-community/Tiny-GGUF:Q8_0")["inputs"]["model"]["name"],
            "lmstudio-community/Tiny-GGUF/Tiny-Q8_0.gguf");
  EXPECT_EQ(kv_error("lmstudio:lmstudio-community/Tiny"),
            fmt::format("edgeplan: error: LM Studio's models folder {} has no lmstudio-community/Tiny; did you mean "
                        "lmstudio-community/Tiny-GGUF?\n", (home / ".lmstudio/models").string()));

  // `edgeplan models` lists them by the names --model takes, with what their headers say.
  const testing_cli::CliRun models = run_cli({"models", "--format", "json"});
  ASSERT_EQ(models.exit_code, 0) << models.err;
  const io::Json listed = io::Json::parse(models.out)["results"]["models"];
  ASSERT_GE(listed.size(), 2u);
  for (const io::Json& row : listed) {
    if (row["store"] != "lmstudio") continue;
    EXPECT_TRUE(row["name"] == "lmstudio:lmstudio-community/Tiny-GGUF/Tiny-Q4_K_M.gguf" ||
                row["name"] == "lmstudio:lmstudio-community/Tiny-GGUF/Tiny-Q8_0.gguf") << row["name"];
    EXPECT_EQ(row["format"], "Q8_0");  // the file's own type, whatever its name says
    EXPECT_EQ(row["arch"], "llama");
    EXPECT_EQ(row["bytes"], 26144);
  }

  // Its settings may put the folder elsewhere.
  const fs::path moved = home / "elsewhere";
  fs::create_directories(moved / "pub/Tiny-GGUF");
  fs::copy_file(kTiny, moved / "pub/Tiny-GGUF/Tiny-Q4_K_M.gguf");
  std::ofstream(home / ".lmstudio/settings.json") << R"({"downloadsFolder": ")" << moved.string() << R"("})";
  EXPECT_EQ(kv_json("lmstudio:pub/Tiny-GGUF")["inputs"]["model"]["name"], "pub/Tiny-GGUF/Tiny-Q4_K_M.gguf");
}

TEST(PickGguf, AQuantIsAWholeWordOfTheFileName) {
  const std::vector<std::string> files{"a/M-IQ4_XS.gguf", "M-Q4_K_M-00001-of-00002.gguf",
                                       "M-Q4_K_M-00002-of-00002.gguf", "M-Q4_K_S.gguf", "mmproj-M-Q4_K_M.gguf"};
  EXPECT_EQ(*io::pick_gguf(files, "", "r"), "M-Q4_K_M-00001-of-00002.gguf");  // a split set by its first shard
  EXPECT_EQ(*io::pick_gguf(files, "iq4_xs", "r"), "a/M-IQ4_XS.gguf");
  EXPECT_EQ(*io::pick_gguf(files, "Q4_K_S", "r"), "M-Q4_K_S.gguf");
  EXPECT_FALSE(io::pick_gguf(files, "Q4_K", "r").ok());  // not inside Q4_K_M or Q4_K_S
  EXPECT_EQ(*io::pick_gguf(std::vector<std::string>{"b.gguf", "a.gguf"}, "", "r"), "b.gguf");  // no Q4_K_M: the first
  EXPECT_EQ(io::pick_gguf(std::vector<std::string>{"mmproj-f16.gguf"}, "", "r").error().message,
            "r holds no GGUF model file");
}

}  // namespace
}  // namespace edgeplan

namespace edgeplan {
namespace {

// A safetensors file whose header lists `tensors` (name, dtype, shape) with their data a hole: the file has the
// size the offsets need, and no byte of data written.
void write_safetensors(const fs::path& p, const std::vector<std::tuple<std::string, std::string, std::vector<std::uint64_t>>>& tensors) {
  io::Json header = io::Json::object();
  std::uint64_t at = 0;
  for (const auto& [name, dtype, shape] : tensors) {
    std::uint64_t n = dtype == "F32" ? 4 : 2;
    for (const std::uint64_t d : shape) n *= d;
    header[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {at, at + n}}};
    at += n;
  }
  const std::string text = header.dump();
  {
    std::ofstream out(p, std::ios::binary);
    const std::uint64_t len = text.size();
    out.write(reinterpret_cast<const char*>(&len), 8);
    out << text;
  }
  fs::resize_file(p, 8 + text.size() + at);
}

// Llama 3.2 1B as its model.safetensors lists it (tied embeddings, norms in BF16 too): 1,235,814,400 weights.
TEST(HuggingFace, ASafetensorsCheckpointIsCostedFromItsTensorHeaders) {
  const ScratchDir dir("hf_checkpoint");
  fs::copy_file(fs::path(EDGEPLAN_SOURCE_DIR) / "tests/data/hf/Llama-3.2-1B/config.json", dir / "config.json");
  std::vector<std::tuple<std::string, std::string, std::vector<std::uint64_t>>> t{
      {"model.embed_tokens.weight", "BF16", {128256, 2048}}, {"model.norm.weight", "BF16", {2048}}};
  for (int l = 0; l < 16; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l);
    for (const auto& [name, rows, cols] : std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>>{
             {"self_attn.q_proj", 2048, 2048}, {"self_attn.k_proj", 512, 2048}, {"self_attn.v_proj", 512, 2048},
             {"self_attn.o_proj", 2048, 2048}, {"mlp.gate_proj", 8192, 2048}, {"mlp.up_proj", 8192, 2048},
             {"mlp.down_proj", 2048, 8192}}) {
      t.push_back({p + name + ".weight", "BF16", {rows, cols}});
    }
    t.push_back({p + "input_layernorm.weight", "BF16", {2048}});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {2048}});
  }
  write_safetensors(dir / "model.safetensors", t);
  // The folder itself names the model (a snapshot), as does its config.json.
  for (const std::string& model : {dir.string(), (dir / "config.json").string()}) {
    const testing_cli::CliRun run = run_cli({"decode", "--device", "phone8g", "--model", model, "--format", "json"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const io::Json f = io::Json::parse(run.out)["results"]["formats"][0];
    EXPECT_EQ(f["format"], "BF16");  // the checkpoint's own, as a GGUF file's type is
    EXPECT_EQ(f["weights_bytes"], 2'471'628'800);  // the rules, norms in F32: 2,471,764,096
  }
  // A checkpoint in a type no llama.cpp format is: an error, not a guess.
  for (auto& tensor : t) std::get<1>(tensor) = "F8_E4M3";
  write_safetensors(dir / "model.safetensors", t);
  EXPECT_NE(kv_error(dir.string()).find("the checkpoint's weights are mostly F8_E4M3"), std::string::npos);
}

}  // namespace
}  // namespace edgeplan

namespace edgeplan {
namespace {

// fit: a model file is a row in its own format; other formats of it are what-ifs, only when --quant asks.
TEST(FitOwnFormat, AModelFileIsARowInItsOwnFormatFirst) {
  const std::string tiny = (fs::path(EDGEPLAN_SOURCE_DIR) / "tests/data/tiny-llama.gguf").string();
  auto formats = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"fit", "--device", "phone8g", "--models", tiny, "--context", "1024", "--all",
                                  "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const testing_cli::CliRun run = run_cli(args);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    std::vector<std::string> out;
    const io::Json doc = io::Json::parse(run.out);
    for (const io::Json& row : doc["results"]["fits"]) out.push_back(row["format"]);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(formats({}), std::vector<std::string>{"Q8_0"});  // the file's general.file_type
  EXPECT_EQ(formats({"--quant", "Q4_K_M,Q8_0"}), (std::vector<std::string>{"Q4_K_M", "Q8_0"}));
  // A profile published in one format (gpt-oss: MXFP4 experts) is that format unless --quant asks for others.
  const testing_cli::CliRun oss = run_cli({"fit", "--device", "apple-m2-24g", "--models", "gpt-oss-20b", "--format", "json"});
  ASSERT_EQ(oss.exit_code, 0) << oss.err;
  const io::Json rows = io::Json::parse(oss.out)["results"]["fits"];
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["format"], "MXFP4_MOE");
  EXPECT_NEAR(rows[0]["weights_bytes"].get<double>() / 1e9, 12.10, 0.005);  // the published file: 12.1 GB
}

}  // namespace
}  // namespace edgeplan

namespace edgeplan {
namespace {

// A path is bytes: a model whose path is not UTF-8 is read (its name shown with the byte as \xFF), not refused
// as "invalid TOML".
TEST(ModelPath, APathThatIsNotUtf8IsRead) {
  const ScratchDir dir("non_utf8_path");
  const fs::path file = dir / "x\xff.gguf";
  fs::copy_file(fs::path(EDGEPLAN_SOURCE_DIR) / "tests/data/tiny-llama.gguf", file);
  const testing_cli::CliRun run = run_cli({"kv", "--device", "phone8g", "--model", file.string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.rfind("kv: x\\xFF (Q8_0) on phone8g\n", 0), 0u) << run.out;
}

}  // namespace
}  // namespace edgeplan
