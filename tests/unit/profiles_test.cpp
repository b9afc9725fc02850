// Profile loading from strings (the test seam): validation messages word for word.
#include "edgeplan/io/profiles.hpp"
#include "edgeplan/io/profile_reader.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace edgeplan::io {
namespace {

const char* kDevice = R"(memory_gib = 8.0
reserved_gib = 0.8
bandwidth_gbps = 68.0
utilization = 0.85
per_token_overhead_ms = 0.0
)";

ProfileText text(const std::string& body) { return ProfileText{"t", "t.toml", "test", body}; }

std::string device_error(const std::string& body, const std::vector<std::string>& sets = {}) {
  auto overrides = parse_overrides(sets, {"device", "model"});
  if (!overrides) return overrides.error().message;
  auto d = load_device(text(body), *overrides);
  return d ? "" : d.error().message;
}

TEST(Profiles, LoadsDevice) {
  auto d = load_device(text(kDevice), {});
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_DOUBLE_EQ(d->memory_bytes, 8 * 1073741824.0);
  EXPECT_DOUBLE_EQ(d->bandwidth_bytes_per_s, 68e9);
  EXPECT_DOUBLE_EQ(d->utilization, 0.85);
  EXPECT_EQ(d->name, "t");
}

TEST(Profiles, ValidationMessages) {
  EXPECT_EQ(device_error(std::string(kDevice) + "bandwith = 3\n"),
            "t.toml:6:12: unknown key device.bandwith; did you mean device.bandwidth_gbps?");
  EXPECT_EQ(device_error("memory_gib = 8.0\n"), "t.toml:1:1: missing required key device.reserved_gib");
  EXPECT_EQ(device_error(kDevice, {"device.utilization=0"}),
            "t.toml (--set device.utilization=0): device.utilization must be in (0, 1] (got 0)");
  EXPECT_EQ(device_error(kDevice, {"device.bandwidth_gbps=\"x\""}),
            "t.toml (--set device.bandwidth_gbps=\"x\"): device.bandwidth_gbps must be a number, not a string");
  EXPECT_EQ(device_error(kDevice, {"device.reserved_gib=8"}),
            "t.toml (--set device.reserved_gib=8): device.reserved_gib (8 GiB) must be less than device.memory_gib (8 GiB)");
  EXPECT_EQ(device_error(kDevice, {"device.per_token_overhead_ms=-1"}),
            "t.toml (--set device.per_token_overhead_ms=-1): device.per_token_overhead_ms must be 0 or more (got -1)");
  EXPECT_EQ(device_error(kDevice, {"device.bandwidth_gbps=inf"}),
            "t.toml (--set device.bandwidth_gbps=inf): device.bandwidth_gbps must be a finite number (got inf)");
  EXPECT_EQ(device_error("memory_gib = [\n"),
            "t.toml:1:16: invalid TOML: Error while parsing array: encountered end-of-file");
}

// [provenance]: a fitted profile names what it was fitted to; the method decides `calibrated`.
TEST(Profiles, Provenance) {
  auto fitted = load_device(text(std::string(kDevice) + "[provenance]\nmethod = \"fitted\"\nruntime = \"llama.cpp Metal\"\n"
                                 "measurements = 6\nresidual_percent = 0.8\n"), {});
  ASSERT_TRUE(fitted.ok()) << fitted.error().message;
  EXPECT_TRUE(calibrated(fitted->provenance));
  EXPECT_EQ(fitted->provenance->measurements, 6u);
  auto sheet = load_device(text(std::string(kDevice) + "[provenance]\nmethod = \"datasheet\"\n"), {});
  ASSERT_TRUE(sheet.ok()) << sheet.error().message;
  EXPECT_FALSE(calibrated(sheet->provenance));
  EXPECT_FALSE(calibrated(load_device(text(kDevice), {})->provenance));
  EXPECT_EQ(device_error(std::string(kDevice) + "[provenance]\nmethod = \"fitted\"\n"),
            "t.toml:6:1: device.provenance with method \"fitted\" needs runtime and measurements");
}

TEST(Profiles, Overrides) {
  auto d = load_device(text(kDevice), *parse_overrides({"device.bandwidth_gbps=120"}, {"device"}));
  ASSERT_TRUE(d.ok());
  EXPECT_DOUBLE_EQ(d->bandwidth_bytes_per_s, 120e9);
  EXPECT_EQ(parse_overrides({"bandwidth_gbps=1"}, {"device", "model"}).error().message,
            "--set bandwidth_gbps=1: the key must start with one of device., model.");
  EXPECT_EQ(parse_overrides({"device.x"}, {"device"}).error().message,
            "--set device.x: expected KEY=VALUE, for example device.bandwidth_gbps=120");
  EXPECT_EQ(parse_overrides({"device.=3"}, {"device"}).error().message, "--set device.=3: expected a key after 'device.'");
}

