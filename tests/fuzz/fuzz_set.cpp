// Fuzz harness: --set values. Each line of the input is one `--set KEY=VALUE` argument (at most 16); they are
// parsed as the command line parses them and applied to built-in device, model and cloud profiles, and each
// value is also read as a sweep reads a number.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "edgeplan/io/profiles.hpp"
#include "edgeplan/io/route.hpp"
#include "edgeplan/io/profile_reader.hpp"

namespace {

using namespace edgeplan::io;

ProfileText builtin(const std::string& kind, const std::string& name) {
  auto found = find_profile(kind, name, SearchPath{});
  if (!found) __builtin_trap();  // the built-in profiles are part of the binary
  return *found;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty() && args.size() < 16) {
    const auto newline = rest.find('\n');
    args.emplace_back(rest.substr(0, newline));
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
  }
  for (const std::string& a : args) {
    const auto eq = a.find('=');
    if (eq != std::string::npos) (void)override_number(std::string_view(a).substr(eq + 1));
  }
  const auto overrides = parse_overrides(args, {"device", "model", "cloud"});  // as the command line takes them
  if (!overrides) return 0;
  static const ProfileText device = builtin("devices", "phone8g"), model = builtin("models", "ref-8b"),
                           moe = builtin("models", "deepseek-v2-lite"), cloud = builtin("clouds", "ref-public");
  (void)load_device(device, *overrides);
  (void)load_model(model, *overrides);
  (void)load_model(moe, *overrides);
  (void)load_cloud(cloud, *overrides);
  return 0;
}
