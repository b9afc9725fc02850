// edgeplan bench: measure this machine (io/host.hpp): memory read bandwidth, fp16 matmul GFLOPS at the
// walkthrough's square sizes and at one decoder layer's shapes (io/f16_matmul.hpp), the quantized matmuls llama.cpp's
// CPU backend runs (Q4_0, Q8_0, Q4_K; io/quant_matmul.hpp) for a prompt and for one decoded token (over weights read
// from DRAM), the attention of a prompt and of one decoded token (io/attention.hpp), optionally a file's read rate;
// and write a device profile of the host.
// A busy machine is measured again, at most kBenchAttempts times, keeping the best figure of each.
#include <algorithm>
#include <filesystem>
#include <iterator>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command.hpp"
#include "edgeplan/core/decode.hpp"
#include "edgeplan/util/units.hpp"
#include "edgeplan/io/host.hpp"

namespace edgeplan::cli {
namespace {

struct BenchOptions {
  std::uint64_t buffer_bytes = std::uint64_t{1} << 30;
  unsigned threads = 0, repeats = 5;
  std::vector<std::uint64_t> sizes{128, 256, 512, 1024};
  std::string model = "ref-8b";
  io::OutputPath write_profile;
  std::uint64_t prompt = 128;  // tokens (M) of the layer matmuls
  std::string storage, description = "This host, measured by edgeplan bench";
};

// The matrix multiplies of one llama-style decoder layer on `tokens` prompt tokens.
std::vector<io::GemmShape> layer_shapes(const ModelSpec& m, std::uint64_t tokens) {
  const std::uint64_t q = std::uint64_t{m.heads} * m.head_dim, kv = std::uint64_t{m.kv_heads} * m.head_dim;
  return {{"attn_qkv", tokens, q + 2 * kv, m.hidden},
          {"attn_output", tokens, m.hidden, q},
          {"ffn_gate_up", tokens, 2 * std::uint64_t{m.ffn}, m.hidden},
          {"ffn_down", tokens, m.hidden, m.ffn}};
}

// The matmuls of one decoder layer as llama.cpp's graph runs them on `tokens` prompt tokens: Q, K, V and the
// output projection (build_attn), the FFN's gate, up and down (build_ffn), each a weight of its own; shapes that
// repeat are measured once and counted.
std::vector<io::LayerMatmul> llama_layer(const ModelSpec& m, std::uint64_t tokens) {
  std::vector<io::LayerMatmul> layer;
  for (const io::GemmShape& s : io::llama_layer_matmuls(m, tokens)) {
    auto same = std::find_if(layer.begin(), layer.end(),
                             [&](const io::LayerMatmul& l) { return l.shape.n == s.n && l.shape.k == s.k; });
    if (same == layer.end()) {
      layer.push_back({s, 1});
    } else {
      same->shape.name += ", " + s.name;
      ++same->count;
    }
  }
  return layer;
}

// Measurements of a busy machine read low: bench measures up to this many times, keeping each figure's best.
constexpr unsigned kBenchAttempts = 3;

}  // namespace

Runner setup_bench(Options& opts) {
  auto o = std::make_shared<BenchOptions>();
  opts.add(Opt::buffer, o->buffer_bytes,
           "Memory read test: buffer size, far larger than the caches (takes units: 512MiB, 1GiB, 2GB)")
      .show_default()
      .range(16 * units::kMiB, 0x1p40);
  opts.add(Opt::threads, o->threads, "Threads of the memory read and matmul tests (default: all cores)").range(1, 4096);
  opts.add(Opt::repeats, o->repeats).show_default().range(1, 1000);
  opts.add(Opt::sizes, o->sizes).show_default().range(1, 8192);  // one pass of 8192: 1.1 TFLOP
  opts.add(Opt::model, o->model,
           "Model (profile, GGUF or config.json) whose shapes are measured: a prompt's layer matmuls and a decoded "
           "token's matrices")
      .show_default();
  opts.add(Opt::prompt, o->prompt,
           "Prompt tokens (M) of the layer matmuls and attention, and the cached tokens of one decoded token's "
           "attention (takes k: 2k)")
      .show_default()
      .range(1, 65536);
  opts.add(Opt::storage, o->storage);
  opts.add(Opt::write_profile, o->write_profile, "Write a device profile of this host to FILE");
  opts.add(Opt::description, o->description).show_default();
  return [o](const Context& ctx) {
    io::Report r;
    r.command = "bench";
    const ModelSpec model = ctx.model(o->model, r.inputs);
    std::optional<io::OutputFile> profile_out;  // opened first: a refused path fails before measuring
    if (!o->write_profile.path.empty()) {
      profile_out.emplace(unwrap(io::OutputFile::open(o->write_profile, input_files(r.inputs, {o->storage}))));
    }
    std::optional<io::FileRead> storage;
    if (!o->storage.empty()) storage = unwrap(io::measure_file_read(o->storage));
    const io::HostMemory memory = unwrap(io::read_meminfo());
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    std::string capped;
    const unsigned threads = thread_count(o->threads, capped);
    if (!capped.empty()) r.notes.push_back(capped);
    const std::uint64_t buffer_bytes = o->buffer_bytes;
    if (static_cast<double>(buffer_bytes) > memory.available_bytes / 2) {
      throw UsageError(fmt::format("--buffer {:.0f}MiB: more than half of the {:.0f} MiB available; choose a smaller "
                                   "buffer", static_cast<double>(buffer_bytes) / units::kMiB,
                                   memory.available_bytes / units::kMiB));
    }

    std::vector<io::GemmShape> shapes;
    for (std::uint64_t n : o->sizes) shapes.push_back({fmt::format("square {}", n), n, n, n});
    const std::vector<io::GemmShape> layer = layer_shapes(model, o->prompt);
    shapes.insert(shapes.end(), layer.begin(), layer.end());
    const std::vector<io::LayerMatmul> quant_layer = llama_layer(model, o->prompt);
    // Each attempt measures everything; a busy machine is measured again, each figure keeping its best.
    io::ReadRate read;
    std::optional<double> load;
    std::string busy;
    std::vector<double> gemm_s(shapes.size(), 0);
    std::string matmul_kernel;
    std::vector<io::QuantRate> quant;
    std::vector<io::TokenRun> tokens;  // a decoded token's layers in each measured type, the best time of each kept
    std::optional<io::AttentionRate> attention, token_attention;  // none for a model without attention layers
    const bool attends = attention_layers(model) > 0 && model.heads > 0 && model.kv_heads > 0;
    const std::uint64_t token_bytes = buffer_bytes / 2;  // the weights of a decoded token's layers, read from DRAM
    // The weight types measured, for a prompt and for one token: all of them where edgeplan's kernels run.
    std::vector<io::QuantKind> kinds;
    if (io::cpu_has_avx2()) kinds.assign(std::begin(io::kQuantKinds), std::end(io::kQuantKinds));
    unsigned attempts = 0;
    while (attempts < kBenchAttempts) {
      ++attempts;
      const std::optional<double> load_now = io::load_average();  // before the run adds its own threads
      const io::ReadRate read_now = io::measure_read_bandwidth(buffer_bytes, threads, o->repeats);
      for (std::size_t i = 0; i < shapes.size(); ++i) {
        const io::MatmulTime m = io::measure_f16_matmul(shapes[i], threads, o->repeats);
        gemm_s[i] = gemm_s[i] > 0 ? std::min(gemm_s[i], m.seconds) : m.seconds;
        matmul_kernel = m.kernel;
      }
      for (std::size_t i = 0; i < kinds.size(); ++i) {
        io::QuantRate q = io::measure_quant_layer(kinds[i], quant_layer, threads, o->repeats);
        if (quant.size() <= i) {
          quant.push_back(std::move(q));
        } else if (q.flops_per_s > quant[i].flops_per_s) {
          quant[i] = std::move(q);
        }
      }
      for (std::size_t i = 0; i < kinds.size(); ++i) {
        io::TokenRun run = io::measure_token_layers(kinds[i], model, token_bytes, threads, o->repeats);
        if (run.flops <= 0) break;  // a model of no weight matrices: no type has any
        if (tokens.size() <= i) {
          tokens.push_back(std::move(run));
        } else {
          tokens[i].matrices_seconds = std::min(tokens[i].matrices_seconds, run.matrices_seconds);
          tokens[i].seconds = std::min(tokens[i].seconds, run.seconds);
        }
      }
      if (attends) {
        io::AttentionRate a = io::measure_attention(model, o->prompt, threads, o->repeats);
        if (!attention || a.flops_per_s > attention->flops_per_s) attention = std::move(a);
        io::AttentionRate ta = io::measure_token_attention(model, o->prompt, threads, o->repeats);
        if (!token_attention || ta.flops_per_s > token_attention->flops_per_s) token_attention = std::move(ta);
      }
      if (attempts == 1 || read_now.bytes_per_s > read.bytes_per_s) {
        read = read_now;
        load = load_now;
      }
      busy = io::busy_reason(read_now, threads, load_now, cores);
      if (busy.empty()) break;
    }
    const double read_bps = read.bytes_per_s;
    // The one-token rate of each type: its token's matrices alone. The per-token overhead: what the element-wise
    // nodes add to a token's matrices (decode's time for them: the read rate and the one-token rate) over all of the
    // model's layers, the mean over the types (the nodes are the same in each).
    std::vector<io::QuantRate> gemv;
    std::optional<double> overhead;
    for (const io::TokenRun& run : tokens) {
      gemv.push_back({run.kind, run.kernel, run.flops / run.matrices_seconds});
      const double scale = static_cast<double>(std::max(1u, model.layers)) / static_cast<double>(run.layers);
      overhead = overhead.value_or(0) + measured_overhead_s(run.seconds, run.bytes, read_bps, run.matrices_seconds,
                                                            scale) / static_cast<double>(tokens.size());
    }

    io::Table t{"matmul", {{"matmul", "name"},
                           {"M", "m"},
                           {"N", "n"},
                           {"K", "k"},
                           {"GFLOP", "flops", 3, false, units::kGiga},
                           {"ms", "ms", 3},
                           {"GFLOPS", "gflops", 1}}, {}};
    double best_layer_flops = 0;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const io::GemmShape& s = shapes[i];
      const double seconds = gemm_s[i];
      const double rate = s.flops() / seconds;
      if (i >= o->sizes.size()) best_layer_flops = std::max(best_layer_flops, rate);
      t.add({s.name, static_cast<std::int64_t>(s.m), static_cast<std::int64_t>(s.n), static_cast<std::int64_t>(s.k),
             s.flops(), seconds * units::kMsPerS, rate / units::kGiga});
    }
    io::Table qt{"quantized", {{"weights", "type"}, {"activations", "activations"}, {"kernel", "kernel"},
                               {"GFLOPS", "gflops", 1}}, {}};
    for (const io::QuantRate& q : quant) {
      qt.add({std::string(io::weight_type(q.kind)), std::string(io::activation_type(q.kind)), q.kernel,
              q.flops_per_s / units::kGiga});
    }
    io::Table gt{"gemv", {{"weights", "type"},
                          {"kernel", "kernel"},
                          {"layers", "layers"},
                          {"ms", "matrices_ms", 3},
                          {"+nodes ms", "with_nodes_ms", 3},
                          {"GB/s", "weight_gbps", 2},
                          {"GFLOPS", "gflops", 1}}, {}};
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const io::TokenRun& run = tokens[i];
      gt.add({std::string(io::weight_type(run.kind)), run.kernel, static_cast<std::int64_t>(run.layers),
              run.matrices_seconds * units::kMsPerS, run.seconds * units::kMsPerS,
              run.bytes / run.matrices_seconds / units::kGBps, gemv[i].flops_per_s / units::kGiga});
    }
    r.tables.push_back(std::move(t));
    r.tables.push_back(std::move(qt));
    r.tables.push_back(std::move(gt));

