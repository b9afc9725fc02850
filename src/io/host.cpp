#include "edgeplan/io/host.hpp"

#include <algorithm>
#include <atomic>
#include <array>
#include <charconv>
#include <cmath>
#include <chrono>
#include <fstream>
#include <memory>
#include <numeric>
#include <span>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include "edgeplan/core/prefill.hpp"
#include "edgeplan/util/units.hpp"
#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/io/toml_text.hpp"
#include "edgeplan/io/input_file.hpp"

namespace edgeplan::io {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Sums a slice as four streams side by side (its four quarters), two accumulators each, so that the loop keeps
// several reads in flight as a runtime's matrix-vector kernels do (llama.cpp's one-token calls walk four 16-row
// groups at once): on the development VM one stream per thread read 20-22 GB/s on 2 cores, four streams of
// 512-bit loads 30.5, where bench's one-token kernels streamed Q8_0 weights at 27-29.
std::uint64_t read_slice_portable(const std::uint64_t* p, std::size_t n) {
  std::uint64_t acc[8] = {};
  const std::size_t quarter = n / 8 * 2;
  for (std::size_t i = 0; i < quarter; i += 2) {
    for (std::size_t l = 0; l < 4; ++l) {
      acc[2 * l] += p[l * quarter + i];
      acc[2 * l + 1] += p[l * quarter + i + 1];
    }
  }
  for (std::size_t i = 4 * quarter; i < n; ++i) acc[0] += p[i];
  return std::accumulate(std::begin(acc), std::end(acc), std::uint64_t{0});
}

#if defined(__x86_64__)
// The same in the widest vectors the CPU has, an accumulator of 512 or 256 bits per stream: the loads the
// runtime's own kernels stream weights with (llama.cpp's AVX-512 and AVX2 builds).
__attribute__((target("avx512f"))) std::uint64_t read_slice_avx512(const std::uint64_t* p, std::size_t n) {
  __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
  const std::size_t quarter = n / 32 * 8;  // four streams of whole vectors, side by side
  for (std::size_t i = 0; i < quarter; i += 8) {
    for (std::size_t l = 0; l < 4; ++l) acc[l] = _mm512_add_epi64(acc[l], _mm512_loadu_si512(p + l * quarter + i));
  }
  alignas(64) std::uint64_t lanes[4][8];
  for (std::size_t l = 0; l < 4; ++l) _mm512_store_si512(lanes[l], acc[l]);
  return std::accumulate(&lanes[0][0], &lanes[0][0] + 32, read_slice_portable(p + 4 * quarter, n - 4 * quarter));
}

__attribute__((target("avx2"))) std::uint64_t read_slice_avx2(const std::uint64_t* p, std::size_t n) {
  __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
  const std::size_t quarter = n / 16 * 4;
  for (std::size_t i = 0; i < quarter; i += 4) {
    for (std::size_t l = 0; l < 4; ++l) {
      acc[l] = _mm256_add_epi64(acc[l], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + l * quarter + i)));
    }
  }
  alignas(32) std::uint64_t lanes[4][4];
  for (std::size_t l = 0; l < 4; ++l) _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[l]), acc[l]);
  return std::accumulate(&lanes[0][0], &lanes[0][0] + 16, read_slice_portable(p + 4 * quarter, n - 4 * quarter));
}
#endif

// The read loop this CPU runs: the widest vectors it has (read_kernel names them).
enum class ReadIsa { portable, avx2, avx512 };
ReadIsa read_isa() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return ReadIsa::avx512;
  if (__builtin_cpu_supports("avx2")) return ReadIsa::avx2;
#endif
  return ReadIsa::portable;
}

std::uint64_t read_slice(const std::uint64_t* p, std::size_t n) {
#if defined(__x86_64__)
  switch (read_isa()) {
    case ReadIsa::avx512: return read_slice_avx512(p, n);
    case ReadIsa::avx2: return read_slice_avx2(p, n);
    case ReadIsa::portable: break;
  }
#endif
  return read_slice_portable(p, n);
}

