#include "edgeplan/core/quant.hpp"

#include <gtest/gtest.h>

#include "sanitizer.hpp"
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>

#include "cli_run.hpp"
#include "edgeplan/core/float16.hpp"
#include "edgeplan/util/parallel.hpp"

namespace edgeplan {
namespace {

const QuantMethod& method(std::string_view name) {
  const QuantMethod* m = find_quant_method(name);
  EXPECT_NE(m, nullptr) << name;
  return *m;
}

Quantized run(std::string_view name, const std::vector<float>& w, std::uint64_t rows) {
  auto q = quantize(method(name), {w, rows, w.size() / rows});
  EXPECT_TRUE(q.ok()) << q.error().message;
  return *q;
}

TEST(Float16, ConvertsAndRoundsToNearestEven) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(1e6f), 0x7c00);             // overflow: infinity
  EXPECT_EQ(f32_to_f16(0.1f), 0x2e66);             // 0.0999755859375
  EXPECT_EQ(f32_to_f16(1e-7f), 0x0002);            // subnormal: 1e-7 / 2^-24 = 1.68 -> 2
  EXPECT_EQ(f32_to_f16(1.0f + 0x1p-11f), 0x3c00);  // halfway between 1 and 1 + 2^-10: ties to even
  EXPECT_FLOAT_EQ(f16_to_f32(0x2e66), 0.0999755859375f);
  EXPECT_FLOAT_EQ(f16_to_f32(0x0001), 0x1p-24f);
  EXPECT_FLOAT_EQ(f16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_FLOAT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_FLOAT_EQ(bf16_to_f32(f32_to_bf16(3.14159f)), 3.140625f);
}

TEST(Quant, MethodTable) {
  EXPECT_EQ(quant_methods().size(), 22u);
  EXPECT_EQ(method("INT4-ASYM-G64").group_weights, 64u);
  EXPECT_EQ(method("q4_0").scheme, QuantScheme::q4_0);
  EXPECT_EQ(find_quant_method("int3-sym-channel"), nullptr);
}

TEST(Quant, SymmetricInt8PerTensor) {
  // max|w| = 1: s = 1/127; codes round(127 w).
  const Quantized q = run("int8-sym-tensor", {1.0f, -0.6f, 0.3f, 0.0f}, 1);
  EXPECT_EQ(q.codes, (std::vector<std::int16_t>{127, -76, 38, 0}));
  ASSERT_EQ(q.scales.size(), 1u);
  EXPECT_FLOAT_EQ(q.scales[0], 1.0f / 127);
  EXPECT_FLOAT_EQ(q.zero_points[0], 0);
  EXPECT_FLOAT_EQ(q.dequantized[1], -76.0f / 127);
}

TEST(Quant, PerChannelGivesEachRowItsScale) {
  const std::vector<float> w{1.0f, -0.5f, 0.04f, -0.02f};  // row 0 max 1, row 1 max 0.04
  const Quantized tensor = run("int8-sym-tensor", w, 2);
  const Quantized channel = run("int8-sym-channel", w, 2);
  EXPECT_EQ(tensor.codes[2], 5);  // 0.04 x 127 = 5.08
  EXPECT_EQ(channel.codes[2], 127);
  EXPECT_EQ(channel.codes[3], -64);  // -0.02 / (0.04 / 127) = -63.5 -> ties to even
  ASSERT_EQ(channel.scales.size(), 2u);
  EXPECT_FLOAT_EQ(channel.scales[1], 0.04f / 127);
  EXPECT_FLOAT_EQ(channel.dequantized[2], 0.04f);
}

TEST(Quant, AsymmetricInt8WithZeroPoint) {
  // range [-1, 2]: s = 3/255 = 1/85, z = 85; q = round(85 w) + 85.
  const Quantized q = run("int8-asym-channel", {-1.0f, 0.0f, 0.55f, 2.0f}, 1);
  EXPECT_EQ(q.codes, (std::vector<std::int16_t>{0, 85, 132, 255}));
  EXPECT_FLOAT_EQ(q.scales[0], 3.0f / 255);
  EXPECT_FLOAT_EQ(q.zero_points[0], 85);
  EXPECT_FLOAT_EQ(q.dequantized[2], 47.0f / 85);
  EXPECT_FLOAT_EQ(q.dequantized[1], 0.0f);  // zero is exact
}

TEST(Quant, AsymmetricRangeHoldsZero) {
  // All positive: the range is widened to [0, 2], so z = 0 and s = 2/255.
  const Quantized q = run("int8-asym-channel", {1.1f, 2.0f}, 1);
  EXPECT_FLOAT_EQ(q.zero_points[0], 0);
  EXPECT_EQ(q.codes, (std::vector<std::int16_t>{140, 255}));  // 1.1 x 127.5 = 140.25
}

TEST(Quant, Int4SymmetricAndAsymmetric) {
  // max 0.7: s = 0.1; codes round(10 w) within [-7, 7].
  const Quantized sym = run("int4-sym-channel", {0.7f, -0.32f, 0.1f, -0.06f}, 1);
  EXPECT_EQ(sym.codes, (std::vector<std::int16_t>{7, -3, 1, -1}));
  EXPECT_FLOAT_EQ(sym.scales[0], 0.1f);
  // range [-0.5, 1]: s = 0.1, z = 5; codes round(10 w) + 5 within [0, 15].
  const Quantized asym = run("int4-asym-channel", {-0.5f, 1.0f, 0.32f, 0.0f}, 1);
  EXPECT_EQ(asym.codes, (std::vector<std::int16_t>{0, 15, 8, 5}));
  EXPECT_FLOAT_EQ(asym.zero_points[0], 5);
}

TEST(Quant, GroupsSplitRowsAndTheLastMayBeShort) {
  std::vector<float> w(80, 0.0f);
  w[0] = 1.0f;   // group 0: weights 0-31
  w[40] = 2.0f;  // group 1: 32-63
  w[70] = 0.5f;  // group 2: 64-79 (16 weights)
  const Quantized q = run("int8-sym-g32", w, 1);
  ASSERT_EQ(q.scales.size(), 3u);
  EXPECT_FLOAT_EQ(q.scales[0], 1.0f / 127);
  EXPECT_FLOAT_EQ(q.scales[1], 2.0f / 127);
  EXPECT_FLOAT_EQ(q.scales[2], 0.5f / 127);
  EXPECT_EQ(q.codes[70], 127);
}

TEST(Quant, GgmlQ8_0StoresAnFp16Scale) {
  std::vector<float> w(32, 0.0f);
  w[0] = 0.3f;
  w[1] = -0.15f;
  const Quantized q = run("q8_0", w, 1);
  EXPECT_EQ(q.codes[0], 127);
  EXPECT_EQ(q.codes[1], -64);  // -0.15 / (0.3 / 127) = -63.5 -> ties to even (ggml's roundf gives -64 too)
  EXPECT_FLOAT_EQ(q.scales[0], f16_to_f32(f32_to_f16(0.3f / 127)));
  EXPECT_FLOAT_EQ(q.dequantized[0], 127 * q.scales[0]);
}

TEST(Quant, GgmlQ4_0ScalesByTheSignedExtreme) {
  std::vector<float> w(32, 0.0f);
  w[0] = -0.8f;  // the extreme is negative: d = -0.8 / -8 = 0.1
  w[1] = 0.4f;
  w[2] = 0.79f;  // 7.9 -> clamped to 7
  const Quantized neg = run("q4_0", w, 1);
  EXPECT_EQ(neg.codes[0], -8);
  EXPECT_EQ(neg.codes[1], 4);
  EXPECT_EQ(neg.codes[2], 7);
  EXPECT_FLOAT_EQ(neg.scales[0], 0.0999755859375f);  // fp16(0.1)
  w[0] = 0.8f;   // positive extreme: d = -0.1, so 0.8 -> -8 and -0.4 -> 4
  w[1] = -0.4f;
  w[2] = 0.0f;
  const Quantized pos = run("q4_0", w, 1);
  EXPECT_EQ(pos.codes[0], -8);
  EXPECT_EQ(pos.codes[1], 4);
  EXPECT_FLOAT_EQ(pos.dequantized[0], -8 * f16_to_f32(f32_to_f16(-0.1f)));
}

TEST(Quant, AllZeroGroupsStayZero) {
  const std::vector<float> zeros(32, 0.0f);
  for (const QuantMethod& m : quant_methods()) {
    auto q = quantize(m, {zeros, 1, 32});
    ASSERT_TRUE(q.ok()) << m.name;
    for (float v : q->dequantized) EXPECT_EQ(v, 0.0f) << m.name;
  }
}

TEST(Quant, ShapeErrors) {
  const std::vector<float> w(48, 1.0f);
  EXPECT_EQ(quantize(method("q8_0"), {w, 1, 48}).error().message,
            "q8_0 needs rows whose length is a multiple of 32 (got 48)");
  EXPECT_EQ(quantize(method("int8-sym-channel"), {w, 2, 48}).error().message,
            "the matrix has 48 values, not rows x cols = 96");
  EXPECT_EQ(quantize(method("int8-sym-channel"), {{}, 0, 0}).error().message, "the matrix is empty");
  const std::vector<float> x(10, 1.0f);
  EXPECT_EQ(evaluate(method("int8-sym-channel"), {w, 1, 48}, {x, 1, 10}, 1).error().message,
            "the inputs must be vectors of length 48");
}

TEST(Quant, Bytes) {
  const QuantBytes channel = quant_bytes(method("int8-sym-channel"), 512, 512);
  EXPECT_DOUBLE_EQ(channel.fp32_bytes, 1048576);
  EXPECT_DOUBLE_EQ(channel.payload_bytes, 262144);  // 4.00x without scales, as the walkthrough prints
  EXPECT_DOUBLE_EQ(channel.scale_bytes, 2048);
  EXPECT_DOUBLE_EQ(channel.total_bytes, 264192);
  const QuantBytes g128 = quant_bytes(method("int4-asym-g128"), 512, 512);
  EXPECT_DOUBLE_EQ(g128.payload_bytes, 131072);
  EXPECT_DOUBLE_EQ(g128.scale_bytes, 8192);       // 4 / 128 of a weight: the walkthrough's ~3%
  EXPECT_DOUBLE_EQ(g128.zero_point_bytes, 1024);  // 2048 groups x 4 bits
  const QuantBytes tensor = quant_bytes(method("int4-sym-tensor"), 3, 5);
  EXPECT_DOUBLE_EQ(tensor.payload_bytes, 9);  // rows of 5 x 4 bits pack to 3 bytes
  EXPECT_DOUBLE_EQ(tensor.scale_bytes, 4);
  EXPECT_DOUBLE_EQ(quant_bytes(method("q8_0"), 512, 512).total_bytes, 512.0 * 16 * 34);
  const QuantBytes q4 = quant_bytes(method("q4_0"), 512, 512);
  EXPECT_DOUBLE_EQ(q4.total_bytes, 512.0 * 16 * 18);
  EXPECT_DOUBLE_EQ(q4.scale_bytes, 512.0 * 16 * 2);
}

TEST(Quant, MetricsByHand) {
  // Codes 127, -76, 38, 0 with s = 1/127: errors 0, |-76/127 + 0.6|, |38/127 - 0.3|, 0.
  const std::vector<float> w{1.0f, -0.6f, 0.3f, 0.0f};
  const std::vector<float> x{1.0f, 0.0f, 0.0f, 0.0f};
  auto e = evaluate(method("int8-sym-tensor"), {w, 1, 4}, {x, 1, 4}, 1);
  ASSERT_TRUE(e.ok());
  const double e1 = std::fabs(-76.0f / 127 - -0.6f), e2 = std::fabs(38.0f / 127 - 0.3f);
  EXPECT_NEAR(e->mean_abs_error, (e1 + e2) / 4, 1e-9);
  EXPECT_NEAR(e->max_abs_error, std::max(e1, e2), 1e-9);
  EXPECT_NEAR(e->rmse, std::sqrt((e1 * e1 + e2 * e2) / 4), 1e-9);
  EXPECT_NEAR(e->cosine, 1.0, 1e-12);  // one output: the same sign, cosine 1
  // Two outputs: W.x = (1, 0.04) against Ŵ.x = (1, 5/127).
  const std::vector<float> w2{1.0f, 0.04f};
  auto e2rows = evaluate(method("int8-sym-tensor"), {w2, 2, 1}, {std::vector<float>{1.0f}, 1, 1}, 1);
  const double a = 5.0f / 127;
  EXPECT_NEAR(e2rows->cosine, (1 + 0.04 * a) / std::sqrt((1 + 0.04 * 0.04) * (1 + a * a)), 1e-7);
}

TEST(Quant, ResultsDoNotDependOnThreads) {
  SyntheticSpec s;
  s.rows = 97;
  s.cols = 64;
  const std::vector<float> w = synthetic_matrix(s);
  const std::vector<float> x = random_normal(3 * 64, 7);
  for (std::string_view name : {"int8-asym-tensor", "int4-sym-g32", "q4_0"}) {
    auto one = evaluate(method(name), {w, 97, 64}, {x, 3, 64}, 1);
    auto many = evaluate(method(name), {w, 97, 64}, {x, 3, 64}, 5);
    EXPECT_EQ(one->mean_abs_error, many->mean_abs_error) << name;
    EXPECT_EQ(one->max_abs_error, many->max_abs_error) << name;
    EXPECT_EQ(one->rmse, many->rmse) << name;
    EXPECT_EQ(one->cosine, many->cosine) << name;
  }
}

TEST(Quant, WalkthroughReference) {
  // The walkthrough's 512 x 512 matrix: per-channel error below per-tensor, per-channel INT8 cosine above
  // 0.999, and 4.00x FP32 -> INT8 for the weights alone.
  const SyntheticSpec s;
  const std::vector<float> w = synthetic_matrix(s);
  const std::vector<float> x = random_normal(8 * 512, 43);
  const MatrixView wv{w, 512, 512}, xv{x, 8, 512};
  for (std::string_view scheme : {"sym", "asym"}) {
    const std::string stem = "int8-" + std::string(scheme) + "-";
    auto tensor = evaluate(method(stem + "tensor"), wv, xv, 2);
    auto channel = evaluate(method(stem + "channel"), wv, xv, 2);
    EXPECT_LT(channel->mean_abs_error, tensor->mean_abs_error / 3) << scheme;
    EXPECT_GT(channel->cosine, 0.999) << scheme;
  }
  const QuantBytes b = quant_bytes(method("int8-asym-channel"), 512, 512);
  EXPECT_DOUBLE_EQ(b.fp32_bytes / b.payload_bytes, 4.0);
}

TEST(Synthetic, SeededAndFixed) {
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafULL);  // the published SplitMix64 sequence for seed 0
  EXPECT_EQ(rng.next(), 0x6e789e6aa1b965f4ULL);
  SyntheticSpec s;
  s.rows = 200;
  s.cols = 100;
  EXPECT_EQ(synthetic_matrix(s), synthetic_matrix(s));
  s.outlier_fraction = 0;
  const std::vector<float> plain = synthetic_matrix(s);
  s.outlier_fraction = 1;
  s.outlier_min = s.outlier_max = 3;
  const std::vector<float> scaled = synthetic_matrix(s);
  for (std::size_t i = 0; i < plain.size(); i += 37) EXPECT_FLOAT_EQ(scaled[i], 3 * plain[i]);
  double sum_sq = 0;
  for (float v : plain) sum_sq += static_cast<double>(v) * v;
  EXPECT_NEAR(std::sqrt(sum_sq / static_cast<double>(plain.size())), 0.02, 0.0005);
}