    r.inputs["buffer_bytes"] = buffer_bytes;
    r.inputs["threads"] = threads;
    r.inputs["repeats"] = o->repeats;
    r.inputs["prompt_tokens"] = o->prompt;
    r.results["memory_total_gib"] = memory.total_bytes / units::kGiB;
    r.results["memory_available_gib"] = memory.available_bytes / units::kGiB;
    r.results["read_gbps"] = read_bps / units::kGBps;
    r.results["layer_best_gflops"] = best_layer_flops / units::kGiga;
    const std::string read_kernel = io::read_kernel();
    if (!busy.empty()) busy += fmt::format(" (measured {} times, the best of each figure kept)", attempts);
    r.results["read_kernel"] = read_kernel;
    r.results["matmul_kernel"] = matmul_kernel;
    r.results["read_cpu_share"] = read.wall_s > 0 ? read.cpu_s / (threads * read.wall_s) : 0;
    r.results["load_average"] = load ? io::Node(*load) : io::Node();
    r.results["busy"] = busy.empty() ? io::Node() : io::Node(busy);
    r.results["attempts"] = attempts;
    r.results["quant_isa"] = std::string(io::quant_isa());
    r.results["attention_gflops"] = attention ? io::Node(attention->flops_per_s / units::kGiga) : io::Node();
    r.results["attention_kernel"] = attention ? io::Node(attention->kernel) : io::Node();
    r.results["token_attention_gflops"] =
        token_attention ? io::Node(token_attention->flops_per_s / units::kGiga) : io::Node();
    r.results["token_attention_kernel"] = token_attention ? io::Node(token_attention->kernel) : io::Node();
    r.results["per_token_overhead_ms"] = overhead ? io::Node(*overhead * units::kMsPerS) : io::Node();
    const RepackIsa repack = io::host_repack_isa();
    r.results["repack_isa"] = std::string(to_string(repack));
    if (!busy.empty()) r.notes.push_back(busy);
    if (kinds.empty()) {
      r.notes.push_back("Q4_0, Q8_0, Q4_K, Q6_K: not measured: edgeplan's kernels of llama.cpp's quantized dot "
                        "products need x86-64 with AVX2, FMA and F16C, and a portable loop's speed says nothing of a "
                        "runtime's; quantized matrices prefill at the fp16 rate and decode at the memory bandwidth");
    }
    r.title = fmt::format("bench: this host, {} threads", threads);
    r.header.push_back(fmt::format("memory {:.2f} GiB, {:.2f} GiB available", memory.total_bytes / units::kGiB,
                                   memory.available_bytes / units::kGiB));
    r.header.push_back(fmt::format("memory read: {:.2f} GB/s (STREAM-style read of {:.0f} MiB, best of {}; {})",
                                   read_bps / units::kGBps, static_cast<double>(buffer_bytes) / units::kMiB, o->repeats,
                                   read_kernel));
    r.header.push_back(fmt::format("matmul: edgeplan's kernel of llama.cpp's CPU fp16 matmul ({}), {} threads, best of "
                                   "{} after a warm-up; layer shapes of {} at {} tokens", matmul_kernel, threads,
                                   o->repeats, model.name, o->prompt));
    std::vector<std::string> quant_shapes;
    for (const io::LayerMatmul& l : quant_layer) {
      quant_shapes.push_back(fmt::format("{} {}x{}{}", l.shape.name, l.shape.n, l.shape.k,
                                         l.count > 1 ? fmt::format(" (x{})", l.count) : ""));
    }
    r.header.push_back(fmt::format("quantized matmul: edgeplan's kernels of llama.cpp's CPU dot products ({}) over one "
                                   "layer of {} as llama.cpp runs it ({}) at {} tokens: the layer's FLOPs over its "
                                   "time, {} threads, best of {} after a warm-up for each shape", io::quant_isa(),
                                   model.name, fmt::join(quant_shapes, "; "), o->prompt, threads, o->repeats));
    if (attention) {
      r.header.push_back(fmt::format("attention: {:.1f} GFLOPS, edgeplan's kernel of llama.cpp's CPU flash attention "
                                     "({}), one layer of {} ({} heads, {} KV heads of {}) over {} tokens, causal "
                                     "FLOPs, {} threads, best of {} after a warm-up", attention->flops_per_s / units::kGiga,
                                     attention->kernel, model.name, model.heads, model.kv_heads, model.head_dim,
                                     o->prompt, threads, o->repeats));
    }
    if (token_attention) {
      r.header.push_back(fmt::format("attention of one decoded token: {:.1f} GFLOPS, edgeplan's kernel of llama.cpp's "
                                     "one-query flash attention ({}) over {} cached tokens, {} threads, the mean of {} "
                                     "after a warm-up", token_attention->flops_per_s / units::kGiga,
                                     token_attention->kernel, o->prompt, threads, o->repeats));
    }
    if (!tokens.empty()) {
      r.header.push_back(fmt::format(
          "matrix-vector products (one decoded token): the same kernels in tiles of one token over a decoded token's "
          "layers of {} in each weight type (as many of its {} as {:.0f} MiB holds, the weights from DRAM: the "
          "threads read as much other memory before each token), {} threads meeting where llama.cpp's do (after each "
          "node, and inside each matmul and the flash attention), the mean of {} tokens after a warm-up: ms the "
          "matrices alone, +nodes ms with the element-wise nodes between them; GB/s is the weights streamed",
          model.name, model.layers, static_cast<double>(token_bytes) / units::kMiB, threads, o->repeats));
    }
    if (overhead) {
      r.header.push_back(fmt::format("per-token overhead: {:.3f} ms over {}'s layers, what the element-wise nodes "
                                     "add to decode's time for the matrices (the read and one-token rates), the mean "
                                     "over the weight types", *overhead * units::kMsPerS, model.name));
    }
    r.header.push_back(fmt::format("llama.cpp's CPU repack on this host: {} (its [runtime] repack)", to_string(repack)));
    if (attempts > 1 && busy.empty()) {
      r.notes.push_back(fmt::format("the machine was busy at first: measured {} times, the best of each figure kept",
                                    attempts));
    }
    if (storage) {
      r.inputs["storage_file"] = o->storage;
      r.results["storage_read_gbps"] = storage->bytes / storage->seconds / units::kGBps;
      r.header.push_back(fmt::format("storage read: {:.2f} GB/s ({:.0f} MiB of {}; a file in the page cache reads "
                                     "at memory speed)", storage->bytes / storage->seconds / units::kGBps,
                                     storage->bytes / units::kMiB, o->storage));
    }
    if (profile_out) {
      io::HostProfile p;
      p.description = o->description;
      p.memory = memory;
      p.read_bytes_per_s = read_bps;
      p.gemm_flops_per_s = best_layer_flops;
      p.quant_rates = quant;
      p.attention = attention;
      p.gemv_rates = gemv;
      p.token_attention = token_attention;
      p.per_token_overhead_s = overhead;
      if (overhead) {
        p.overhead_source = fmt::format("measured: a decoded token's layers of {}, the threads meeting where "
                                        "llama.cpp's do, less their matrices alone", model.name);
      }
      p.repack = repack;
      if (storage) p.storage_bytes_per_s = storage->bytes / storage->seconds;
      std::vector<std::string> kernels{fmt::format("read: {}", read_kernel), fmt::format("matmul: {}", matmul_kernel)};
      for (const io::QuantRate& q : quant) kernels.push_back(fmt::format("{}: {}", io::weight_type(q.kind), q.kernel));
      if (attention) kernels.push_back(fmt::format("attention: {}", attention->kernel));
      for (const io::QuantRate& v : gemv) kernels.push_back(fmt::format("{} one token: {}", io::weight_type(v.kind), v.kernel));
      if (token_attention) kernels.push_back(fmt::format("attention one token: {}", token_attention->kernel));
      p.kernels = fmt::format("{}", fmt::join(kernels, "; "));
      p.comments = {"Device profile of this host, written by `edgeplan bench --write-profile`.",
                    fmt::format("{} threads, {:.0f} MiB read buffer, the shapes of {}: its layer matmuls at {} tokens "
                                "([prefill]), its matrices for one decoded token ([decode]).", threads,
                                static_cast<double>(buffer_bytes) / units::kMiB, model.name, o->prompt)};
      if (!busy.empty()) p.comments.push_back(busy);
      const std::string text = io::device_profile_toml(p);
      const std::string& path = o->write_profile.path;
      unwrap(io::load_device(io::ProfileText{std::filesystem::path(path).stem().string(), path, path, text}, {}));
      profile_out->stream() << text;
      if (auto error = profile_out->commit()) throw UsageError(error->message);
      r.inputs["write_profile"] = path;
      r.notes.push_back(fmt::format("wrote device profile {} (use it as --device {})", path, path));
    }
    return r;
  };
}

}  // namespace edgeplan::cli
