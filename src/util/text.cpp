#include "edgeplan/util/text.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <charconv>
#include <cmath>

namespace edgeplan::util {

std::optional<std::vector<std::string>> split_list(std::string_view text) {
  std::vector<std::string> out;
  while (true) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    item.remove_prefix(std::min(item.find_first_not_of(' '), item.size()));
    item.remove_suffix(item.size() - (item.find_last_not_of(' ') + 1));
    if (item.empty()) return std::nullopt;
    out.emplace_back(item);
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

std::optional<double> parse_number(std::string_view text) {
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> parse_tokens(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const char suffix = text.back();
  const std::uint64_t scale = suffix == 'k' || suffix == 'K' ? 1024 : suffix == 'M' ? 1024 * 1024 : 1;
  if (scale != 1) text.remove_suffix(1);
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || end != text.data() + text.size() || ec != std::errc() ||
      v > std::numeric_limits<std::uint64_t>::max() / scale) {
    return std::nullopt;
  }
  return v * scale;
}

std::optional<std::uint64_t> parse_bytes(std::string_view text) {
  struct Unit {
    std::string_view name;
    double scale;
  };
  static constexpr std::array<Unit, 9> kUnits{{{"KiB", 0x1p10},
                                               {"MiB", 0x1p20},
                                               {"GiB", 0x1p30},
                                               {"TiB", 0x1p40},
                                               {"kB", 1e3},
                                               {"MB", 1e6},
                                               {"GB", 1e9},
                                               {"TB", 1e12},
                                               {"B", 1}}};
  double scale = 1;
  for (const Unit& u : kUnits) {
    if (text.ends_with(u.name)) {
      scale = u.scale;
      text.remove_suffix(u.name.size());
      break;
    }
  }
  const std::optional<double> v = parse_number(text);
  if (!v || *v < 0 || *v * scale >= 0x1p63) return std::nullopt;
  return static_cast<std::uint64_t>(std::llround(*v * scale));
}

}  // namespace edgeplan::util
