// edgeplan spec: speculative decoding and multi-token prediction (core/spec.hpp): expected tokens per
// target step, speedup, the best draft length, scans over alpha, and the decode rate they give.
#include <cmath>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/plan.hpp"
#include "edgeplan/core/decode.hpp"
#include "edgeplan/core/spec.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::cli {
namespace {

struct SpecOptions {
  std::string alpha, device, model, draft, quant, runtime;
  std::optional<double> gamma, cost;
  std::optional<std::uint32_t> mtp_layers;
  bool best_gamma = false;
};

constexpr std::size_t kMaxScanSteps = 1000;

// --alpha A or --alpha START:STOP:STEP.
std::vector<double> parse_alphas(const std::string& text) {
  if (text.find(':') == std::string::npos) return {need_alpha(parse_number(text, "--alpha"), "--alpha")};
  const auto first = text.find(':'), second = text.find(':', first + 1);
  if (second == std::string::npos || text.find(':', second + 1) != std::string::npos) {
    throw UsageError(fmt::format("--alpha '{}': expected A or START:STOP:STEP, e.g. 0.5:0.9:0.05", text));
  }
  const double start = need_alpha(parse_number(text.substr(0, first), "--alpha START"), "--alpha START");
  const double stop =
      need_alpha(parse_number(text.substr(first + 1, second - first - 1), "--alpha STOP"), "--alpha STOP");
  const double step = parse_number(text.substr(second + 1), "--alpha STEP");
  if (step <= 0) throw UsageError(fmt::format("--alpha STEP must be greater than 0 (got {})", step));
  if (start > stop) throw UsageError(fmt::format("--alpha START ({}) must not exceed STOP ({})", start, stop));
  if ((stop - start) / step >= kMaxScanSteps) {
    throw UsageError(fmt::format("--alpha '{}': more than {} steps; use a larger STEP", text, kMaxScanSteps));
  }
  return spec_alpha_range(start, stop, step);
}

}  // namespace

double need_alpha(double v, const std::string& what) {
  if (v < 0 || v > 1) throw UsageError(fmt::format("{} must be in [0, 1] (got {})", what, v));
  return v;
}

std::uint32_t need_gamma(double v, const std::string& what) {
  if (v < 0 || v != std::floor(v) || v > kSpecMaxGamma) {
    throw UsageError(fmt::format("{} must be a whole number from 0 to {} (got {})", what, kSpecMaxGamma, v));
  }
  return static_cast<std::uint32_t>(v);
}

double need_cost(double v, const std::string& what) {
  if (v < 0) throw UsageError(fmt::format("{} must be 0 or more (got {})", what, v));
  return v;
}