// Thread t's share of n items cut into `threads` contiguous slices of ceil(n / threads): [begin, end).
std::pair<std::size_t, std::size_t> thread_slice(std::size_t n, unsigned threads, unsigned t) {
  const std::size_t slice = (n + threads - 1) / threads, begin = std::min(n, t * slice);
  return {begin, std::min(n, begin + slice)};
}

// Runs body(t) on `threads` threads at once and returns the wall time.
template <class Body>
double timed_on_threads(unsigned threads, Body body) {
  const auto start = Clock::now();
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back([&body, t] { body(t); });
  }
  return seconds_since(start);
}

// How `threads` threads share a matmul's rows (F16Matmul, QuantMatmul): a contiguous slice each, or chunks where the
// matmul names a chunk size (QuantMatmul's chunk_rows: the first chunk by thread index, the rest from a shared
// counter, and slices where there are fewer than 4 chunks a thread, as ggml_compute_forward_mul_mat hands them out).
template <class Matmul>
class RowShare {
 public:
  RowShare(Matmul& mm, unsigned threads) : mm_(mm), threads_(threads), slice_((mm.rows() + threads - 1) / threads) {
    if constexpr (requires { mm.chunk_rows(threads); }) chunk_ = mm.chunk_rows(threads);
    chunks_ = chunk_ == 0 ? 0 : (mm.rows() + chunk_ - 1) / chunk_;
    if (chunks_ < 4ull * threads) chunk_ = 0;
  }
  void reset() { next_.store(threads_, std::memory_order_relaxed); }  // before each run, while no thread runs
  void run(unsigned t) {  // thread t's share
    const std::uint64_t rows = mm_.rows();
    if (chunk_ == 0) {
      mm_.run(t * slice_, std::min(rows, (t + 1) * slice_));
      return;
    }
    for (std::uint64_t c = t; c < chunks_; c = next_.fetch_add(1, std::memory_order_relaxed)) {
      mm_.run(c * chunk_, std::min(rows, (c + 1) * chunk_));
    }
  }

 private:
  Matmul& mm_;
  unsigned threads_;
  std::uint64_t slice_, chunk_ = 0, chunks_ = 0;
  std::atomic<std::uint64_t> next_{0};
};

// What a figure keeps of its timed runs: the best, or their mean. A decoded token's figures (its matrices, its
// attention) take the mean, as a decode rate is a run of tokens over its time (llama-bench's tg): the best single
// token of 32 read 3-8% below their mean on the EPYC of docs/accuracy.md, unevenly by weight type.
enum class Timing { best, mean };

double kept_s(std::span<const double> runs, Timing timing) {
  return timing == Timing::best ? *std::min_element(runs.begin(), runs.end())
                                : std::accumulate(runs.begin(), runs.end(), 0.0) / static_cast<double>(runs.size());
}

// The wall time of `repeats` runs (at least one; fewer past kRepeatBudgetS) of a matmul after one warm-up, `threads`
// threads sharing its rows (RowShare): their best or their mean (kept_s).
template <class Matmul>
double matmul_s(Matmul& mm, unsigned threads, unsigned repeats, Timing timing) {
  RowShare<Matmul> share(mm, threads);
  auto once = [&] {
    share.reset();
    return timed_on_threads(threads, [&](unsigned t) { share.run(t); });
  };
  return kept_s(bounded_passes(repeats, once(), once), timing);
}

}  // namespace

std::vector<double> bounded_passes(unsigned repeats, double spent_s, const std::function<double()>& pass) {
  std::vector<double> runs;
  do {
    runs.push_back(pass());
    spent_s += runs.back();
  } while (runs.size() < repeats && spent_s < kRepeatBudgetS);
  return runs;
}

