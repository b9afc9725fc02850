// The driver: parses the command line, runs the named command (or its sweep), prints, and turns requirements
// and errors into exit codes.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <new>
#include <string_view>

#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/app.hpp"
#include "edgeplan_commit.hpp"  // generated at build time: EDGEPLAN_COMMIT (cmake/Commit.cmake)
#include "edgeplan/io/render/renderer.hpp"
#include "edgeplan/io/sweep.hpp"
#include "edgeplan/io/text.hpp"
#include "edgeplan/io/warnings.hpp"
#include "edgeplan/util/names.hpp"

namespace edgeplan::cli {

// The command's own gate (check) first, then the --require expressions.
// Every model of a report costed by the generic rule says so (docs/model.md, "Generic architectures").
void note_generic_rule(io::Report& report) {
  for (const char* key : {"model", "draft"}) {
    const io::Node& m = std::as_const(report.inputs)[key];
    if (!m.is_object() || !m.contains("generic_of")) continue;
    report.notes.push_back(fmt::format(
        "{}: its architecture {} is costed by the generic rule: its weights from the file's tensors, KV and state from "
        "the standard metadata keys, compute as {}'s graph of its widths (docs/model.md, \"Generic architectures\")",
        m["name"].string(), m["generic_of"].string(), m["arch"].is_string() ? m["arch"].string() : "llama"));
  }
}

Verdict verdict_of(const io::Report& report, const std::vector<io::Requirement>& reqs) {
  Verdict v{report.failures, report.errors};
  if (reqs.empty()) return v;  // the fields are gathered only to be looked up
  const std::vector<std::string> unmet = unwrap(io::check_requirements(io::full_results(report), reqs));
  v.failures.insert(v.failures.end(), unmet.begin(), unmet.end());
  return v;
}

void need_charts(const io::Report& report, const io::Format& format) {
  if (!format.draws || !report.charts.empty()) return;
  std::string drawn;
  for (const Command& c : commands()) {
    if (c.charts) drawn += (drawn.empty() ? "" : ", ") + std::string(c.name);
  }
  throw UsageError(fmt::format("--format {}: this {} output has no chart; charts are drawn by {} (and a --sweep of "
                               "them); docs/charts.md says which options each needs", format.name, report.command,
                               drawn));
}

namespace {

const io::Format& parse_format(const std::string& f) {
  if (const io::Format* format = io::find_format(f)) {
    if (const std::string why = format->unavailable ? format->unavailable() : ""; !why.empty()) {
      throw UsageError(fmt::format("--format {}: {}", f, why));
    }
    return *format;
  }
  throw UsageError(fmt::format("--format {}: expected {}", f, io::format_names()));
}


// Warnings recorded while the command ran come after its output (and after an error), each once.
void print_warnings(std::ostream& err) {
  for (const std::string& w : io::take_warnings()) err << "edgeplan: warning: " << w << "\n";
}

constexpr std::string_view kDescription = "capacity planner for running large language models on edge devices";
constexpr std::string_view kExitCodes = "0 ok, 1 a --require failed, 2 bad usage or input";

// The top-level parser: description, version, footer; the commands are added by the caller.
void set_up(CLI::App& app) {
  app.description(fmt::format("edgeplan: {}", kDescription));
  app.name("edgeplan");
  app.set_version_flag("-V,--version", "edgeplan " + std::string(io::version()) + " (commit " + EDGEPLAN_COMMIT + ")");
  app.require_subcommand(1);
  app.footer(fmt::format("Run 'edgeplan COMMAND --help' for a command's options. Exit codes: {}.", kExitCodes));
}

// Text for roff: a backslash as \e, every '-' as \- (an option pasted from the page stays ASCII), a line that
// would start with a control character ('.' or an apostrophe) behind \&.
std::string roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

// The man page: the top-level help, then every command's --help as the parser prints it (so the option table is
// its one source), each in its own section.
std::string man_page() {
  std::string page = fmt::format(".TH EDGEPLAN 1 \"\" \"edgeplan {}\" \"User Commands\"\n.SH NAME\nedgeplan \\- {}\n"
                                 ".SH SYNOPSIS\n.B edgeplan\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n.SH DESCRIPTION\n.nf\n",
                                 io::version(), kDescription);
  {
    CLI::App app;
    set_up(app);
    for (const Command& c : commands()) app.add_subcommand(c.name, c.description);
    page += roff(app.help()) + ".fi\n.SH COMMANDS\n";
  }
  for (const Command& c : commands()) {
    CLI::App app;
    set_up(app);
    CommonOptions common;
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    add_command(*sub, c, common);
    page += fmt::format(".SS {}\n.nf\n{}.fi\n", c.name, roff(sub->help("edgeplan")));
  }
  return page + fmt::format(".SH EXIT STATUS\n{}.\n", kExitCodes);
}

int run_command_line(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  // `edgeplan man`: the man page (not listed in the help; the build writes it as edgeplan.1).
  if (argc == 2 && std::string_view(argv[1]) == "man") {
    out << man_page();
    return kExitOk;
  }
  // `edgeplan completion SHELL`: the shell's completion script (not listed in the help; cmake --install
  // installs the three scripts).
  if (argc > 1 && std::string_view(argv[1]) == "completion") {
    const std::optional<std::string> script = argc == 3 ? completion_script(argv[2]) : std::nullopt;
    if (!script) {
      err << "edgeplan: error: usage: edgeplan completion bash|zsh|fish\n";
      return kExitUsage;
    }
    out << *script;
    return kExitOk;
  }
  CLI::App app;
  set_up(app);
  CommonOptions common;
  // Only the command named on the command line is built, with its options (`edgeplan help COMMAND`: that one):
  // building every command's parser is most of the work of a short run. Without one, every command is a name in
  // the top-level help.
  const bool help = argc > 1 && std::string_view(argv[1]) == "help";
  const std::string_view named = argc > (help ? 2 : 1) ? argv[help ? 2 : 1] : "";
  const auto found = std::find_if(commands().begin(), commands().end(),
                                  [&](const Command& c) { return named == c.name; });
  const Command* command = found == commands().end() ? nullptr : &*found;
  CLI::App* sub = nullptr;
  Runner runner;
  if (command) {
    sub = app.add_subcommand(command->name, command->description);
    runner = add_command(*sub, *command, common);
  } else {
    for (const Command& c : commands()) app.add_subcommand(c.name, c.description);
  }
  const auto unknown_command = [&](std::string_view name) {
    const std::vector<std::string> names = util::names_of(commands(), [](const Command& c) { return c.name; });
    err << fmt::format("edgeplan: error: unknown command '{}'{}\n", io::clipped(name), util::did_you_mean(name, names));
    return kExitUsage;
  };

  // Bare `edgeplan`, `edgeplan help` and `edgeplan help COMMAND` print the help, as --help does.
  if (argc == 1 || help) {
    if (argc > 3) {
      err << "edgeplan: error: help takes at most one command\n";
      return kExitUsage;
    }
    if (sub) {
      out << sub->help("edgeplan");
      return kExitOk;
    }
    if (argc < 3 || named == "--help" || named == "-h") {
      out << app.help();
      return kExitOk;
    }
    return unknown_command(named);
  }
  if (!command && argv[1][0] != '-') return unknown_command(named);
  // An option the command does not have, named before CLI11 reports something less direct about it ("--device is
  // required" for a misspelt --device): with the nearest option the command has.
  if (sub) {
    std::vector<std::string> known{"--help"};
    for (const CLI::Option* o : sub->get_options()) {
      for (const std::string& name : o->get_lnames()) known.push_back("--" + name);
    }
    for (int i = 2; i < argc && std::string_view(argv[i]) != "--"; ++i) {
      const std::string_view arg = argv[i];
      if (!arg.starts_with("--")) continue;
      const std::string name(arg.substr(0, arg.find('=')));
      if (std::find(known.begin(), known.end(), name) != known.end()) continue;
      const auto renamed = std::find_if(renamed_options().begin(), renamed_options().end(),
                                        [&](const Renamed& r) { return r.old_name == name; });
      if (renamed != renamed_options().end()) {
        err << fmt::format("edgeplan: error: {} {} is now {}\n", command->name, name, renamed->new_name);
        return kExitUsage;
      }
      err << fmt::format("edgeplan: error: {} has no option {}{}\n", command->name, io::clipped(name),
                         util::did_you_mean(name, known));
      err << fmt::format("Run 'edgeplan {} --help' for its options.\n", command->name);
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);
    err << "edgeplan: error: " << io::escaped(e.what()) << "\n";
    err << "Run 'edgeplan --help' or 'edgeplan COMMAND --help' for usage.\n";
    return kExitUsage;
  }

  const auto finish = [&err](int code) {
    print_warnings(err);
    return code;
  };
  try {
    const io::Format& format = parse_format(common.format);
    std::vector<io::Requirement> reqs;
    for (const std::string& r : common.requirements) reqs.push_back(unwrap(io::parse_requirement(r)));
    // Lists of devices and models, as llama-bench takes them (--device a,b): sweeps over those options, first.
    const std::vector<std::string> args(argv + std::min(argc, 2), argv + argc);
    std::vector<io::SweepAxis> axes;
    for (const char* name : {"device", "model"}) {
      const CLI::Option* o = sub ? sub->get_option_no_throw(std::string("--") + name) : nullptr;
      if (!o || o->count() != 1 || o->results().front().find(',') == std::string::npos) continue;
      axes.push_back({name, split_list(o->results().front(), std::string("--") + name)});
    }
    for (const std::string& s : common.sweeps) axes.push_back(unwrap(io::parse_sweep(sweep_in_units(s))));
    if (!axes.empty() && command && !command->sweeps) {
      std::vector<std::string> modelling;
      for (const Command& c : commands()) {
        if (c.sweeps) modelling.emplace_back(c.name);
      }
      throw UsageError(fmt::format("--sweep: {} has no figure a sweep could vary; these commands take one: {}",
                                   command->name, fmt::join(modelling, ", ")));
    }
    if (sub && sub->parsed()) {
      Verdict verdict;
      if (axes.empty()) {
        io::Report report = runner(Context(common));
        note_generic_rule(report);
        need_charts(report, format);
        verdict = verdict_of(report, reqs);
        out << io::render(report, format);
      } else {
        verdict = run_sweep(*command, args, common, axes, reqs, format, out);
      }
      for (const std::string& f : verdict.failures) err << "edgeplan: " << io::escaped(f) << "\n";
      for (const std::string& e : verdict.errors) err << "edgeplan: error: " << io::escaped(e) << "\n";
      if (!out.flush()) {  // a full disk or a closed pipe: the output is not all there
        err << fmt::format("edgeplan: error: cannot write the output{}\n",
                           errno != 0 ? fmt::format(" ({})", std::strerror(errno)) : "");
        return finish(kExitUsage);
      }
      if (!verdict.errors.empty()) return finish(kExitUsage);
      return finish(verdict.failures.empty() ? kExitOk : kExitRequirementFailed);
    }
  } catch (const UsageError& e) {
    err << "edgeplan: error: " << io::escaped(e.what()) << "\n";
    return finish(kExitUsage);
  }
  return finish(kExitUsage);
}

}  // namespace

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    return run_command_line(argc, argv, out, err);
  } catch (const std::bad_alloc&) {  // the machine's limit (ulimit -v, a full memory), not a bug
    err << "edgeplan: error: out of memory: the command needs more than this process may allocate (ulimit -v?)\n";
  } catch (const std::exception& e) {  // a bug: say so instead of aborting
    err << "edgeplan: internal error: " << io::escaped(e.what()) << "\n";
  } catch (...) {
    err << "edgeplan: internal error: an exception of unknown type\n";
  }
  print_warnings(err);
  return kExitUsage;
}

}  // namespace edgeplan::cli