// --threads past the machine's hardware threads is capped, and the output says so (4096 on 2 cores drove the load
// average to 870).
TEST(QuantCli, ThreadsPastTheMachineAreCappedAndSaidSo) {
  const testing_cli::CliRun run = testing_cli::run_cli({"quant", "--threads", "4096", "--rows", "8", "--cols", "64"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const unsigned hardware = util::worker_count();
  if (hardware >= 4096) GTEST_SKIP() << "a machine of 4096 hardware threads";
  EXPECT_NE(run.out.find("--threads 4096: this machine runs " + std::to_string(hardware) + " hardware threads; " +
                         std::to_string(hardware) + " are used"),
            std::string::npos) << run.out;
}

// Memory the process may not have (ulimit -v) is an error that says so, not "internal error: std::bad_alloc". In a
// child under RLIMIT_AS; not under AddressSanitizer, whose shadow memory needs the address space.
TEST(QuantCli, OutOfMemoryIsAnErrorThatSaysSo) {
#ifdef EDGEPLAN_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
#else
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const rlimit as{400ull << 20, 400ull << 20};  // 400 MiB; the matrix alone is 1 GiB of FP32
    if (::setrlimit(RLIMIT_AS, &as) != 0) ::_exit(9);
    const testing_cli::CliRun run = testing_cli::run_cli({"quant", "--rows", "16384", "--cols", "16384", "--threads", "1"});
    if (::write(pipe_fds[1], run.err.data(), run.err.size()) < 0) ::_exit(8);
    ::_exit(run.exit_code);
  }
  ::close(pipe_fds[1]);
  std::string err;
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) err.append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_EQ(err, "edgeplan: error: out of memory: the command needs more than this process may allocate (ulimit -v?)\n");
#endif
}

}  // namespace
}  // namespace edgeplan