ReadRate measure_read_bandwidth(std::uint64_t buffer_bytes, unsigned threads, unsigned repeats) {
  const std::size_t words = buffer_bytes / sizeof(std::uint64_t);
  std::vector<std::uint64_t> buffer(words);
  auto range = [&](unsigned t) { return thread_slice(words, threads, t); };
  timed_on_threads(threads, [&](unsigned t) {  // first touch from the thread that reads the slice
    auto [begin, end] = range(t);
    std::iota(buffer.begin() + static_cast<std::ptrdiff_t>(begin), buffer.begin() + static_cast<std::ptrdiff_t>(end),
              std::uint64_t{begin});
  });
  std::vector<std::uint64_t> sums(threads);  // stored, so the reads cannot be optimised away
  ReadRate rate;
  const double cpu_before = process_cpu_s();
  for (const double s : bounded_passes(repeats, 0, [&] {
         return timed_on_threads(threads, [&](unsigned t) {
           auto [begin, end] = range(t);
           sums[t] += read_slice(buffer.data() + begin, end - begin);
         });
       })) {
    rate.wall_s += s;
    rate.bytes_per_s = std::max(rate.bytes_per_s, static_cast<double>(words * sizeof(std::uint64_t)) / s);
  }
  rate.cpu_s = process_cpu_s() - cpu_before;
  return rate;
}

RepackIsa host_repack_isa() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool vbmi = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_AVX512VBMI) != 0;
  const bool bf16 = __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0 && (eax & (1u << 5)) != 0;  // AVX512_BF16
  if (cpu_has_amx() && vbmi && bf16) return RepackIsa::x86_amx;
  if (__builtin_cpu_supports("avx512f")) return RepackIsa::x86_avx512;
  if (__builtin_cpu_supports("avx2")) return RepackIsa::x86_avx2;
#elif defined(__aarch64__) && defined(__linux__)
  if ((getauxval(AT_HWCAP2) & HWCAP2_I8MM) != 0) return RepackIsa::arm_i8mm;
  if ((getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0) return RepackIsa::arm_dotprod;
#endif
  return RepackIsa::none;
}

std::string read_kernel() {
  switch (read_isa()) {
    case ReadIsa::avx512: return "uint64 sum of 4 streams of 512-bit loads, x86-64 AVX-512";
    case ReadIsa::avx2: return "uint64 sum of 4 streams of 256-bit loads, x86-64 AVX2";
    case ReadIsa::portable: break;
  }
#if defined(__x86_64__)
  constexpr const char* kIsa = "x86-64 SSE2";
#elif defined(__aarch64__)
  constexpr const char* kIsa = "AArch64 NEON";
#else
  constexpr const char* kIsa = "this compiler's default target";
#endif
  return fmt::format("uint64 sum of 4 streams, {}", kIsa);
}

double process_cpu_s() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

std::optional<double> load_average() {
  double load[1] = {};
  if (::getloadavg(load, 1) != 1) return std::nullopt;
  return load[0];
}

std::string busy_reason(const ReadRate& read, unsigned threads, std::optional<double> load, unsigned cores) {
  std::vector<std::string> why;
  if (read.wall_s > 0 && threads > 0) {
    const double share = read.cpu_s / (threads * read.wall_s);
    if (share < kMinCpuShare) {
      why.push_back(fmt::format("the read threads got {:.0f}% of their cores (CPU time over threads x wall time)",
                                share * 100));
    }
  }
  if (load && cores > 0 && *load > kMaxLoadPerCore * cores) {
    why.push_back(fmt::format("the load average was {:.2f} on {} cores before the run", *load, cores));
  }
  if (why.empty()) return "";
  return fmt::format("busy machine: {}; the figures read low: measure again on an idle machine", fmt::join(why, ", and "));
}

AttentionRate measure_attention(const ModelSpec& m, std::uint64_t tokens, unsigned threads, unsigned repeats) {
  FlashAttention fa(m.heads, m.kv_heads, std::max<std::uint64_t>(8, m.head_dim / 8 * 8), tokens);
  const double seconds = matmul_s(fa, threads, repeats, Timing::best);
  return {fa.kernel(), attention_flops(m, tokens) / attention_layers(m) / seconds};
}

AttentionRate measure_token_attention(const ModelSpec& m, std::uint64_t context, unsigned threads, unsigned repeats) {
  const std::uint64_t dim = std::max<std::uint64_t>(8, m.head_dim / 8 * 8);
  const std::uint64_t layer_bytes = 2 * context * m.kv_heads * dim * sizeof(std::uint16_t);
  const std::uint64_t layers = std::clamp<std::uint64_t>(kTokenAttentionBytes / layer_bytes, 1, kTokenAttentionLayers);
  TokenAttention ta(m.heads, m.kv_heads, dim, context, layers);
  const double seconds = matmul_s(ta, threads, repeats, Timing::mean);
  return {ta.kernel(), ta.flops() / seconds};
}

