// edgeplan decode: weight bytes per format and the bandwidth-bound decode rate (core/decode.hpp).
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command.hpp"
#include "cli/plan.hpp"
#include "edgeplan/core/decode.hpp"
#include "edgeplan/core/limits.hpp"
#include "edgeplan/core/plan.hpp"
#include "edgeplan/core/prefill.hpp"
#include "edgeplan/core/runtime_class.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::cli {
namespace {

struct DecodeOptions {
  std::string device, model, quant, kv_type = "f16", spec, runtime;
  std::uint64_t context = 0;
  std::uint64_t prompt = 512;
};

// What decode's rows need besides the device, loaded and computed once.
struct DecodeInputs {
  ModelSpec model;
  DecodePlanInputs plan;  // points at model: keep this struct where it was made (shared_ptr or the stack)
};

// Sets what decode derives from the model `m`: its weight size per format and the prompt's FLOPs. Fails with
// the error of the first format whose size cannot be derived.
std::optional<Error> derive(const ModelSpec& m, DecodePlanInputs& p) {
  p.model = &m;
  p.sizes.clear();
  for (const FileType* ft : p.formats) {
    Result<WeightSize> size = weight_size(m, *ft);
    if (!size) return size.error();
    p.sizes.push_back(*size);
  }
  p.prompt_flops = prefill_flops(m, p.prompt_tokens);
  p.token_flops = prefill_flops(m, 1);
  return std::nullopt;
}

void decode_inputs(const DecodeOptions& o, const Context& ctx, io::Node& inputs, DecodeInputs& in) {
  in.model = ctx.model(o.model, inputs);
  DecodePlanInputs& p = in.plan;
  p.kv_type = need_kv_type(o.kv_type, in.model);
  for (const std::string& q : split_list(quant_or_file_format(o.quant, in.model, "Q4_K_M,Q8_0,F16"), "--quant")) {
    p.formats.push_back(&need_format(q));
  }
  p.spec = o.spec.empty() ? std::nullopt : std::optional(parse_spec(o.spec));
  p.context_tokens = o.context;
  p.prompt_tokens = o.prompt;
  if (const std::optional<Error> e = derive(in.model, p)) throw UsageError(e->message);
}

// The matrices of each format (weights[i] of formats[i], by type) whose type `guessed` picks: "Q5_K_M's Q5_K (81.2%
// of WHOSE matrix weights)", joined; "" when it picks none.
template <class Guessed>
std::string guessed_types(const std::vector<const FileType*>& formats,
                          const std::vector<std::vector<TypedWeights>>& weights, std::string_view whose,
                          Guessed guessed) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < formats.size(); ++i) {
    double total = 0;
    for (const TypedWeights& t : weights[i]) total += t.weights;
    for (const TypedWeights& t : weights[i]) {
      if (!t.type || !guessed(*t.type)) continue;
      const std::string_view name = formats[i]->name;
      const std::string what = name == t.type->name ? std::string(name) : fmt::format("{}'s {}", name, t.type->name);
      out.push_back(fmt::format("{} ({:.1f}% of {} matrix weights)", what, 100 * t.weights / total, whose));
    }
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

// The formats table: one row per format; the prefill columns when the device has a prefill estimate.
void decode_rows(const DecodePlanInputs& plan, const DeviceSpec& device, const std::vector<io::Cell>& prefix,
                 Rows& rows) {
  for (const FormatPlan& f : unwrap(plan_decode(device, plan))) {
    std::vector<io::Cell>& row = start_row(rows, prefix, 12);
    row.emplace_back(std::in_place_type<std::string>, f.format->name);  // each cell made in place: a list of
    row.emplace_back(f.weights.bits_per_weight);                          // cells would be copied in
    row.emplace_back(f.weights.bytes);
    row.emplace_back(f.weights.active_bytes);
    row.emplace_back(std::in_place_type<std::string>, to_string(f.weights.source));
    row.emplace_back(f.memory.fits);
    row.emplace_back(f.decode.s_per_token * units::kMsPerS);
    row.emplace_back(f.decode.tok_per_s);
    if (device.errors) {
      const Interval i = rate_interval(f.decode.tok_per_s, device.errors->decode);
      row.emplace_back(i.low);
      row.emplace_back(i.high);
    }
    row.emplace_back(f.relative);
    if (f.spec_tok_per_s) row.emplace_back(*f.spec_tok_per_s);
    if (f.prefill) {
      row.emplace_back(f.prefill->tok_per_s);
      row.emplace_back(*f.ttft_s);
      if (device.errors && device.errors->prefill) {
        const Interval p = rate_interval(f.prefill->tok_per_s, *device.errors->prefill);
        const Interval t = time_interval(*f.ttft_s, *device.errors->prefill);
        for (double v : {p.low, p.high, t.low, t.high}) row.emplace_back(v);
      }
    }
  }
}

}  // namespace

