// edgeplan fit: which known models and formats run on a device within the given constraints, ranked by the
// quality proxy (core/fit.hpp), with the Pareto front of quality, speed and context. Each figure comes from the
// core functions the decode and kv commands call (core/plan.hpp), so fit agrees with them to the digit.
#include <algorithm>
#include <optional>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command.hpp"
#include "cli/plan.hpp"
#include "edgeplan/core/fit.hpp"
#include "edgeplan/core/plan.hpp"
#include "edgeplan/core/prefill.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::cli {
namespace {

// The formats fit tries for a model that has no format of its own (a profile without file_format).
constexpr std::string_view kDefaultFormats = "Q2_K,Q3_K_M,Q4_K_M,Q5_K_M,Q6_K,Q8_0,F16";

struct FitOptions {
  std::string device, formats, kv_type = "f16", models;
  std::uint64_t min_context = 4096;
  double min_tok_per_s = 0;
  std::size_t limit = 10;
  bool all = false;
  bool allow_beyond_trained = false;
  RuntimeFlags runtime;
  std::string runtime_name;  // --runtime
};

struct Candidate {
  std::string model, format;
  double params = 0, bits_per_weight = 0, weights_bytes = 0;
  FitCandidate point;
  std::optional<double> active_params;  // a mixture of experts: parameters a token reads
};

// The models fit considers: those named by --models, else every profile except reference ones (a textbook
// model no runtime ships, `reference = true`), which a ranking of real models should not hold.
std::vector<ModelSpec> candidate_models(const Context& ctx, const std::string& names, std::size_t& left_out) {
  std::vector<ModelSpec> out;
  io::Node unused;
  if (!names.empty()) {
    for (const std::string& name : split_list(names, "--models")) out.push_back(ctx.model(name, unused));
    return out;
  }
  for (const io::ProfileText& p : io::list_profiles("models", ctx.search_path())) {
    ModelSpec m = ctx.model(p.display.starts_with("builtin:") ? p.name : p.display, unused);
    if (m.reference) {
      ++left_out;
    } else {
      out.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace

Runner setup_fit(Options& opts) {
  auto o = std::make_shared<FitOptions>();
  opts.add(Opt::device, o->device).required();
  opts.add(Opt::runtime, o->runtime_name, runtime_help());
  opts.add(Opt::context, o->min_context, "Context that must fit, tokens (takes k and M: 8k); decode is taken there")
      .show_default();
  opts.add(Opt::min_tok_per_s, o->min_tok_per_s).show_default();
  opts.add(Opt::quant, o->formats,
           fmt::format("Formats to consider, comma-separated, besides a model's own (default: a model file's own "
                       "format, or the one a profile's model is published in (file_format), else {})",
                       kDefaultFormats));
  opts.add(Opt::kv_type, o->kv_type, kv_type_help("KV-cache type")).show_default();
  opts.add(Opt::models, o->models,
           "Models to consider, comma-separated names or .toml paths (default: every model profile except "
           "reference ones)");
  opts.add(Opt::allow_beyond_trained, o->allow_beyond_trained);
  opts.add(Opt::limit, o->limit).show_default().positive();
  opts.add(Opt::all, o->all, "Show every pair that fits (overrides --limit)");
  add_runtime_options(opts, o->runtime);
  return [o](const Context& ctx) {
    io::Report r;
    r.command = "fit";
    DeviceSpec device = ctx.device(o->device, r.inputs, o->runtime_name);
    const RuntimeOptions runtime = runtime_options(o->runtime, device);
    if (o->min_tok_per_s < 0) throw UsageError("--min-tok-per-s must be 0 or more");
    r.inputs["min_context_tokens"] = o->min_context;
    r.inputs["min_tok_per_s"] = o->min_tok_per_s;
    r.inputs["kv_type"] = o->kv_type;
    r.inputs["allow_beyond_trained"] = o->allow_beyond_trained;
    // A model's own format (a model file's type, a profile's published one) first; the formats of --quant after
    // it, as what-ifs; without --quant, a model without a format of its own takes kDefaultFormats.
    std::vector<const FileType*> asked;
    if (!o->formats.empty()) {
      for (const std::string& f : split_list(o->formats, "--quant")) asked.push_back(&need_format(f));
    }
    std::vector<const FileType*> defaults;
    for (const std::string& f : split_list(std::string(kDefaultFormats), "--quant")) defaults.push_back(&need_format(f));
    auto formats_of = [&](const ModelSpec& model) {
      std::vector<const FileType*> out;
      if (model.file_format) out.push_back(&need_format(*model.file_format));
      for (const FileType* ft : out.empty() && asked.empty() ? defaults : asked) {
        if (std::ranges::find(out, ft) == out.end()) out.push_back(ft);
      }
      return out;
    };
    std::vector<Candidate> fits;
    std::size_t considered = 0, reference_left_out = 0, beyond = 0;
    std::optional<Candidate> fastest_in_memory;  // of the pairs that hold the context, whatever their rate
    for (const ModelSpec& model : candidate_models(ctx, o->models, reference_left_out)) {
      const KvCacheType kv = need_kv_type(o->kv_type, model);
      const std::vector<const FileType*> formats = formats_of(model);
      if (!o->allow_beyond_trained && beyond_trained(model, o->min_context)) {
        considered += formats.size();
        beyond += formats.size();
        continue;
      }
      DecodePlanInputs in{&model, formats, {}, kv, o->min_context, std::nullopt, 1, 0, prefill_flops(model, 1), runtime};
      for (const FileType* ft : formats) in.sizes.push_back(unwrap(weight_size(model, *ft)));
      const double params = param_count(model).value_or(0), quality_params = quality_param_count(model).value_or(0);
      for (const FormatPlan& f : unwrap(plan_decode(device, in))) {
        ++considered;
        Candidate c{model.name, std::string(f.format->name), params, f.weights.bits_per_weight, f.weights.bytes,
                    {quality_proxy(quality_params, f.format->name), f.decode.tok_per_s,
                     max_context(model, kv, f.memory.budget_bytes, device.kv_cache)},
                    model.moe ? active_param_count(model) : std::nullopt};
        if (!o->allow_beyond_trained) c.point.max_context = trained_cap(model, c.point.max_context);
        if (!f.memory.fits || c.point.max_context < o->min_context) continue;
        if (!fastest_in_memory || c.point.tok_per_s > fastest_in_memory->point.tok_per_s) fastest_in_memory = c;
        if (c.point.tok_per_s < o->min_tok_per_s) continue;
        fits.push_back(c);
      }
    }
    std::vector<FitCandidate> points;
    for (const Candidate& c : fits) points.push_back(c.point);
    const std::vector<bool> pareto = pareto_front(points);
    const std::vector<std::size_t> order = fit_ranking(points);
    const std::size_t shown = o->all ? order.size() : std::min(order.size(), o->limit);
    io::Table t{"fits", {{"model", "model"}, {"format", "format"},
                         io::counted({"params (B)", "params", 2, false, units::kGiga}),
                         {"bits/weight", "bits_per_weight", 2},
                         io::counted({"weights (GB)", "weights_bytes", 2, false, units::kGB}),
                         {"tok/s", "tok_per_s", 2}, io::counted({"max context", "max_context", 0, true}),
                         {"quality (B)", "quality_proxy", 2}, {"pareto", "pareto"}}, {}};
    std::vector<std::string> mixtures;  // the mixtures of experts shown, once each: "1.52 of lfm2-8b-a1b's 8.34 B"
    for (std::size_t i : std::span(order).first(shown)) {
      const Candidate& c = fits[i];
      if (c.active_params) {
        std::string m = fmt::format("{:.2f} of {}'s {:.2f} B", *c.active_params / units::kGiga, c.model,
                                    c.params / units::kGiga);
        if (std::find(mixtures.begin(), mixtures.end(), m) == mixtures.end()) mixtures.push_back(std::move(m));
      }
      std::vector<io::Cell>& row = t.rows.emplace_back();
      row.reserve(9);
      row.insert(row.end(), {c.model, c.format, c.params, c.bits_per_weight, c.weights_bytes, c.point.tok_per_s,
                             static_cast<std::int64_t>(c.point.max_context)});
      row.emplace_back(c.point.quality ? io::Cell(*c.point.quality) : io::Cell());
      row.emplace_back(bool(pareto[i]));
    }
    r.results["considered"] = considered;
    r.results["fitting"] = fits.size();
    r.results["beyond_trained"] = beyond;
    r.results["shown"] = shown;
    if (!fits.empty()) r.results["best"] = fits[order.front()].model + " " + fits[order.front()].format;
    r.tables.push_back(std::move(t));
    // The Pareto front: speed against the quality proxy, each pair's weights as the point's area.
    io::Chart front{"tok/s against quality, the Pareto front marked", "fits", "point", "quality_proxy", "tok_per_s"};
    front.color = "pareto";
    front.size = "weights_bytes";
    r.charts.push_back(std::move(front));
    r.title = fmt::format("fit: what runs on {} with {} tokens of {} KV at >= {} tok/s", device.name, o->min_context,
                          o->kv_type, o->min_tok_per_s);
    r.header.push_back(runtime_line(device));  // the tok/s column's
    r.notes.push_back(fmt::format("{} of {} model/format pairs fit{}; ranked by quality, then tok/s", fits.size(),
                                  considered, shown < fits.size() ? fmt::format(", the best {} shown (--all for every one)", shown) : ""));
    if (reference_left_out > 0) {
      r.notes.push_back(fmt::format("{} reference model{} left out (textbook models no runtime ships; name them with "
                                    "--models to include them)", reference_left_out, reference_left_out == 1 ? "" : "s"));
    }
    if (beyond > 0) {
      r.notes.push_back(fmt::format("{} pairs left out: their model was trained for fewer than {} tokens "
                                    "(--allow-beyond-trained keeps them)", beyond, o->min_context));
    }
    if (device.runtime.buffers) {
      r.notes.push_back(fmt::format("memory: weights + llama.cpp's compute, output and repack buffers (ubatch {}, flash "
                                    "attention {}) + the KV cache of {} sequence{}", device.kv_cache.ubatch_tokens,
                                    o->runtime.flash_attn, runtime.parallel, runtime.parallel == 1 ? "" : "s"));
    }
    if (!o->allow_beyond_trained) r.notes.push_back("max context: what memory holds, capped at the model's trained context");
    r.notes.push_back(fmt::format("quality = effective parameters (B): params x (perplexity ratio of the format on "
                                  "Llama-3-8B, llama.cpp's scoreboard) ^ -{:.2f}, so a format that raises perplexity "
                                  "counts as a smaller model; -- where llama.cpp publishes no figure for the format",
                                  1 / perplexity_slope()));
    if (!mixtures.empty()) {
      r.notes.push_back(fmt::format("mixture of experts: quality counts all its parameters, so it reads high (an upper "
                                    "bound); a token reads {}", fmt::join(mixtures, ", ")));
    }
    r.notes.push_back("pareto: no other pair is at least as good in quality, tok/s and max context and better in one");
    if (fits.empty()) {
      const std::string closest = fastest_in_memory ? fmt::format("the fastest that holds the context is {} {} at {:.2f} tok/s",
                                                                  fastest_in_memory->model, fastest_in_memory->format,
                                                                  fastest_in_memory->point.tok_per_s)
                                                    : "none holds the context in memory";
      r.failures.push_back(fmt::format("fit: none of the {} model/format pairs fits {} with {} tokens of {} KV at >= {} "
                                       "tok/s: {}", considered, device.name, o->min_context, o->kv_type, o->min_tok_per_s,
                                       closest));
    }
    return r;
  };
}

}  // namespace edgeplan::cli