MatmulTime measure_f16_matmul(const GemmShape& shape, unsigned threads, unsigned repeats) {
  F16Matmul mm(shape.n, shape.k, shape.m);
  const double seconds = matmul_s(mm, threads, repeats, Timing::best);
  return {mm.kernel(), seconds};
}

QuantRate measure_quant_layer(QuantKind kind, std::span<const LayerMatmul> layer, unsigned threads, unsigned repeats) {
  double flops = 0, seconds = 0;
  std::vector<std::string> kernels;
  for (const LayerMatmul& l : layer) {
    const std::uint64_t tokens = (l.shape.m + 31) / 32 * 32, k = std::max<std::uint64_t>(256, l.shape.k / 256 * 256);
    QuantMatmul mm(kind, l.shape.n, k, tokens);
    flops += l.count * mm.flops();
    seconds += l.count * matmul_s(mm, threads, repeats, Timing::best);
    if (std::find(kernels.begin(), kernels.end(), mm.kernel()) == kernels.end()) kernels.push_back(mm.kernel());
  }
  return {kind, fmt::format("{}", fmt::join(kernels, " + ")), flops / seconds};
}

std::vector<GemmShape> llama_layer_matmuls(const ModelSpec& m, std::uint64_t tokens) {
  const std::uint64_t q = std::uint64_t{m.heads} * m.head_dim, kv = std::uint64_t{m.kv_heads} * m.head_dim;
  return {{"attn_q", tokens, q, m.hidden},        {"attn_k", tokens, kv, m.hidden},
          {"attn_v", tokens, kv, m.hidden},       {"attn_output", tokens, m.hidden, q},
          {"ffn_gate", tokens, m.ffn, m.hidden},  {"ffn_up", tokens, m.ffn, m.hidden},
          {"ffn_down", tokens, m.hidden, m.ffn}};
}

std::vector<LayerNode> llama_layer_nodes(const ModelSpec& m) {
  const std::uint64_t kv = std::uint64_t{m.kv_heads} * m.head_dim;
  const LayerNode norm{-1, 1, m.hidden}, add{-1, 1, m.hidden}, store{-1, 1, kv};
  const auto matmul = [](int i) { return LayerNode{i, 0, 0, 2}; };
  return {norm,                                                  // attn_norm (the RMS norm and its weight, fused)
          matmul(0), {-1, m.heads, m.head_dim},                  // attn_q, its RoPE
          matmul(2), matmul(1), {-1, m.kv_heads, m.head_dim},    // attn_v, attn_k, its RoPE
          store,     store,                                      // K and V into the cache (SET_ROWS)
          {-1, 0, 0, 2},                                         // flash attention: decode's attention term
          matmul(3), add,                                        // attn_output, the residual
          norm,      matmul(4), matmul(5), {-1, 1, m.ffn},       // ffn_norm, ffn_gate, ffn_up, SwiGLU
          matmul(6), add};                                       // ffn_down, the residual
}

namespace {

// The threads meeting after each op of a graph, as ggml_barrier does: the last to arrive lets the others go; they
// spin meanwhile.
class SpinBarrier {
 public:
  explicit SpinBarrier(unsigned threads) : threads_(threads) {}
  void wait() {
    const unsigned round = passed_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == threads_ - 1) {
      arrived_.store(0, std::memory_order_relaxed);
      passed_.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
    while (passed_.load(std::memory_order_acquire) == round) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
  }

 private:
  unsigned threads_;
  std::atomic<unsigned> arrived_{0}, passed_{0};
};

}  // namespace

