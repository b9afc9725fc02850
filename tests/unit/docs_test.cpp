// Keeps the documentation honest: docs/profiles.md documents exactly the keys the profile loaders accept,
// every `edgeplan COMMAND` and `--option` quoted in README.md and docs/*.md exists, and nothing in the tree
// points at a file outside the repository.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "cli_run.hpp"
#include "edgeplan/io/embedded.hpp"
#include "edgeplan/io/graph.hpp"
#include "edgeplan/io/profiles.hpp"
#include "edgeplan/io/runtime_class.hpp"
#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/route.hpp"
#include "test_files.hpp"
#include "edgeplan/io/schema/kinds.hpp"

namespace edgeplan {
namespace {

namespace fs = std::filesystem;
using testing_cli::run_cli;

const fs::path kRoot{EDGEPLAN_SOURCE_DIR};

using testing_files::lines_of;
using testing_files::read_file;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

std::string join(const std::vector<std::string>& parts, char sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : std::string(1, sep)) + p;
  return out;
}

// ---- Profile keys --------------------------------------------------------------------------------------

// The profile kinds, as docs/profiles.md names their headings and the built-in tree their directories.
struct Kind {
  std::string heading;  // "Device": the "## Device (...)" section and its subsections
  std::string dir;      // "devices"
};
const std::vector<Kind> kKinds{{"Device", "devices"}, {"Model", "models"},      {"Graph", "graphs"},
                               {"Cloud", "clouds"},   {"Requests", "requests"}, {"Runtime class", "runtimes"},
                               {"Storage class", "storage"}};

// A key with its per-profile names replaced by the placeholders the docs use: units.npu.ops -> units.U.ops,
// formats.Q4_K_M.bytes -> formats.F.bytes.
std::string normalize(const std::string& dir, const std::string& key) {
  std::vector<std::string> parts = split(key, '.');
  if (dir == "devices" && parts.size() > 2 && parts[0] == "units") parts[1] = "U";
  if (dir == "models" && parts.size() > 2 && parts[0] == "formats") parts[1] = "F";
  return join(parts, '.');
}

// The leaf keys of a table, dotted; arrays of tables contribute their entries' keys under the array's name.
void collect_keys(const toml::table& t, const std::string& prefix, std::set<std::string>& out) {
  for (const auto& [k, v] : t) {
    const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const toml::table* sub = v.as_table()) {
      collect_keys(*sub, key, out);
    } else if (const toml::array* arr = v.as_array(); arr && arr->is_array_of_tables()) {
      for (const toml::node& e : *arr) collect_keys(*e.as_table(), key, out);
    } else {
      out.insert(key);
    }
  }
}

// Every key the built-in profiles of a kind use, normalized.
std::map<std::string, std::set<std::string>> builtin_keys() {
  std::map<std::string, std::set<std::string>> out;
  for (const io::EmbeddedFile& f : io::embedded_profiles()) {
    const std::string path(f.path);
    const std::string dir = path.substr(0, path.find('/'));
    std::set<std::string> keys;
    collect_keys(toml::parse(f.text, path), "", keys);
    for (const std::string& k : keys) out[dir].insert(normalize(dir, k));
  }
  return out;
}

// The keys of the tables in docs/profiles.md, per kind: the backquoted names in a table row's first cell
// (`mla.rope_dim`, `mla.nope_dim` is two keys). Table markers (`[prefill]`, `[[ops]]`) are not leaf keys.
// A request file's columns are the keys of its [[request]] tables.
std::map<std::string, std::set<std::string>> documented_keys() {
  std::map<std::string, std::set<std::string>> out;
  std::string dir;
  const std::regex quoted("`([^`]+)`");
  for (const std::string& line : lines_of(read_file(kRoot / "docs/profiles.md"))) {
    if (line.rfind("## ", 0) == 0) {
      dir.clear();
      for (const Kind& k : kKinds) {
        if (line.rfind("## " + k.heading + " (", 0) == 0) dir = k.dir;
      }
      continue;
    }
    if (dir.empty() || line.rfind("| `", 0) != 0) continue;
    const std::string cell = line.substr(1, line.find('|', 1) - 1);
    for (std::sregex_iterator it(cell.begin(), cell.end(), quoted), end; it != end; ++it) {
      std::string key = (*it)[1];
      if (key.front() == '[') continue;
      if (dir == "requests" && key != "description") key = "request." + key;
      out[dir].insert(key);
    }
  }
  return out;
}

template <class T>
std::string error_of(const Result<T>& r) {
  return r ? std::string() : r.error().message;
}