// A text read before is not read again (a sweep loads the same profiles per command line): what is kept is
// keyed by the text and the profile's own overrides, so each reading gets its own values, and errors stay errors.
TEST(Profiles, ReadingAgainGivesTheSameResult) {
  const std::vector<Override> faster = *parse_overrides({"device.bandwidth_gbps=120"}, {"device", "model"});
  const std::vector<Override> other = *parse_overrides({"model.layers=3"}, {"device", "model"});
  for (int again = 0; again < 2; ++again) {
    EXPECT_DOUBLE_EQ(load_device(text(kDevice), faster)->bandwidth_bytes_per_s, 120e9);
    EXPECT_DOUBLE_EQ(load_device(text(kDevice), {})->bandwidth_bytes_per_s, 68e9);
    EXPECT_DOUBLE_EQ(load_device(text(kDevice), other)->bandwidth_bytes_per_s, 68e9);
    EXPECT_EQ(load_device(ProfileText{"u", "u.toml", "test", kDevice}, {})->name, "u");
    EXPECT_EQ(device_error(std::string(kDevice) + "bandwith = 3\n"),
              "t.toml:6:12: unknown key device.bandwith; did you mean device.bandwidth_gbps?");
  }
}

TEST(Profiles, OverrideNumberReadsTomlNumbersOnly) {
  EXPECT_EQ(override_number("120"), 120.0);
  EXPECT_EQ(override_number("-2.5e3"), -2500.0);
  EXPECT_EQ(override_number("1_000"), 1000.0);  // TOML syntax the fast path leaves to the TOML parser
  EXPECT_EQ(override_number("0x10"), 16.0);
  EXPECT_EQ(override_number("+7"), 7.0);
  EXPECT_TRUE(std::isinf(*override_number("inf")));
  EXPECT_TRUE(std::isnan(*override_number("nan")));
  for (const char* huge : {"1e400", "-1e400", "1e-400"}) {  // past the double range: as the TOML parser reads it
    toml::table t;
    apply_override(t, "v", huge, "--set v");
    const toml::node* n = t.get("v");
    EXPECT_EQ(override_number(huge).has_value(), n->is_number()) << huge;
    if (n->is_floating_point()) {
      EXPECT_EQ(*override_number(huge), n->as_floating_point()->get()) << huge;
    }
  }
  for (const char* not_a_number : {"abc", "true", "\"12\"", "[1]", "01", "1.", ".5", "1e", "--1", ""}) {
    EXPECT_FALSE(override_number(not_a_number).has_value()) << not_a_number;
  }
  EXPECT_TRUE(number_acceptable(1, Range::unit_interval));
  EXPECT_FALSE(number_acceptable(0, Range::unit_interval));
  EXPECT_FALSE(number_acceptable(2e15, Range::positive));
  EXPECT_FALSE(number_acceptable(std::nan(""), Range::any));
}

TEST(Profiles, LoadsModelWithFormats) {
  auto m = load_model(text("params = 8e9\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\nhead_dim = 128\n"
                           "ffn = 11008\n[formats.Q4_K_M]\nbits_per_weight = 5.184\n"),
                      {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_DOUBLE_EQ(*m->formats.at("Q4_K_M").bits_per_weight, 5.184);
  EXPECT_FALSE(m->vocab.has_value());
}

TEST(Profiles, BuiltinsResolveAndSuggest) {
  const SearchPath none;
  auto p = find_profile("devices", "phone8g", none);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->display, "builtin:devices/phone8g.toml");
  EXPECT_EQ(find_profile("devices", "phone8", none).error().message,
            "unknown device 'phone8'; did you mean phone8g? (`edgeplan profiles` lists them)");
  EXPECT_EQ(find_profile("models", "missing/x.toml", none).error().message,
            "cannot read model profile 'missing/x.toml': no such file");
}

TEST(Profiles, EveryBuiltinProfileLoads) {
  const SearchPath none;
  for (const ProfileText& p : list_profiles("devices", none)) {
    auto d = load_device(p, {});
    EXPECT_TRUE(d.ok()) << p.display << ": " << d.error().message;
  }
  for (const ProfileText& p : list_profiles("models", none)) {
    auto m = load_model(p, {});
    EXPECT_TRUE(m.ok()) << p.display << ": " << m.error().message;
  }
}

}  // namespace
}  // namespace edgeplan::io