TokenRun measure_token_layers(QuantKind kind, const ModelSpec& m, std::uint64_t max_bytes, unsigned threads,
                                unsigned repeats) {
  const auto width = [](std::uint64_t k) { return std::max<std::uint64_t>(256, k / 256 * 256); };
  const std::vector<GemmShape> shapes = llama_layer_matmuls(m, 1);
  double layer_bytes = 0;
  for (const GemmShape& s : shapes) layer_bytes += static_cast<double>(s.n * quant_row_bytes(kind, width(s.k)));
  TokenRun run;
  run.kind = kind;
  run.layers = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(static_cast<double>(max_bytes) / layer_bytes), 1,
                                         std::max<std::uint32_t>(1, m.layers));
  run.bytes = layer_bytes * static_cast<double>(run.layers);
  // matrix[l][i]: layer l's share of shapes[i] (none for a shape of no rows); `matrices` reserved, so that the
  // shares' references to them hold.
  std::vector<QuantMatmul> matrices;
  matrices.reserve(run.layers * shapes.size());
  std::vector<std::vector<std::unique_ptr<RowShare<QuantMatmul>>>> matrix(run.layers);
  for (std::uint64_t l = 0; l < run.layers; ++l) {
    for (const GemmShape& s : shapes) {
      matrix[l].emplace_back();
      if (s.n == 0) continue;
      matrices.emplace_back(kind, s.n, width(s.k), 1);
      run.flops += matrices.back().flops();
      matrix[l].back() = std::make_unique<RowShare<QuantMatmul>>(matrices.back(), threads);
    }
  }
  if (matrices.empty()) return run;
  run.kernel = matrices.front().kernel();
  // Each layer's nodes in graph order: a matrix (its share of the rows), or an element-wise node's rows shared as
  // ggml shares them (dr = ceil(rows / threads) each, in thread order), one pass over their values.
  const std::vector<LayerNode> nodes = llama_layer_nodes(m);
  std::uint64_t values = 0;
  for (const LayerNode& n : nodes) values = std::max(values, n.rows * n.width);
  std::vector<float> x(values, 0.25f), y(values, 0.0f);
  const auto elementwise = [&](const LayerNode& n, unsigned t) {
    const auto [first, last] = thread_slice(n.rows, threads, t);
    for (std::uint64_t i = first * n.width; i < last * n.width; ++i) y[i] = 0.5f * y[i] + x[i];
  };
  // Before each token, untimed, the threads read a buffer of max_bytes (as far beyond the caches as the weights'
  // budget), each its share, so that the token's weights come from DRAM as the one-token rates' do, and as a model's
  // do when a token streams more than the last-level cache (its layers, output matrix and KV cache). Cycling the
  // same weights alone let the 32 MB L3 of the EPYC of docs/accuracy.md keep part of its 76 MB: 0.2-0.3 ms faster.
  std::vector<std::uint64_t> evict(max_bytes / sizeof(std::uint64_t), 1), kept(threads);
  SpinBarrier barrier(threads);
  // Each repeat runs the token twice, its matrices alone and then with the element-wise nodes, one right after the
  // other, so that both meet the same machine.
  std::vector<double> alone(std::max(1u, repeats) + 1), whole(alone.size());  // the first of each a warm-up
  // Rounds to run: fewer once they pass kRepeatBudgetS (thread 0 decides after a round; the barrier after it shows
  // every thread the same count).
  std::atomic<std::size_t> rounds = alone.size();
  const auto begin = Clock::now();
  timed_on_threads(threads, [&](unsigned t) {
    for (std::size_t r = 0; r < rounds.load(std::memory_order_relaxed); ++r) {
      for (const bool with_nodes : {false, true}) {
        if (t == 0) {
          for (auto& layer : matrix) {
            for (auto& share : layer) {
              if (share) share->reset();
            }
          }
        }
        const auto [from, to] = thread_slice(evict.size(), threads, t);
        kept[t] += read_slice(evict.data() + from, to - from);
        __asm__ volatile("" : : "r"(kept[t]) : "memory");  // the reads are used
        barrier.wait();
        const auto start = Clock::now();
        for (std::uint64_t l = 0; l < run.layers; ++l) {
          for (const LayerNode& n : nodes) {
            if (n.matmul < 0 && !with_nodes) continue;
            for (unsigned b = 1; b < n.barriers; ++b) barrier.wait();
            if (n.matmul < 0) {
              elementwise(n, t);
            } else if (const auto& share = matrix[l][static_cast<std::size_t>(n.matmul)]) {
              share->run(t);
            }
            barrier.wait();
          }
        }
        if (t == 0) (with_nodes ? whole : alone)[r] = seconds_since(start);
      }
      if (t == 0 && r >= 1 && seconds_since(begin) >= kRepeatBudgetS) rounds.store(r + 1, std::memory_order_relaxed);
      barrier.wait();
    }
  });
  const std::size_t timed = rounds.load() - 1;
  run.matrices_seconds = kept_s(std::span(alone).subspan(1, timed), Timing::mean);
  run.seconds = kept_s(std::span(whole).subspan(1, timed), Timing::mean);
  return run;
}

