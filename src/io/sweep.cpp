#include "edgeplan/io/sweep.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "edgeplan/util/parallel.hpp"
#include "edgeplan/io/text.hpp"
#include "edgeplan/util/text.hpp"

namespace edgeplan::io {
Result<SweepAxis> parse_sweep(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return Error{fmt::format("--sweep {}: expected KEY=V1,V2,... or KEY=START:STOP:STEP, "
                             "for example device.bandwidth_gbps=50:200:25", clipped(text))};
  }
  SweepAxis axis{std::string(text.substr(0, eq)), {}};
  const std::string_view spec = text.substr(eq + 1);
  if (spec.find(':') != std::string_view::npos && spec.find(',') == std::string_view::npos &&
      spec.find('"') == std::string_view::npos) {
    const auto c1 = spec.find(':'), c2 = spec.find(':', c1 + 1);
    const std::optional<double> first = util::parse_number(spec.substr(0, c1));
    const std::optional<double> last = c2 == std::string_view::npos ? std::nullopt
                                                                    : util::parse_number(spec.substr(c1 + 1, c2 - c1 - 1));
    const std::optional<double> by = c2 == std::string_view::npos ? std::nullopt : util::parse_number(spec.substr(c2 + 1));
    if (!first || !last || !by) {
      return Error{fmt::format("--sweep {}: a range is START:STOP:STEP with three numbers", clipped(text))};
    }
    const double start = *first, stop = *last, step = *by;
    if (step <= 0) return Error{fmt::format("--sweep {}: STEP must be greater than 0", clipped(text))};
    if (stop < start) return Error{fmt::format("--sweep {}: STOP must not be less than START", clipped(text))};
    const double count = std::floor((stop - start) / step + 1e-9) + 1;
    if (count > static_cast<double>(kMaxSweepCombinations)) {
      return Error{fmt::format("--sweep {}: {} values is more than the {} allowed", text, count, kMaxSweepCombinations)};
    }
    axis.values.resize(static_cast<std::size_t>(count));
    util::parallel_for(axis.values.size(), [&](unsigned, std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t i = begin; i < end; ++i) axis.values[i] = fmt::format("{}", start + static_cast<double>(i) * step);
    }, util::kParallelGrain);
    return axis;
  }
  std::string_view rest = spec;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    if (item.empty()) return Error{fmt::format("--sweep {}: empty value in the list", clipped(text))};
    axis.values.emplace_back(item);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return axis;
}

Result<std::uint64_t> sweep_size(const std::vector<SweepAxis>& axes) {
  std::uint64_t n = 1;
  for (const SweepAxis& a : axes) {
    n *= a.values.size();
    if (n > kMaxSweepCombinations) {
      return Error{fmt::format("--sweep: the sweeps make more than {} combinations", kMaxSweepCombinations)};
    }
  }
  return n;
}

std::vector<std::string> sweep_combination(const std::vector<SweepAxis>& axes, std::uint64_t index) {
  std::vector<std::string> out(axes.size());
  for (std::size_t i = axes.size(); i-- > 0;) {
    const std::uint64_t n = axes[i].values.size();
    out[i] = axes[i].values[index % n];
    index /= n;
  }
  return out;
}

}  // namespace edgeplan::io