Runner setup_spec(Options& opts) {
  auto o = std::make_shared<SpecOptions>();
  opts.add(Opt::alpha, o->alpha).required();
  opts.add(Opt::gamma, o->gamma).excludes(Opt::best_gamma);
  opts.add(Opt::best_gamma, o->best_gamma);
  opts.add(Opt::cost, o->cost).excludes(Opt::draft).excludes(Opt::mtp_layers);
  opts.add(Opt::draft, o->draft, "Draft model profile: cost = its weight bytes / the target's").excludes(Opt::mtp_layers);
  opts.add(Opt::mtp_layers, o->mtp_layers);
  opts.add(Opt::device, o->device, "Device profile: also print the decode rate with speculation");
  opts.add(Opt::runtime, o->runtime, runtime_help()).needs(Opt::device);
  opts.add(Opt::model, o->model, "Target model profile (needed by --device, --draft and --mtp-layers)");
  opts.add(Opt::quant, o->quant, "Weight format of target and draft (default: each GGUF model's own format, else Q4_K_M)");
  return [o](const Context& ctx) {
    io::Report r;
    r.command = "spec";
    const std::vector<double> alphas = parse_alphas(o->alpha);
    const bool scan = alphas.size() > 1 || o->alpha.find(':') != std::string::npos;
    if (!o->gamma && !o->best_gamma && !scan) {
      throw UsageError("spec needs --gamma G or --best-gamma (or an --alpha START:STOP:STEP scan)");
    }
    if (scan && o->gamma) throw UsageError("--gamma cannot be used with an --alpha scan: the scan finds the best gamma");
    const bool find_best = o->best_gamma || scan;
    const std::uint32_t gamma_fixed = o->gamma ? need_gamma(*o->gamma, "--gamma") : 0;
    if (!o->cost && o->draft.empty() && !o->mtp_layers) {
      throw UsageError("spec needs the draft cost: --cost C, --draft MODEL or --mtp-layers N");
    }
    if (o->model.empty() && (!o->device.empty() || !o->draft.empty() || o->mtp_layers)) {
      throw UsageError(fmt::format("{} needs the target model: add --model MODEL",
                                   !o->device.empty() ? "--device" : !o->draft.empty() ? "--draft" : "--mtp-layers"));
    }

    std::optional<DeviceSpec> device;
    if (!o->device.empty()) device = ctx.device(o->device, r.inputs, o->runtime);
    std::optional<ModelSpec> target;
    std::optional<WeightSize> target_size;
    const FileType* target_format = nullptr;
    if (!o->model.empty()) {
      target = ctx.model(o->model, r.inputs);
      target_format = &need_format(quant_or_file_format(o->quant, *target));
      target_size = unwrap(weight_size(*target, *target_format));
      r.inputs["quant"] = target_format->name;
    }
    double cost = 0;
    std::string cost_from;
    if (o->cost) {
      cost = need_cost(*o->cost, "--cost");
      cost_from = "--cost";
    } else if (!o->draft.empty()) {
      io::Node draft_inputs = io::Node::object();
      const ModelSpec draft_model = ctx.model(o->draft, draft_inputs);
      r.inputs["draft"] = draft_inputs["model"];
      const FileType& draft_format = need_format(quant_or_file_format(o->quant, draft_model));
      const WeightSize draft_size = unwrap(weight_size(draft_model, draft_format));
      cost = spec_draft_cost(device ? &*device : nullptr, draft_size.active_bytes, target_size->active_bytes);
      cost_from = device ? fmt::format("draft {}: {:.2f} ms / {:.2f} ms per token decoding on {}", draft_model.name,
                                       decode(*device, {draft_size.active_bytes, 0}).s_per_token * units::kMsPerS,
                                       decode(*device, {target_size->active_bytes, 0}).s_per_token * units::kMsPerS,
                                       device->name)
                         : fmt::format("draft {}: {:.3f} GB / {:.3f} GB per token", draft_model.name,
                                       draft_size.active_bytes / units::kGB, target_size->active_bytes / units::kGB);
    } else {
      if (*o->mtp_layers == 0) throw UsageError("--mtp-layers must be at least 1");
      cost = static_cast<double>(*o->mtp_layers) / target->layers;
      cost_from = fmt::format("{} MTP layer(s) / {} target layers", *o->mtp_layers, target->layers);
      r.inputs["mtp_layers"] = *o->mtp_layers;
    }
    r.inputs["alpha"] = scan ? io::Node(o->alpha) : io::Node(alphas.front());
    if (o->gamma) r.inputs["gamma"] = gamma_fixed;
    r.inputs["cost"] = cost;

    std::optional<DecodeResult> base;
    if (device) base = decode(*device, {target_size->active_bytes, 0});

    io::Table t{"alphas", {{"alpha", "alpha", 2},
                           {"gamma", "gamma", 0},
                           {"tokens/step", "expected_tokens", 4},
                           {"speedup", "speedup", 2}}, {}};
    if (base) t.columns.push_back({"tok/s", "tok_per_s", 2});
    bool at_limit = false, none_pays = false;
    for (const double alpha : alphas) {
      std::uint32_t g = gamma_fixed;
      if (find_best) {
        const SpecBest b = spec_best_gamma(alpha, cost);
        g = b.gamma;
        at_limit = at_limit || b.at_limit;
        none_pays = none_pays || b.gamma == 0;
      }
      const double speedup = spec_speedup({alpha, g, cost});
      std::vector<io::Cell> row{alpha, std::int64_t{g}, spec_expected_tokens(alpha, g), speedup};
      if (base) row.emplace_back(base->tok_per_s * speedup);
      if (!scan) {
        r.results["gamma"] = g;
        r.results["expected_tokens"] = spec_expected_tokens(alpha, g);
        r.results["speedup"] = speedup;
        if (base) {
          r.results["base_tok_per_s"] = base->tok_per_s;
          r.results["tok_per_s"] = base->tok_per_s * speedup;
        }
      }
      t.add(std::move(row));
    }
    r.tables.push_back(std::move(t));

    r.title = scan ? fmt::format("spec: best gamma for alpha {}", o->alpha)
                   : fmt::format("spec: alpha {}, {}", alphas.front(),
                                 o->best_gamma ? std::string("best gamma") : fmt::format("gamma {}", gamma_fixed));
    r.header.push_back(fmt::format("draft cost {:.4g} of a target step ({})", cost, cost_from));
    if (base) {
      r.header.push_back(fmt::format("target decode {:.2f} tok/s ({} {} on {})", base->tok_per_s, target->name,
                                     target_format->name, device->name));
      r.header.push_back(runtime_line(*device));
    }
    if (cost >= 1) {
      r.notes.push_back("a draft step costs at least a target step: speculation never pays (speedup <= 1 for any "
                        "alpha and gamma)");
    } else if (!find_best && gamma_fixed > 0 && spec_speedup({alphas.front(), gamma_fixed, cost}) < 1) {
      r.notes.push_back("speculation does not pay at these settings: it is slower than plain decode");
    }
    if (!find_best && gamma_fixed == 0) r.notes.push_back("gamma 0: no speculation, plain decode");
    if (find_best && none_pays && cost < 1) r.notes.push_back("gamma 0: no draft length beats plain decode there");
    if (at_limit) {
      r.notes.push_back(fmt::format("gamma {} is the search limit: the speedup still grows with longer drafts",
                                    kSpecMaxGamma));
    }
    return r;
  };
}

}  // namespace edgeplan::cli