Result<FileRead> measure_file_read(const std::string& path) {
  auto file = open_input(path);
  if (!file) return Error{fmt::format("--storage: cannot read '{}': {}", path, file.error().message)};
  std::ifstream& in = file->stream;
  std::vector<char> buf(8u << 20);
  FileRead r;
  const auto start = Clock::now();
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    r.bytes += static_cast<double>(in.gcount());
    if (seconds_since(start) >= kFileReadBudgetS) break;
  }
  r.seconds = seconds_since(start);
  if (r.bytes == 0) return Error{fmt::format("--storage: '{}' is empty", path)};
  return r;
}

Result<HostMemory> parse_meminfo(std::string_view text) {
  auto kib = [&](std::string_view key) -> std::optional<double> {
    const std::string tag = std::string(key) + ":";
    const auto at = text.find(tag);
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = text.substr(at + tag.size());
    rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
    if (ec != std::errc()) return std::nullopt;
    return static_cast<double>(v) * units::kKiB;
  };
  const auto total = kib("MemTotal"), available = kib("MemAvailable");
  if (!total || !available) return Error{"/proc/meminfo has no MemTotal or MemAvailable line"};
  if (*total <= 0 || *available <= 0) return Error{"/proc/meminfo reports no memory"};
  return HostMemory{*total, std::min(*available, *total)};
}

Result<HostMemory> read_meminfo() {
#ifdef __linux__
  std::ifstream in("/proc/meminfo");
  if (!in) return Error{"cannot read /proc/meminfo (edgeplan bench --write-profile needs Linux)"};
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_meminfo(ss.str());
#else
  return Error{"bench reads the memory size from /proc/meminfo, which only Linux has: on this system, give "
               "memory_gib and reserved_gib in a device profile by hand"};
#endif
}

