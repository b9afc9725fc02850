// edgeplan check PLAN.toml: requirements on device/model pairs, for CI. Each [[check]] entry runs
// `report` for its pair and evaluates its requirements on the report's results; any failure exits 1.
#include <fmt/format.h>

#include "cli/command.hpp"
#include "edgeplan/io/require.hpp"

namespace edgeplan::cli {
namespace {

struct CheckEntry {
  std::string device, model, quant, kv_type;
  std::optional<std::uint32_t> context;
  std::vector<io::Requirement> requirements;
};

std::vector<CheckEntry> load_plan(const io::ProfileText& text, const std::vector<io::Override>& overrides) {
  return unwrap(io::read_profile<std::vector<CheckEntry>>(text, "plan", overrides, [](io::Fields& f) {
    f.optional_string("description");
    std::vector<CheckEntry> entries;
    std::vector<io::Fields> checks = f.tables("check");
    if (checks.empty()) f.fail({}, "has no [[check]] entries");
    for (io::Fields& c : checks) {
      CheckEntry e;
      e.device = c.string("device");
      e.model = c.string("model");
      e.quant = c.optional_string("quant").value_or("Q4_K_M");
      e.kv_type = c.optional_string("kv_type").value_or("f16");
      e.context = c.optional_count("context", context_range);
      for (const std::string& expr : c.strings("require")) {
        auto req = io::parse_requirement(expr);
        if (!req) c.fail("require", "holds a bad requirement: " + req.error().message);
        e.requirements.push_back(*req);
      }
      if (e.requirements.empty()) c.fail("require", "is empty: give at least one requirement");
      c.finish();
      entries.push_back(std::move(e));
    }
    return entries;
  }));
}

}  // namespace

Runner setup_check(CLI::App& app) {
  auto plan = std::make_shared<std::string>();
  app.add_option("plan", *plan, "Plan file: [[check]] entries with device, model, quant, context and require")
      ->required();
  return [plan](const Context& ctx) {
    io::Report r;
    r.command = "check";
    const io::ProfileText text = ctx.find("plans", *plan);
    const std::vector<CheckEntry> entries = load_plan(text, ctx.overrides());
    r.inputs["plan"] = {{"name", text.name}, {"source", text.display}};
    io::Table t{"checks", {{"check", "check", 0}, {"device", "device"}, {"model", "model"}, {"quant", "quant"},
                           {"requirement", "requirement"}, {"value", "value"}, {"passed", "passed"}}, {}};
    std::int64_t index = 0, failed = 0;
    for (const CheckEntry& e : entries) {
      ++index;
      std::vector<std::string> args{"--device", e.device, "--model", e.model, "--quant", e.quant, "--kv-type", e.kv_type};
      if (e.context) args.insert(args.end(), {"--context", std::to_string(*e.context)});
      const io::Json results = io::full_results(run_command("report", args, ctx));
      for (const io::Requirement& req : e.requirements) {
        auto outcome = io::evaluate_requirement(results, req);
        if (!outcome) throw UsageError(fmt::format("{}: check {}: {}", text.display, index, outcome.error().message));
        t.add({index, e.device, e.model, e.quant, req.text, outcome->value, outcome->pass});
        if (!outcome->pass) {
          ++failed;
          r.failures.push_back(fmt::format("check {} ({} on {}) failed: {} (got {})", index, e.model, e.device,
                                           req.text, outcome->value));
        }
      }
    }
    r.results["passed"] = failed == 0;
    r.results["failed_requirements"] = failed;
    r.tables.push_back(std::move(t));
    r.title = fmt::format("check: {} ({} pairs)", text.display, entries.size());
    r.notes.push_back(failed == 0 ? "all requirements hold" : fmt::format("{} requirement(s) failed", failed));
    return r;
  };
}

}  // namespace edgeplan::cli
