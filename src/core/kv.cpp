#include "edgeplan/core/kv.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

namespace edgeplan {
namespace {

constexpr std::array kKvTypes{
    KvType{"f16", 1, 2, "llama.cpp"},    KvType{"q8_0", 32, 34, "llama.cpp"},
    KvType{"q4_0", 32, 18, "llama.cpp"}, KvType{"int8", 1, 1, "reference"},
    KvType{"int4", 2, 1, "reference"},
};

}  // namespace

std::span<const KvType> kv_types() { return kKvTypes; }

const KvType* find_kv_type(std::string_view name) {
  auto it = std::ranges::find_if(kKvTypes, [&](const KvType& t) {
    return std::ranges::equal(t.name, name, [](char x, char y) {
      return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    });
  });
  return it == kKvTypes.end() ? nullptr : &*it;
}

double kv_bytes_per_token(const ModelSpec& m, const KvType& t) {
  const double values = 2.0 * m.layers * m.kv_heads * m.head_dim;
  return values * t.bytes_per_element();
}

double kv_budget_bytes(double memory_bytes, double reserved_bytes, double weight_bytes) {
  return memory_bytes - reserved_bytes - weight_bytes;
}

std::uint64_t max_context(double budget_bytes, double kv_bytes_per_token) {
  if (budget_bytes <= 0) return 0;
  return static_cast<std::uint64_t>(std::floor(budget_bytes / kv_bytes_per_token));
}

double kv_recompute_token_steps(std::uint64_t tokens) {
  const double n = static_cast<double>(tokens);
  return n * (n + 1) / 2;
}

double kv_recompute_ratio(std::uint64_t tokens) {
  return kv_recompute_token_steps(tokens) / static_cast<double>(tokens);
}

}  // namespace edgeplan