std::string device_profile_toml(const HostProfile& p) {
  const auto decimals3 = [](double v) { return std::round(v * 1000) / 1000; };
  DeviceSpec d;
  d.memory_bytes = decimals3(p.memory.total_bytes / units::kGiB) * units::kGiB;
  d.reserved_bytes = decimals3((p.memory.total_bytes - p.memory.available_bytes) / units::kGiB) * units::kGiB;
  d.bandwidth_bytes_per_s = p.read_bytes_per_s;
  d.utilization = 1;
  d.per_token_overhead_s = p.per_token_overhead_s.value_or(0);
  using Comment = std::pair<std::string_view, std::string_view>;
  std::vector<Comment> comments{
      {"memory_gib", "MemTotal in /proc/meminfo"},
      {"reserved_gib", "MemTotal - MemAvailable when measured: held by the OS and other programs"},
      {"bandwidth_gbps", "measured: STREAM-style read over all cores"},
      {"utilization", "the bandwidth above is measured, not a peak: all of it is achievable"},
      {"per_token_overhead_ms",
       p.per_token_overhead_s ? std::string_view(p.overhead_source)
                              : "unknown until fitted: run `edgeplan calibrate` on llama-bench results"},
      {"method", "measured by `edgeplan bench`, nothing fitted to a runtime"},
  };
  std::vector<std::string> texts;  // the per-type comments, which the span of `comments` points into
  texts.reserve(p.quant_rates.size() + p.gemv_rates.size() + 3);
  if (p.gemm_flops_per_s || !p.quant_rates.empty()) {
    double peak = p.gemm_flops_per_s.value_or(0), slowest = 0;
    for (const QuantRate& q : p.quant_rates) peak = std::max(peak, q.flops_per_s);
    if (p.attention) peak = std::max(peak, p.attention->flops_per_s);
    PrefillSpec& prefill = d.prefill.emplace();
    prefill.peak_flops = peak;
    if (p.gemm_flops_per_s) prefill.efficiency = prefill.quantized_efficiency = *p.gemm_flops_per_s / peak;
    for (const QuantRate& q : p.quant_rates) {
      const std::optional<std::size_t> i = prefill_type_index(weight_type(q.kind));
      if (!i) continue;
      prefill.type_efficiency[*i] = q.flops_per_s / peak;
      slowest = slowest > 0 ? std::min(slowest, q.flops_per_s) : q.flops_per_s;
    }
    if (slowest > 0) prefill.quantized_efficiency = slowest / peak;
    if (p.attention) prefill.attention_efficiency = p.attention->flops_per_s / peak;
    const bool quantized_peak = !p.gemm_flops_per_s || peak > *p.gemm_flops_per_s;
    comments.emplace_back("tflops", quantized_peak ? "measured: the fastest of the rates below"
                                                   : "measured: best fp16 matmul (F16 weights) at LLM layer sizes");
    comments.emplace_back("efficiency", quantized_peak ? "fp16 matmul (F16 weights) at LLM layer sizes, of tflops"
                                                       : "the rate above is measured, not a peak");
    if (slowest > 0) comments.emplace_back("quantized_efficiency", "types not measured: as the slowest measured");
    if (p.attention) texts.push_back(fmt::format("measured: {}", p.attention->kernel));
    if (p.attention) comments.emplace_back("attention_efficiency", texts.back());
    for (const QuantRate& q : p.quant_rates) {
      const std::optional<std::size_t> i = prefill_type_index(weight_type(q.kind));
      if (!i) continue;
      texts.push_back(fmt::format("measured: {}", q.kernel));
      comments.emplace_back(schema::prefill_type_key(*i), texts.back());
    }
  }
  for (const QuantRate& v : p.gemv_rates) {
    const std::optional<std::size_t> i = prefill_type_index(weight_type(v.kind));
    if (!i) continue;
    if (!d.decode) d.decode.emplace();
    d.decode->type_flops[*i] = v.flops_per_s;
    texts.push_back(fmt::format("measured: one token, weights from DRAM: {}", v.kernel));
    comments.emplace_back(schema::decode_type_key(*i), texts.back());
  }
  if (d.decode && p.token_attention) {
    d.decode->attention_flops = p.token_attention->flops_per_s;
    texts.push_back(fmt::format("measured: one token over the cache: {}", p.token_attention->kernel));
    comments.emplace_back("attention_gflops", texts.back());
  }
  d.runtime.repack = p.repack;
  comments.emplace_back("buffers", "llama.cpp's compute, output and repack buffers are counted");
  comments.emplace_back("repack", "the CPU features llama.cpp's prebuilt CPU library repacks for on this host");
  d.provenance.emplace();
  d.provenance->method = Calibration::measured;
  d.provenance->kernels = p.kernels;
  TomlText t;
  for (const std::string& c : p.comments) t.comment(c);
  t.set("description", p.description);
  const auto& device = schema::device_schema();
  schema::write_rows(schema::section(device, ""), d, t, comments);
  schema::write_rows(schema::section(device, "prefill"), d, t, comments);
  schema::write_rows(schema::section(device, "decode"), d, t, comments);
  schema::write_rows(schema::section(device, "runtime"), d, t, comments);
  schema::write_rows(schema::section(device, "provenance"), d, t, comments);
  std::string out = t.text();
  if (p.storage_bytes_per_s) {
    out += "\n# Storage for `stream`: the read rate is measured (one sequential pass; a file in the page cache reads at\n"
           "# memory speed); set page_kib, page_fault_us and readahead_kib for this host, then uncomment.\n";
    out += "# [storage]\n# " + TomlText().set("read_gbps", *p.storage_bytes_per_s / units::kGBps).text();
  }
  return out;
}

}  // namespace edgeplan::io