Runner setup_decode(Options& opts) {
  auto o = std::make_shared<DecodeOptions>();
  opts.add(Opt::device, o->device).required();
  opts.add(Opt::model, o->model).required();
  opts.add(Opt::quant, o->quant,
           "Comma-separated formats, e.g. Q4_K_M,F16 (default: a GGUF model's own format, else Q4_K_M,Q8_0,F16)");
  opts.add(Opt::context, o->context, "Tokens in the KV cache; each decoded token also reads them (takes k and M: 8k)")
      .show_default();
  opts.add(Opt::kv_type, o->kv_type, kv_type_help("KV-cache type read at --context")).show_default();
  opts.add(Opt::spec, o->spec);
  opts.add(Opt::runtime, o->runtime, runtime_help());
  opts.add(Opt::prompt, o->prompt, "Prompt tokens for prefill and time to first token (needs [prefill] or [units] in the device; takes k and M: 2k)")
      .show_default()
      .range(1, limits::kPromptTokens);
  auto structs = [o](const Context& ctx) {
    io::Node inputs;
    DeviceSpec device = ctx.device(o->device, inputs, o->runtime);
    auto in = std::make_shared<DecodeInputs>();
    decode_inputs(*o, ctx, inputs, *in);
    StructRows out{std::move(device), in->model, {}};
    out.worker = [in] {
      // The weight sizes and prompt FLOPs of the model this worker saw last.
      auto derived = std::make_shared<ModelCache<DecodePlanInputs>>(std::shared_ptr<const DecodePlanInputs>(in, &in->plan));
      auto plan_of = [in, derived](const ModelSpec& m, std::uint64_t model_id) {
        return derived->get(m, model_id, [&](const ModelSpec& model) -> std::optional<DecodePlanInputs> {
          DecodePlanInputs plan = in->plan;
          if (derive(model, plan)) return std::nullopt;
          return plan;
        });
      };
      return StructRows::Worker{
          [plan_of](const DeviceSpec& d, const ModelSpec& m, std::uint64_t model_id, const std::vector<io::Cell>& prefix,
                    Rows& rows) {
            const DecodePlanInputs* plan = plan_of(m, model_id);
            if (!plan) throw UsageError("decode: a swept model was not checked (a bug)");
            decode_rows(*plan, d, prefix, rows);
          },
          [plan_of](const DeviceSpec&, const ModelSpec& m, std::uint64_t model_id) {
            return plan_of(m, model_id) != nullptr;
          }};
    };
    return out;
  };
  auto run = [o](const Context& ctx) {
    io::Report r;
    r.command = "decode";
    const DeviceSpec device = ctx.device(o->device, r.inputs, o->runtime);
    DecodeInputs in;
    decode_inputs(*o, ctx, r.inputs, in);
    const ModelSpec& model = in.model;
    const KvCacheType& kv = in.plan.kv_type;
    const std::vector<const FileType*>& formats = in.plan.formats;
    const std::optional<SpecParams>& spec = in.plan.spec;
    // Prefill columns and header: the one prefill model's estimate, the same for every format.
    const Result<PrefillEstimate> prefill =
        prefill_estimate(device, model, in.plan.prompt_flops, in.plan.sizes.front().matmuls, o->prompt);

    const double kv_bytes = kv_cache_bytes(model, kv, o->context, device.kv_cache);
    r.inputs["context_tokens"] = o->context;
    r.inputs["kv_type"] = kv.name();
    if (spec) r.inputs["spec"] = {{"alpha", spec->alpha}, {"gamma", spec->gamma}, {"cost", spec->cost}};

    io::Table t{"formats", {{"format", "format"},
                            {"bits/weight", "bits_per_weight", 3},
                            io::counted({"weights (GB)", "weights_bytes", 2, false, units::kGB}),
                            io::counted({"read/token (GB)", "active_bytes", 2, false, units::kGB}),
                            {"size from", "size_source"},
                            {"fits", "fits"},
                            {"ms/token", "ms_per_token", 2},
                            {"tok/s", "tok_per_s", 2}}, {}};
    if (device.errors) {  // the interval the runtime class's leave-one-device-out error gives (core/runtime_class.hpp)
      t.columns.push_back({"tok/s low", "tok_per_s_low", 2});
      t.columns.push_back({"tok/s high", "tok_per_s_high", 2});
    }
    t.columns.push_back({fmt::format("x vs {}", formats.back()->name), "relative", 2});
    if (spec) t.columns.push_back({"spec tok/s", "spec_tok_per_s", 2});
    r.results["calibrated"] = calibrated(device.provenance);
    r.results["provenance"] = provenance_json(device);
    const std::string mismatch = runtime_mismatch(device, model);
    r.results["runtime_mismatch"] = mismatch.empty() ? io::Node() : io::Node(mismatch);
    if (marks_uncalibrated(device)) r.notes.push_back(uncalibrated_note(device).substr(2));
    if (!mismatch.empty()) r.notes.push_back(mismatch);
    if (prefill) {
      r.results["prefill_basis"] = prefill_basis_json(*prefill);
      t.columns.push_back({"prefill tok/s", "prefill_tok_per_s", 1});
      t.columns.push_back({fmt::format("TTFT {} (s)", o->prompt), "ttft_s", 3});
      if (device.errors && device.errors->prefill) {
        t.columns.push_back({"prefill low", "prefill_tok_per_s_low", 1});
        t.columns.push_back({"prefill high", "prefill_tok_per_s_high", 1});
        t.columns.push_back({"TTFT low", "ttft_s_low", 3});
        t.columns.push_back({"TTFT high", "ttft_s_high", 3});
      }
      r.inputs["prompt_tokens"] = o->prompt;
    }
    const double speedup = spec ? spec_speedup(*spec) : 1.0;
    decode_rows(in.plan, device, {}, t.rows);
    r.tables.push_back(std::move(t));
    // A sweep of the context (--sweep context=1024:32768:1024) draws tok/s against it, a line per format.
    r.charts.push_back({o->context > 0 ? fmt::format("decode tok/s per format at context {}", o->context)
                                       : std::string("decode tok/s per format"),
                        "formats", "bar", "format", "tok_per_s"});
    if (ctx.charts()) {
      add_roofline_chart(device, model, unwrap(plan_decode(device, in.plan)), o->context, o->prompt,
                         in.plan.prompt_flops, r);
    }

    r.title = fmt::format("decode: {} on {}", model.name, device.name);
    r.header.push_back(runtime_line(device));
    r.header.push_back(fmt::format("bandwidth {:.1f} GB/s x utilization {:.2f}, overhead {:.2f} ms/token",
                                   device.bandwidth_bytes_per_s / units::kGBps, device.utilization,
                                   device.per_token_overhead_s * units::kMsPerS));
    if (device.decode) {
      std::vector<std::string> rates;
      for (std::size_t i = 0; i < kPrefillTypes.size(); ++i) {
        if (const auto& g = device.decode->type_flops[i]) rates.push_back(fmt::format("{} {:.1f}", kPrefillTypes[i], *g / units::kGiga));
      }
      const std::optional<double>& attention = device.decode->attention_flops;
      r.header.push_back(fmt::format("compute per token: each matrix at its type's one-token rate, GFLOPS: {} (others at "
                                     "the slowest){}", fmt::join(rates, ", "),
                                     attention ? fmt::format("; attention over the context at {:.1f}",
                                                             *attention / units::kGiga)
                                               : ""));
      std::vector<std::vector<TypedWeights>> token;
      for (const FileType* f : formats) {
        token.push_back(model.vocab ? token_matmul_weights(model, *f)
                                    : std::vector<TypedWeights>{{find_ggml_type(f->base), 1.0}});
      }
      const std::string unrated = guessed_types(formats, token, "a token's", [&](const GgmlType& type) {
        return !decode_type_rate(*device.decode, type.name).own;
      });
      if (!unrated.empty()) {
        r.notes.push_back(fmt::format("no one-token rate of their own in {}, so at the slowest it gives ({:.1f} "
                                      "GFLOPS), a guess: {}", device.name,
                                      slowest_decode_rate(*device.decode) / units::kGiga, unrated));
      }
    }
    if (device.prefill) {
      std::string types;
      for (std::size_t i = 0; i < kPrefillTypes.size(); ++i) {
        if (const auto& e = device.prefill->type_efficiency[i]) types += fmt::format(", {} {:.2f}", kPrefillTypes[i], *e);
      }
      r.header.push_back(fmt::format("prefill of {} tokens: {:.2f} TFLOPS x efficiency {:.2f} (quantized weights {:.2f}{})",
                                     o->prompt, device.prefill->peak_flops / units::kTera, device.prefill->efficiency,
                                     device.prefill->quantized_efficiency, types));
      // Where the profile tells types apart, a quantized type it gives no efficiency of its own is a guess.
      if (!types.empty()) {
        std::vector<std::vector<TypedWeights>> prompt;
        for (const WeightSize& w : in.plan.sizes) prompt.push_back(w.matmuls);
        const std::string guessed = guessed_types(formats, prompt, "a prompt token's", [&](const GgmlType& type) {
          const std::optional<std::size_t> i = prefill_type_index(type.name);
          return is_quantized(type) && !(i && device.prefill->type_efficiency[*i]);
        });
        if (!guessed.empty()) {
          r.notes.push_back(fmt::format("no prefill efficiency of their own in {}, so at quantized_efficiency "
                                        "({:.2f}), a guess: {}", device.name, device.prefill->quantized_efficiency, guessed));
        }
      }
    } else if (prefill) {
      r.header.push_back(fmt::format("prefill of {} tokens: {}, the profile having no [prefill]", o->prompt,
                                     roofline_basis(*prefill)));
    }
    if (model.moe) {
      r.notes.push_back(fmt::format("mixture of experts: memory holds all {} experts; each token reads the shared "
                                    "weights and {} experts (read/token)", model.moe->experts, model.moe->used));
    }
    for (const FileType* ft : formats) {
      for (std::string& note : requantize_note(model, *ft)) r.notes.push_back(std::move(note));
    }
    if (o->context > 0) {
      r.header.push_back(fmt::format("context {} tokens of {} KV: {:.3f} GB read per token besides the weights",
                                     o->context, kv.name(), kv_bytes / units::kGB));
    }
    if (spec) {
      r.results["spec_expected_tokens"] = spec_expected_tokens(spec->alpha, spec->gamma);
      r.results["spec_speedup"] = speedup;
      r.notes.push_back(fmt::format("speculation (alpha {}, gamma {}, cost {}): {:.2f} tokens per target step, {:.2f}x",
                                    spec->alpha, spec->gamma, spec->cost,
                                    spec_expected_tokens(spec->alpha, spec->gamma), speedup));
      if (speedup < 1) r.notes.push_back("speculation does not pay at these settings: it is slower than plain decode");
    }
    return r;
  };
  return Runner(run, structs);
}

}  // namespace edgeplan::cli
