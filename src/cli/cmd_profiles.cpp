// edgeplan profiles: every profile visible through the search path, and where each comes from.
#include <fmt/format.h>

#include "cli/command.hpp"
#include "edgeplan/io/toml_parse.hpp"

namespace edgeplan::cli {
namespace {

// The kinds of profile, by sub-directory.
const std::vector<std::string> kKinds{"devices", "models", "graphs", "clouds", "requests", "runtimes", "storage"};

std::string description_of(const io::ProfileText& p) {
  const auto t = io::parse_toml(p.text, p.display);
  return t ? (*t)["description"].value_or(std::string()) : "(invalid TOML)";
}

}  // namespace

Runner setup_profiles(Options&) {
  return [](const Context& ctx) {
    io::Report r;
    r.command = "profiles";
    r.title = "profiles (first match wins: --profiles, EDGEPLAN_PROFILE_PATH, share directory, builtin)";
    io::Node dirs = io::Node::array();
    for (const std::string& d : ctx.search_path().dirs) dirs.push_back(d);
    r.inputs["search_path"] = dirs;
    io::Table t{"profiles", {{"name", "name"}, {"kind", "kind"}, {"from", "source"}, {"description", "description"}}, {}};
    for (const std::string& kind : kKinds) {
      for (const io::ProfileText& p : io::list_profiles(kind, ctx.search_path())) {
        t.add({p.name, kind.ends_with('s') ? kind.substr(0, kind.size() - 1) : kind, p.display, description_of(p)});
      }
    }
    r.tables.push_back(std::move(t));
    return r;
  };
}

}  // namespace edgeplan::cli
