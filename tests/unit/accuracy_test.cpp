// Pins docs/accuracy.md: every row is recomputed from the shipped profiles, compared with the prediction the
// doc prints (to its two decimals) and with the measured figure. The llama-bench table on Apple M-series
// must stay within the targets: median absolute error under 5%, none over 15%.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "edgeplan/core/decode.hpp"
#include "edgeplan/core/plan.hpp"
#include "edgeplan/core/prefill.hpp"
#include "edgeplan/io/profiles.hpp"

namespace edgeplan {
namespace {

struct Row {
  const char* device;
  const char* model;
  const char* format;
  std::vector<io::Override> overrides;
  double measured_tg, predicted_tg;  // tok/s
  double measured_pp, predicted_pp;  // pp512 tok/s; 0 when not measured
};

const std::vector<Row>& rows() {
  static const std::vector<Row> r{
    {"apple-m1-8g", "llama-2-7b", "Q8_0", {}, 7.91, 7.91, 117.25, 117.62},
    {"apple-m1-8g", "llama-2-7b", "Q4_0", {}, 14.15, 14.14, 117.96, 117.62},
    {"apple-m1-pro-32g", "llama-2-7b", "F16", {}, 12.75, 12.78, 302.14, 301.99},
    {"apple-m1-pro-32g", "llama-2-7b", "Q8_0", {}, 22.34, 22.23, 270.37, 268.22},
    {"apple-m1-pro-32g", "llama-2-7b", "Q4_0", {}, 36.41, 36.46, 266.25, 268.22},
    {"apple-m1-max-64g", "llama-2-7b", "F16", {}, 23.03, 23.33, 599.53, 599.21},
    {"apple-m1-max-64g", "llama-2-7b", "Q8_0", {}, 40.20, 39.36, 537.37, 534.05},
    {"apple-m1-max-64g", "llama-2-7b", "Q4_0", {}, 61.19, 61.75, 530.06, 534.05},
    {"apple-m2-24g", "llama-2-7b", "F16", {}, 6.72, 6.70, 201.34, 201.37},
    {"apple-m2-24g", "llama-2-7b", "Q8_0", {}, 12.21, 12.27, 181.40, 180.46},
    {"apple-m2-24g", "llama-2-7b", "Q4_0", {}, 21.91, 21.87, 179.57, 180.46},
    {"apple-m2-pro-32g", "llama-2-7b", "F16", {}, 13.06, 13.04, 384.38, 384.17},
    {"apple-m2-pro-32g", "llama-2-7b", "Q8_0", {}, 23.01, 23.06, 344.50, 342.88},
    {"apple-m2-pro-32g", "llama-2-7b", "Q4_0", {}, 38.86, 38.82, 341.19, 342.88},
    {"apple-m2-max-64g", "llama-2-7b", "F16", {}, 24.65, 24.67, 755.67, 755.79},
    {"apple-m2-max-64g", "llama-2-7b", "Q8_0", {}, 41.83, 41.80, 677.91, 674.25},
    {"apple-m2-max-64g", "llama-2-7b", "Q4_0", {}, 65.95, 66.00, 671.31, 674.25},
    {"galaxy-s24-ultra", "llama-3.2-1b", "BF16", {}, 19.20, 18.23, 0, 0},
    {"galaxy-s24-ultra", "llama-3.2-1b", "Q4_0", {}, 50.20, 48.81, 0, 0},
    {"galaxy-s24-ultra", "llama-3.2-3b", "BF16", {}, 7.60, 7.44, 0, 0},
    {"galaxy-s24-ultra", "llama-3.2-3b", "Q4_0", {}, 19.70, 22.97, 0, 0},
    {"galaxy-s24-ultra", "llama-3.1-8b", "Q4_0", {}, 10.91, 10.78, 0, 0},
    {"jetson-orin-nano-8g", "llama-3.1-8b", "Q4_0", {}, 14.00, 14.00, 0, 0},
    {"jetson-orin-nano-8g", "llama-3.1-8b", "Q4_0", {{"device", "bandwidth_gbps", "102", "--set device.bandwidth_gbps=102"}}, 19.10, 21.00, 0, 0},
    {"raspberry-pi-5-8g", "llama-3.2-3b", "Q4_K_M", {}, 4.61, 4.59, 0, 0},
    {"raspberry-pi-5-8g", "llama-3.1-8b", "Q4_K_M", {}, 1.99, 2.00, 0, 0},
  };
  return r;
}

template <class T>
T need(Result<T> r) {
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return std::move(r).value();
}

TEST(Accuracy, EveryRowMatchesDocsAccuracyMd) {
  const io::SearchPath builtin;
  std::vector<double> apple_errors;
  for (const Row& row : rows()) {
    SCOPED_TRACE(std::string(row.device) + " " + row.model + " " + row.format);
    const DeviceSpec d = need(io::load_device(need(io::find_profile("devices", row.device, builtin)), row.overrides));
    const ModelSpec m = need(io::load_model(need(io::find_profile("models", row.model, builtin)), {}));
    const FileType& ft = *find_file_type(row.format);
    const double tg = decode(d, {need(weight_size(m, ft)).active_bytes, 0}).tok_per_s;
    EXPECT_NEAR(tg, row.predicted_tg, 0.0051);
    const double tg_error = std::abs(tg / row.measured_tg - 1);
    if (row.measured_pp > 0) {
      const double pp = prefill(*d.prefill, m, ft, 512).tok_per_s;
      EXPECT_NEAR(pp, row.predicted_pp, 0.0051);
      apple_errors.push_back(tg_error);
      apple_errors.push_back(std::abs(pp / row.measured_pp - 1));
    }
  }
  ASSERT_EQ(apple_errors.size(), 34u);
  std::ranges::sort(apple_errors);
  EXPECT_LT(apple_errors.back(), 0.15);
  EXPECT_LT((apple_errors[16] + apple_errors[17]) / 2, 0.05);
}

// The gpu utilization of the [units] prefill (plan.hpp) is the fit to the M1 and M2 pp512 rows above: the
// roofline of each chip's [units.gpu] alone against the measured time (bench/accuracy.py prints the same fit and
// its leave-one-chip-out error).
TEST(Accuracy, GpuUtilizationIsFittedToTheAppleRows) {
  const io::SearchPath builtin;
  std::vector<double> roofline_s, measured_s;
  for (const Row& row : rows()) {
    if (row.measured_pp == 0) continue;
    const DeviceSpec d = need(io::load_device(need(io::find_profile("devices", row.device, builtin)), row.overrides));
    const ModelSpec m = need(io::load_model(need(io::find_profile("models", row.model, builtin)), {}));
    roofline_s.push_back(need(unit_roofline_prefill(m, d, UnitKind::gpu, 512)).total_s);
    measured_s.push_back(512 / row.measured_pp);
  }
  ASSERT_EQ(roofline_s.size(), 17u);
  const UnitUtilization* gpu = unit_utilization(UnitKind::gpu);
  ASSERT_NE(gpu, nullptr);
  EXPECT_NEAR(fit_utilization(roofline_s, measured_s), gpu->utilization, 0.0005);
  EXPECT_EQ(gpu->runs, 17u);
  EXPECT_EQ(unit_utilization(UnitKind::npu), nullptr);
  EXPECT_EQ(unit_utilization(UnitKind::cpu), nullptr);
}

}  // namespace
}  // namespace edgeplan