// Loads one profile of `dir` from `text` with overrides; the loader's error, or "" when it loads.
std::string load_error(const std::string& dir, const io::ProfileText& text, const std::vector<io::Override>& o) {
  if (dir == "devices") return error_of(io::load_device(text, o));
  if (dir == "models") return error_of(io::load_model(text, o));
  if (dir == "graphs") return error_of(io::load_graph(text, o));
  return error_of(io::load_cloud(text, o));
}

const char* override_name(const std::string& dir) {
  if (dir == "devices") return "device";
  if (dir == "models") return "model";
  if (dir == "graphs") return "graph";
  return "cloud";
}

// `s` with each whole occurrence of the key `from` (not the start of a longer name) replaced by KEY.
std::string blank_key(std::string s, const std::string& from) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + 1)) {
    const std::size_t end = at + from.size();
    if (end < s.size() && (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_')) continue;
    s.replace(at, from.size(), "KEY");
  }
  return s;
}

// Whether a loader accepts `key` (normalized; `siblings` are the documented keys of its kind) in a profile of
// `dir`. The key is set, alone or with its documented siblings of the same table, on each built-in profile of
// the kind with values of several types, and so is a made-up key in its place. The loader knows the key when
// for some attempt its error differs from the made-up key's (with the key's name blanked out in both) and
// does not call it unknown: a required key missing elsewhere fails both alike, an unknown key reads as one.
bool loader_accepts(const std::string& dir, const std::string& key, const std::set<std::string>& siblings = {}) {
  // No overrides: their documented keys must appear in a built-in profile.
  if (dir == "requests" || dir == "storage") return false;
  if (dir == "runtimes") {
    // A top-level key of a runtime class: added to a built-in class's text, which then loads, or fails for another
    // reason than an unknown key.
    for (const io::EmbeddedFile& f : io::embedded_profiles()) {
      if (std::string(f.path).rfind("runtimes/", 0) != 0) continue;
      const std::string text = key + " = 0.5\n" + std::string(f.text);
      const std::string error = error_of(io::load_runtime_class({std::string(f.path), "builtin", "builtin", text}));
      if (error.find("unknown key") == std::string::npos) return true;
    }
    return false;
  }
  auto concrete = [](std::string k, const std::string& unit) {
    std::vector<std::string> parts = split(k, '.');
    if (parts.size() > 2 && parts[0] == "units" && parts[1] == "U") parts[1] = unit;
    if (parts.size() > 2 && parts[0] == "formats" && parts[1] == "F") parts[1] = "Q4_K_M";
    return join(parts, '.');
  };
  const std::string section = key.substr(0, key.rfind('.') == std::string::npos ? 0 : key.rfind('.'));
  const std::string bogus = section.empty() ? "zz_not_a_key" : section + ".zz_not_a_key";
  const std::string profile = override_name(dir);
  for (const io::EmbeddedFile& f : io::embedded_profiles()) {
    if (std::string(f.path).rfind(dir + "/", 0) != 0) continue;
    const io::ProfileText text{std::string(f.path), "builtin:" + std::string(f.path), "builtin", std::string(f.text)};
    for (const char* unit : {"npu", "gpu", "cpu"}) {
      for (const bool with_siblings : {false, true}) {
        for (const char* value : {"1", "2", "0.5", "true", "\"x\"", "[\"matmul\"]", "\"chapter\"", "\"llama\""}) {
          auto attempt = [&](const std::string& k) {
            std::vector<io::Override> o;
            if (with_siblings) {
              for (const std::string& s : siblings) {
                if (s != key && s.rfind(section + ".", 0) == 0 && s.find('.', section.size() + 1) == std::string::npos) {
                  o.push_back({profile, concrete(s, unit), value, "(docs test)"});
                }
              }
            }
            o.push_back({profile, concrete(k, unit), value, "(docs test)"});
            return load_error(dir, text, o);
          };
          const std::string known = blank_key(attempt(key), concrete(key, unit));
          const std::string made_up = blank_key(attempt(bogus), concrete(bogus, unit));
          if (known.find("unknown key") == std::string::npos && known != made_up) return true;
        }
      }
    }
  }
  return false;
}

// docs/profiles.md documents exactly the keys of the schema tables (io/schema/kinds.hpp), one line per row.
TEST(DocsProfiles, DocumentedKeysAreTheSchemaKeys) {
  const auto documented = documented_keys();
  auto as_set = [](const std::vector<std::string>& keys, const std::string& prefix) {
    std::set<std::string> out;
    for (const std::string& k : keys) out.insert(prefix + k);
    return out;
  };
  EXPECT_EQ(documented.at("devices"), as_set(io::schema::schema_keys(io::schema::device_schema()), ""));
  EXPECT_EQ(documented.at("models"), as_set(io::schema::schema_keys(io::schema::model_schema()), ""));
  EXPECT_EQ(documented.at("clouds"), as_set(io::schema::schema_keys(io::schema::cloud_schema()), ""));
  std::set<std::string> requests = as_set(io::schema::schema_keys(io::schema::request_schema()), "request.");
  requests.insert("description");
  EXPECT_EQ(documented.at("requests"), requests);
  std::set<std::string> graph = as_set(io::schema::schema_keys(io::schema::op_schema()), "ops.");
  graph.insert({"description", "source", "seq"});
  EXPECT_EQ(documented.at("graphs"), graph);
  EXPECT_EQ(documented.at("runtimes"), as_set(io::schema::schema_keys(io::schema::runtime_class_schema()), ""));
  EXPECT_EQ(documented.at("storage"), as_set(io::schema::schema_keys(io::schema::storage_class_schema()), ""));
}

TEST(DocsProfiles, EveryKeyABuiltInProfileUsesIsDocumented) {
  const auto documented = documented_keys();
  for (const auto& [dir, keys] : builtin_keys()) {
    const auto it = documented.find(dir);
    ASSERT_NE(it, documented.end()) << "docs/profiles.md has no section for " << dir;
    for (const std::string& k : keys) {
      EXPECT_TRUE(it->second.count(k)) << "profiles/" << dir << " use " << k << ", not in docs/profiles.md";
    }
  }
}

TEST(DocsProfiles, EveryDocumentedKeyIsAcceptedByTheLoader) {
  const auto used = builtin_keys();
  const auto documented = documented_keys();
  ASSERT_EQ(documented.size(), kKinds.size());
  for (const auto& [dir, keys] : documented) {
    for (const std::string& k : keys) {
      if (used.count(dir) && used.at(dir).count(k)) continue;  // a built-in profile loads with it
      EXPECT_TRUE(loader_accepts(dir, k, keys)) << "docs/profiles.md documents " << k << " for " << dir
                                          << ", which the loader rejects as an unknown key";
    }
  }
}

TEST(DocsProfiles, TheCheckRejectsAKeyTheLoaderDoesNotKnow) {
  EXPECT_FALSE(loader_accepts("devices", "bandwidth_gbs"));
  EXPECT_FALSE(loader_accepts("models", "formats.F.bits"));
  EXPECT_FALSE(loader_accepts("graphs", "ops.size"));
  EXPECT_FALSE(loader_accepts("runtimes", "q4_0_eff"));
  EXPECT_TRUE(loader_accepts("runtimes", "q5_k_efficiency"));
  EXPECT_FALSE(loader_accepts("devices", "power.idle_watts", {"power.prefill_w", "power.decode_w"}));
  EXPECT_TRUE(loader_accepts("devices", "units.U.bandwidth_gbps"));
  EXPECT_TRUE(loader_accepts("devices", "power.idle_w", {"power.prefill_w", "power.decode_w"}));
}

// ---- Commands and options ----------------------------------------------------------------------------

std::vector<fs::path> doc_files() {
  std::vector<fs::path> out{kRoot / "README.md"};
  for (const auto& e : fs::directory_iterator(kRoot / "docs")) {
    if (e.path().extension() == ".md") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The code in a Markdown file: each fenced or indented code line (a line ending in a backslash joined with
// the next) and each inline code span.
std::vector<std::string> code_of(const std::string& text) {
  std::vector<std::string> out;
  bool fenced = false;
  std::string pending;
  const std::regex span("`([^`]+)`");
  const std::regex comment(R"((^|\s)#.*)");  // a shell, YAML or TOML comment
  for (const std::string& line : lines_of(text)) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (fenced || line.rfind("    ", 0) == 0) {
      pending += line;
      if (!pending.empty() && pending.back() == '\\') {
        pending.pop_back();
        continue;
      }
      out.push_back(std::regex_replace(pending, comment, ""));
      pending.clear();
      continue;
    }
    for (std::sregex_iterator it(line.begin(), line.end(), span), end; it != end; ++it) out.push_back((*it)[1]);
  }
  return out;
}

struct Help {
  std::map<std::string, std::string> by_command;  // "kv" -> `edgeplan kv --help`
  std::string all;                                // every command's help
};

const Help& help() {
  static const Help h = [] {
    Help out;
    const std::string top = run_cli({"--help"}).out;
    const std::regex command_line(R"(^\s+([a-z]+)\s{2,})");
    for (const std::string& line : lines_of(top)) {
      std::smatch m;
      if (!std::regex_search(line, m, command_line)) continue;
      const auto run = run_cli({m[1].str(), "--help"});
      if (run.exit_code != 0) continue;
      out.by_command[m[1].str()] = run.out;
      out.all += run.out;
    }
    out.by_command["help"] = run_cli({"help"}).out;  // `edgeplan help [COMMAND]`, beside the commands
    out.by_command["completion"] = "bash zsh fish";  // `edgeplan completion SHELL`, which the help does not list
    out.by_command["man"] = "";  // `edgeplan man`, which the help does not list either
    return out;
  }();
  return h;
}

bool has_option(const std::string& help_text, const std::string& option) {
  const std::regex word("(^|[^a-z0-9-])" + option + "($|[^a-z0-9-])");
  return std::regex_search(help_text, word);
}

TEST(DocsCommands, TheHelpListsTheCommands) {
  EXPECT_GE(help().by_command.size(), 10u);
  EXPECT_TRUE(help().by_command.count("kv"));
  EXPECT_TRUE(has_option(help().by_command.at("kv"), "--context"));
  EXPECT_FALSE(has_option(help().by_command.at("kv"), "--contxt"));
}

TEST(DocsCommands, EveryQuotedCommandAndOptionExists) {
  const std::regex invocation(R"((^|[\s/])edgeplan\s+([a-z][a-z-]*))");
  const std::regex option(R"((^|[\s'"(=])(--[a-z][a-z0-9-]*))");
  for (const fs::path& file : doc_files()) {
    const std::string name = fs::relative(file, kRoot).string();
    for (const std::string& code : code_of(read_file(file))) {
      // `edgeplan kv --context 8192`, or a command's name first: `place --model M --prompt S`.
      std::smatch m;
      const std::string first = code.substr(0, code.find(' '));
      const bool named = std::regex_search(code, m, invocation);
      if (named || (help().by_command.count(first) && code.find("--") != std::string::npos)) {
        const std::string command = named ? m[2].str() : first;
        const auto it = help().by_command.find(command);
        EXPECT_NE(it, help().by_command.end()) << name << ": `edgeplan " << command << "` is not a command";
        if (it == help().by_command.end()) continue;
        // The options of this invocation, up to the next command of the line.
        std::string rest = named ? m.suffix().str() : code.substr(first.size());
        for (const char* sep : {"|", "&&", ";", ">>"}) rest = rest.substr(0, rest.find(sep));
        for (std::sregex_iterator o(rest.begin(), rest.end(), option), end; o != end; ++o) {
          EXPECT_TRUE(has_option(it->second, (*o)[2])) << name << ": `edgeplan " << command << "` has no option "
                                                        << (*o)[2] << " (in: " << code << ")";
        }
      } else if (code.rfind("--", 0) == 0) {
        std::smatch o;
        const std::string lone = code.substr(0, code.find_first_of(" =")) + " ";
        if (std::regex_search(lone, o, option)) {
          EXPECT_TRUE(has_option(help().all, o[2])) << name << ": no command has the option " << o[2];
        }
      }
    }
  }
}

// ---- Files outside the repository --------------------------------------------------------------------

TEST(DocsSources, NothingPointsAtTheSharedFolder) {
  // The folder that holds the project's private notes is not part of the repository: no file may cite it.
  const std::string needle = std::string("shared") + "/";
  for (auto it = fs::recursive_directory_iterator(kRoot); it != fs::recursive_directory_iterator(); ++it) {
    const std::string leaf = it->path().filename().string();
    if (it->is_directory() && (leaf == ".git" || leaf == "build" || leaf.rfind("build-", 0) == 0)) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    const std::string text = read_file(it->path());
    EXPECT_EQ(text.find(needle), std::string::npos) << fs::relative(it->path(), kRoot).string() << " cites "
                                                     << needle << "...";
  }
}

// docs/json.md lists the formats of the format table (io::formats()), in its order, with its descriptions, and
// --help names them all.
TEST(DocsFormats, JsonMdListsTheFormatTable) {
  const std::string doc = read_file(kRoot / "docs/json.md");
  std::string expected = "| format | prints |\n|---|---|\n";
  for (const io::Format& f : io::formats()) expected += fmt::format("| `{}` | {} |\n", f.name, f.description);
  EXPECT_NE(doc.find(expected), std::string::npos) << "docs/json.md should hold:\n" << expected;
  EXPECT_NE(help().by_command.at("kv").find("Output format: " + io::format_names()), std::string::npos);
}

}  // namespace
}  // namespace edgeplan
