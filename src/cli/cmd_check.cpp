// edgeplan check PLAN.toml: requirements on device/model pairs, for CI. Each [[check]] entry builds the
// `report` page of its pair (cmd_report.cpp) and evaluates its requirements on the report's results; any failure exits 1. A
// requirement that cannot be evaluated (a figure the device cannot give) is marked in its row, the other checks
// still run, and the command exits 2 at the end. Paths in the plan are relative to the plan's folder.
#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/plan.hpp"
#include "edgeplan/io/profile_reader.hpp"

namespace edgeplan::cli {
namespace {

// A figure as a cell of the checks table, keeping its JSON type.
io::Cell figure_cell(const io::Node& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  return {};
}

}  // namespace

std::vector<CheckEntry> load_plan(const io::ProfileText& text, const std::vector<io::Override>& overrides) {
  return unwrap(io::read_profile<std::vector<CheckEntry>>(text, "plan", overrides, [&text](io::Fields& f) {
    f.optional_string("description");
    std::vector<CheckEntry> entries;
    std::vector<io::Fields> checks = f.tables("check");
    if (checks.empty()) f.fail({}, "has no [[check]] entries");
    for (io::Fields& c : checks) {
      CheckEntry e;
      e.device = io::resolve_beside(c.string("device"), text);
      e.model = io::resolve_beside(c.string("model"), text);
      e.quant = c.optional_string("quant").value_or("");
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

Runner setup_check(Options& opts) {
  auto plan = std::make_shared<std::string>();
  auto runtime = std::make_shared<RuntimeFlags>();
  opts.add(Opt::file, *plan, "Plan file: [[check]] entries with device, model, quant, context and require").required();
  add_runtime_options(opts, *runtime);
  return [plan, runtime](const Context& ctx) {
    io::Report r;
    r.command = "check";
    const io::ProfileText text = ctx.find("plans", *plan);
    const std::vector<CheckEntry> entries = load_plan(text, ctx.overrides());
    r.inputs["plan"] = {{"name", text.name}, {"source", text.display}};
    io::Table t{"checks", {{"check", "check", 0}, {"device", "device"}, {"model", "model"}, {"quant", "quant"},
                           {"requirement", "requirement"}, {"value", "value", 3}, {"passed", "passed"}}, {}};
    std::int64_t index = 0, failed = 0;
    for (const CheckEntry& e : entries) {
      ++index;
      ReportOptions options;
      options.device = e.device;
      options.model = e.model;
      options.quant = e.quant;
      options.kv_type = e.kv_type;
      if (e.context) options.context = *e.context;
      options.runtime = *runtime;
      const io::Report page = report(options, ctx);
      const io::Node results = io::full_results(page);
      const std::string quant = page.inputs["quant"].get<std::string>();  // as given, or the file's own
      if (results["beyond_trained"].get<bool>()) {
        r.notes.push_back(fmt::format("check {} ({} on {}): context {} is beyond the {} tokens the model was trained for",
                                      index, e.model, e.device, options.context,
                                      results["trained_context"].get<std::uint64_t>()));
      }
      for (const io::Requirement& req : e.requirements) {
        auto outcome = io::evaluate_requirement(results, req);
        if (!outcome) {
          t.add({index, e.device, e.model, quant, req.text, {}, {}});
          r.errors.push_back(fmt::format("{}: check {} ({} on {}) not evaluable: {} (`edgeplan report --device {} "
                                         "--model {}` shows why)", text.display, index, e.model, e.device,
                                         outcome.error().message, e.device, e.model));
          continue;
        }
        t.add({index, e.device, e.model, quant, req.text, figure_cell(outcome->figure), outcome->pass});
        if (!outcome->pass) {
          ++failed;
          r.failures.push_back(fmt::format("check {} ({} on {}) failed: {} (got {})", index, e.model, e.device,
                                           req.text, outcome->value));
        }
      }
    }
    r.results["passed"] = failed == 0 && r.errors.empty();
    r.results["failed_requirements"] = failed;
    r.results["unevaluable_requirements"] = r.errors.size();
    r.tables.push_back(std::move(t));
    r.title = fmt::format("check: {} ({} pairs)", text.display, entries.size());
    if (failed > 0) r.notes.push_back(fmt::format("{} requirement(s) failed", failed));
    if (!r.errors.empty()) r.notes.push_back(fmt::format("{} requirement(s) could not be evaluated", r.errors.size()));
    if (failed == 0 && r.errors.empty()) r.notes.push_back("all requirements hold");
    return r;
  };
}

}  // namespace edgeplan::cli
