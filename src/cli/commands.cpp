#include <array>
#include <iostream>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "edgeplan/io/inputs.hpp"
#include "edgeplan/io/require.hpp"
#include "edgeplan/io/suggest.hpp"

namespace edgeplan::cli {
namespace {

constexpr std::array kCommands{
    Command{"decode", "Decode speed: weight bytes per format, tokens/s, optional speculation", setup_decode},
    Command{"kv", "KV-cache budget and the longest context per cache type", setup_kv},
    Command{"place", "Operator placement of a prefill layer across NPU, GPU and CPU, fallbacks and transfers",
            setup_place},
    Command{"profiles", "List the device and model profiles and where each comes from", setup_profiles},
    Command{"quant", "Weight quantization error (MAE, max, RMSE, cosine of W.x) and bytes per method", setup_quant},
    Command{"bench", "Measure this machine: memory read bandwidth, matmul GFLOPS, storage read rate", setup_bench},
    Command{"calibrate", "Fit a device's utilization, per-token overhead and prefill efficiency to llama-bench results",
            setup_calibrate},
};

// The profiles a --set key may start with.
const std::vector<std::string> kOverrideProfiles{"device", "model"};

io::Format parse_format(const std::string& f) {
  if (f == "table") return io::Format::table;
  if (f == "json") return io::Format::json;
  if (f == "csv") return io::Format::csv;
  throw UsageError(fmt::format("--format {}: expected table, json or csv", f));
}

void add_common(CLI::App& app, CommonOptions& o) {
  app.add_option("--profiles", o.profile_dirs, "Directory of profiles searched before the built-in ones (repeatable)")
      ->type_name("DIR");
  app.add_option("--set", o.sets, "Override a profile value, e.g. device.bandwidth_gbps=120 (repeatable)")
      ->type_name("KEY=VALUE");
  app.add_option("--format", o.format, "Output format: table, json or csv")->type_name("FMT")->capture_default_str();
  app.add_option("--require", o.requirements, "Fail (exit 1) unless 'FIELD OP VALUE' holds, e.g. 'fits == true' (repeatable)")
      ->type_name("EXPR");
}

}  // namespace

std::span<const Command> commands() { return kCommands; }

Context::Context(const CommonOptions& options) : path_(io::default_search_path(options.profile_dirs)) {
  overrides_ = unwrap(io::parse_overrides(options.sets, kOverrideProfiles));
}

io::ProfileText Context::find(const std::string& kind, const std::string& name) const {
  return unwrap(io::find_profile(kind, name, path_));
}

DeviceSpec Context::device(const std::string& name, io::Json& inputs) const {
  const io::ProfileText text = find("devices", name);
  DeviceSpec d = unwrap(io::load_device(text, overrides_));
  io::Json j = {{"name", d.name}, {"source", text.display}};
  j.update(io::to_json(d));
  inputs["device"] = j;
  return d;
}

ModelSpec Context::model(const std::string& name, io::Json& inputs) const {
  const io::ProfileText text = find("models", name);
  ModelSpec m = unwrap(io::load_model(text, overrides_));
  io::Json j = {{"name", m.name}, {"source", text.display}};
  j.update(io::to_json(m));
  inputs["model"] = j;
  return m;
}

std::vector<std::string> split_list(const std::string& text, const std::string& option) {
  std::vector<std::string> out;
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    std::string item(rest.substr(0, comma));
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (item.empty()) throw UsageError(fmt::format("{} '{}': empty item in the list", option, text));
    out.push_back(item);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"edgeplan: capacity planner for running large language models on edge devices", "edgeplan"};
  app.set_version_flag("--version", std::string("edgeplan ") + EDGEPLAN_VERSION);
  app.require_subcommand(1);
  app.footer("Run 'edgeplan COMMAND --help' for a command's options. Exit codes: 0 ok, 1 a --require failed, "
             "2 bad usage or input.");
  CommonOptions common;
  std::vector<std::pair<CLI::App*, Runner>> runners;
  for (const Command& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    add_common(*sub, common);
    runners.emplace_back(sub, c.setup(*sub));
  }

  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const Command& c : kCommands) names.emplace_back(c.name);
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      err << fmt::format("edgeplan: error: unknown command '{}'{}\n", argv[1], io::did_you_mean(argv[1], names));
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);
    err << "edgeplan: error: " << e.what() << "\n";
    err << "Run 'edgeplan --help' or 'edgeplan COMMAND --help' for usage.\n";
    return kExitUsage;
  }

  try {
    const io::Format format = parse_format(common.format);
    std::vector<io::Requirement> reqs;
    for (const std::string& r : common.requirements) reqs.push_back(unwrap(io::parse_requirement(r)));
    const Context context(common);
    for (auto& [sub, runner] : runners) {
      if (!sub->parsed()) continue;
      const io::Report report = runner(context);
      const auto failures = unwrap(io::check_requirements(io::full_results(report), reqs));
      out << io::render(report, format);
      for (const std::string& f : failures) err << "edgeplan: " << f << "\n";
      return failures.empty() ? kExitOk : kExitRequirementFailed;
    }
  } catch (const UsageError& e) {
    err << "edgeplan: error: " << e.what() << "\n";
    return kExitUsage;
  }
  return kExitUsage;
}

}  // namespace edgeplan::cli
