// edgeplan quant: weight quantization error and bytes per method (core/quant.hpp), on a seeded synthetic
// matrix or a tensor read from a .gguf, .safetensors or .npy file.
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "edgeplan/core/quant.hpp"
#include "edgeplan/util/names.hpp"
#include "edgeplan/io/tensors.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::cli {
namespace {

struct QuantOptions {
  std::string methods, file, tensor;
  SyntheticSpec synthetic;
  std::uint64_t inputs = 8;
  unsigned threads = 0;
  bool timing = false;
};

constexpr std::uint64_t kMaxSyntheticWeights = std::uint64_t{1} << 28;

const QuantMethod& need_method(const std::string& name) {
  return *need("--methods", util::lookup_or_suggest(quant_methods(), name, [](const QuantMethod& m) { return m.name; },
                                                    "method"),
               " (`edgeplan quant --help` lists them)");
}

const char* scheme_name(QuantScheme s) {
  switch (s) {
    case QuantScheme::symmetric: return "symmetric";
    case QuantScheme::asymmetric: return "asymmetric";
    case QuantScheme::q8_0: return "ggml q8_0";
    case QuantScheme::q4_0: return "ggml q4_0";
  }
  return "";
}

std::string scale_per(const QuantMethod& m) {
  switch (m.granularity) {
    case Granularity::tensor: return "tensor";
    case Granularity::channel: return "channel";
    case Granularity::group: return fmt::format("{} weights", m.group_weights);
  }
  return "";
}

std::string method_list() {
  std::vector<std::string> names;
  for (const QuantMethod& m : quant_methods()) names.push_back(m.name);
  return fmt::format("{}", fmt::join(names, ","));
}

}  // namespace

Runner setup_quant(Options& opts) {
  auto o = std::make_shared<QuantOptions>();
  o->methods = method_list();
  opts.add(Opt::methods, o->methods).show_default();
  opts.add(Opt::file, o->file, "Weight tensor to quantize: a .gguf, .safetensors or .npy file (default: synthetic)");
  opts.add(Opt::tensor, o->tensor);
  opts.add(Opt::rows, o->synthetic.rows).show_default().range(1, 1 << 16);
  opts.add(Opt::cols, o->synthetic.cols).show_default().range(1, 1 << 16);
  opts.add(Opt::seed, o->synthetic.seed).show_default();
  opts.add(Opt::std_dev, o->synthetic.std).show_default().range(1e-30, 1e30);
  opts.add(Opt::inputs, o->inputs).show_default().range(1, 1024);
  opts.add(Opt::threads, o->threads, "Worker threads (default: all cores); results do not depend on it").range(0, 4096);
  opts.add(Opt::timing, o->timing);
  return [o](const Context&) {
    io::Report r;
    r.command = "quant";
    std::vector<const QuantMethod*> methods;
    for (const std::string& name : split_list(o->methods, "--methods")) methods.push_back(&need_method(name));
    if (!o->tensor.empty() && o->file.empty()) throw UsageError("--tensor needs a FILE");
    if (o->file.empty() && o->synthetic.rows * o->synthetic.cols > kMaxSyntheticWeights) {
      throw UsageError(fmt::format("--rows {} x --cols {} is more than {} weights (1 GiB of FP32); choose a smaller matrix",
                                   o->synthetic.rows, o->synthetic.cols, kMaxSyntheticWeights));
    }

    std::vector<float> values;
    std::uint64_t rows = 0, cols = 0;
    std::string what;
    if (o->file.empty()) {
      values = synthetic_matrix(o->synthetic);
      rows = o->synthetic.rows;
      cols = o->synthetic.cols;
      what = fmt::format("synthetic {}x{} N(0, {}^2), {}% of channels x{}-{}, seed {}", rows, cols, o->synthetic.std,
                         o->synthetic.outlier_fraction * 100, o->synthetic.outlier_min, o->synthetic.outlier_max,
                         o->synthetic.seed);
      r.inputs["matrix"] = {{"source", "synthetic"},     {"rows", rows},
                            {"cols", cols},              {"std", o->synthetic.std},
                            {"outlier_fraction", o->synthetic.outlier_fraction},
                            {"outlier_min", o->synthetic.outlier_min},
                            {"outlier_max", o->synthetic.outlier_max},
                            {"seed", o->synthetic.seed}};
    } else {
      io::Tensor t = unwrap(io::read_tensor_file(o->file, o->tensor));
      values = std::move(t.values);
      rows = t.rows;
      cols = t.cols;
      what = fmt::format("{}{} ({}), {}x{}", o->file, t.name.empty() ? "" : " '" + t.name + "'", t.dtype, rows, cols);
      r.inputs["matrix"] = {{"source", o->file}, {"tensor", t.name}, {"dtype", t.dtype}, {"rows", rows}, {"cols", cols}};
    }
    const std::vector<float> x = random_normal(o->inputs * cols, o->synthetic.seed + 1);
    const MatrixView w{values, rows, cols};
    const MatrixView inputs{x, o->inputs, cols};
    std::string capped;
    const unsigned threads = thread_count(o->threads, capped);
    if (!capped.empty()) r.notes.push_back(capped);
    r.inputs["inputs"] = o->inputs;
    r.inputs["inputs_seed"] = o->synthetic.seed + 1;

    io::Table t{"methods", {{"method", "method"},
                            {"scheme", "scheme"},
                            {"scale per", "scale_per"},
                            {"MAE (1e-6)", "mean_abs_error", 2, false, 1e-6},
                            {"max err (1e-6)", "max_abs_error", 1, false, 1e-6},
                            {"RMSE (1e-6)", "rmse", 2, false, 1e-6},
                            {"cos(Wx)", "cosine", 6},
                            io::counted({"bytes", "total_bytes", 0, true}),
                            io::counted({"scale+zp bytes", "overhead_bytes", 0, true}),
                            {"x vs FP32", "compression", 2},
                            {"x weights only", "payload_compression", 2}}, {}};
    if (o->timing) t.columns.push_back({"GB/s FP32 in", "fp32_gbps", 2});
    for (const QuantMethod* m : methods) {
      const auto start = std::chrono::steady_clock::now();
      auto error = evaluate(*m, w, inputs, threads);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!error) throw UsageError(fmt::format("{}: {}", what, error.error().message));
      const QuantBytes b = quant_bytes(*m, rows, cols);
      std::vector<io::Cell> row{m->name, std::string(scheme_name(m->scheme)), scale_per(*m), error->mean_abs_error,
                                error->max_abs_error, error->rmse, error->cosine,
                                static_cast<std::int64_t>(b.total_bytes),
                                static_cast<std::int64_t>(b.scale_bytes + b.zero_point_bytes),
                                b.fp32_bytes / b.total_bytes, b.fp32_bytes / b.payload_bytes};
      if (o->timing) row.emplace_back(b.fp32_bytes / seconds / units::kGB);
      t.add(std::move(row));
    }
    r.tables.push_back(std::move(t));
    r.results["fp32_bytes"] = io::Node::count(quant_bytes(*methods.front(), rows, cols).fp32_bytes);
    if (o->timing) r.inputs["threads"] = threads;

    r.title = fmt::format("quant: {}", what);
    r.header.push_back(fmt::format("cosine: lowest over {} random N(0, 1) inputs x of W.x against the dequantized W.x",
                                   o->inputs));
    r.notes.push_back("x vs FP32 counts the scales (fp32 per group, fp16 in q8_0/q4_0 blocks) and zero points; "
                      "x weights only leaves them out, as the walkthrough's 4.00x does");
    return r;
  };
}

}  // namespace edgeplan::cli
