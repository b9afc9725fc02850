// The profile schemas (io/schema/kinds.hpp): a value applied to a loaded struct through a row (apply_value, and
// parse_fast + Row::set as sweeps do) lands exactly where loading the profile with that --set puts it, with the
// loader's error word for word; the JSON echo and the import writer read the same rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "edgeplan/io/embedded.hpp"
#include "edgeplan/io/inputs.hpp"
#include "edgeplan/io/json.hpp"
#include "edgeplan/io/model_file.hpp"
#include "edgeplan/io/profiles.hpp"
#include "edgeplan/io/route.hpp"
#include "edgeplan/io/schema/kinds.hpp"

namespace edgeplan::io::schema {
namespace {

std::vector<std::string> candidates(Type type, const std::vector<std::string>& choices) {
  switch (type) {
    case Type::number: return {"0.7", "1", "3", "0x1", "1e-1", "5_0e-2", "0.30000000000000004", "-1", "0", "1e400", "\"x\""};
    case Type::count: return {"1", "2", "4", "16", "64", "0", "3.5", "0x10", "\"x\""};
    case Type::boolean: return {"true", "false", "1"};
    case Type::string: return {"\"x\"", "\"a\\\"b\"", "2"};
    case Type::choice: {
      std::vector<std::string> out{"\"nope\"", "3"};
      for (const std::string& c : choices) out.push_back("\"" + c + "\"");
      return out;
    }
    case Type::strings: return {"[\"elementwise\"]", "[\"matmul\", \"norm\"]", "[]", "[\"matmull\"]", "[\"norm\", \"norm\"]", "\"x\""};
  }
  return {};
}

// Every key's value in the profile's unit, and the JSON echo: what "equal" means for two loaded structs.
template <class Spec>
std::string state(const Schema<Spec>& schema, const Spec& spec) {
  Node j = Node::object();
  echo(schema, spec, j);
  for (const std::string& key : schema_keys(schema)) {
    if (auto v = held(schema, key, spec)) j["held"][key] = std::visit([](const auto& x) { return Node(x); }, *v);
  }
  return json_text(to_json(j));
}

template <class Spec, class Load>
void applying_equals_loading(const Schema<Spec>& schema, const std::string& dir, Load load) {
  int applied = 0, fast = 0;
  for (const EmbeddedFile& f : embedded_profiles()) {
    if (!std::string(f.path).starts_with(dir + "/")) continue;
    const ProfileText text{std::string(f.path), "builtin:" + std::string(f.path), "builtin", std::string(f.text)};
    const Result<Spec> base = load(text, {});
    ASSERT_TRUE(base.ok()) << base.error().message;
    for (const Section<Spec>& section : schema.sections) {
      // The entries of a table of named entries ([units.gpu]) each hold the rows; a plain section is one.
      const std::vector<std::string> entries =
          section.entries && (!section.present || section.present(*base)) ? section.entries->names(*base)
                                                                          : std::vector<std::string>{""};
      for (const std::string& entry : entries) for (const Row<Spec>& row : section.rows) {
        std::string key = section.name.empty() ? "" : std::string(section.name) + ".";
        if (!entry.empty()) key += entry + ".";
        key += row.key;
        if (!held(schema, key, *base)) continue;  // an absent section, or a key kept nowhere (description)
        if (!row.settable) {
          Spec spec = *base;
          EXPECT_FALSE(*apply_value(schema, spec, key, "0.5", "--set", FieldSource{text.display, {}})) << key;
          continue;
        }
        for (const std::string& value : candidates(row.type, row.choices ? row.choices() : std::vector<std::string>{})) {
          const std::string original = "--set " + std::string(schema.profile) + "." + key + "=" + value;
          const Result<Spec> loaded = load(text, {{std::string(schema.profile), key, value, original}});
          Spec spec = *base;
          const Result<bool> ap = apply_value(schema, spec, key, value, original, FieldSource{text.display, {}});
          const std::string where = text.display + " " + original;
          if (!ap.ok()) {
            ASSERT_FALSE(loaded.ok()) << where << ": " << ap.error().message;
            EXPECT_EQ(ap.error().message, loaded.error().message) << where;
            continue;
          }
          if (!*ap) {  // not applied: a check across keys the loader reports at another key's line
            EXPECT_FALSE(loaded.ok()) << where;
            continue;
          }
          ASSERT_TRUE(loaded.ok()) << where << ": " << loaded.error().message;
          EXPECT_EQ(state(schema, spec), state(schema, *loaded)) << where;
          ++applied;
          if (row.type != Type::number && row.type != Type::count) continue;
          const std::optional<Value> v = parse_fast(row, value);
          ASSERT_TRUE(v.has_value()) << where;
          Spec set = *base;
          store(row, set, entry, *v);
          ASSERT_TRUE(consistent(schema, set)) << where;
          EXPECT_EQ(state(schema, set), state(schema, *loaded)) << where;
          ++fast;
        }
      }
    }
  }
  EXPECT_GT(applied, 0);
  EXPECT_GT(fast, 0);
}

TEST(Schema, ApplyingToADeviceEqualsLoadingIt) {
  applying_equals_loading(device_schema(), "devices", [](const ProfileText& t, const std::vector<Override>& o) {
    return load_device(t, o);
  });
}

TEST(Schema, ApplyingToAModelEqualsLoadingIt) {
  applying_equals_loading(model_schema(), "models", [](const ProfileText& t, const std::vector<Override>& o) {
    return load_model(t, o);
  });
}

TEST(Schema, ApplyingToACloudEqualsLoadingIt) {
  applying_equals_loading(cloud_schema(), "clouds", [](const ProfileText& t, const std::vector<Override>& o) {
    return load_cloud(t, o);
  });
}

// A sweep value the loader would refuse is refused by parse_fast too.
TEST(Schema, ParseFastRefusesWhatTheLoaderRefuses) {
  const Row<DeviceSpec>& memory = *find_key(device_schema(), "memory_gib")->row;
  EXPECT_FALSE(parse_fast(memory, "0"));
  EXPECT_FALSE(parse_fast(memory, "\"8\""));
  EXPECT_EQ(std::get<double>(*parse_fast(memory, "8")), 8.0);
  const Row<DeviceSpec>& pad = *find_key(device_schema(), "kv_cache.pad_tokens")->row;
  EXPECT_FALSE(parse_fast(pad, "2.0"));
  EXPECT_FALSE(parse_fast(pad, "0"));
  EXPECT_EQ(std::get<std::int64_t>(*parse_fast(pad, "0x10")), 16);
  EXPECT_FALSE(find_key(device_schema(), "units.npu"));  // an entry's name, not a key
}

// The entries of a table of named entries are rows like any other: found, set on a loaded struct, swept, held.
TEST(Schema, EntriesOfNamedTablesAreRows) {
  const std::optional<Key<DeviceSpec>> tflops = find_key(device_schema(), "units.gpu.fp16_tflops");
  ASSERT_TRUE(tflops);
  EXPECT_EQ(tflops->entry, "gpu");
  EXPECT_EQ(tflops->row->key, "fp16_tflops");
  EXPECT_EQ(std::get<double>(*parse_fast(*tflops->row, "20")), 20.0);
  const auto file = std::find_if(embedded_profiles().begin(), embedded_profiles().end(),
                                 [](const EmbeddedFile& f) { return f.path == "devices/phone8g.toml"; });
  ASSERT_NE(file, embedded_profiles().end());
  DeviceSpec d = *load_device(ProfileText{"phone8g", "phone8g.toml", "test", std::string(file->text)}, {});
  ASSERT_TRUE(*apply_value(device_schema(), d, "units.npu.fp16_tflops", "30", "--set", FieldSource{"phone8g.toml", {}}));
  EXPECT_EQ(*d.units.at(UnitKind::npu).fp16_flops_per_s, 30e12);
  // phone8g's npu states bandwidth_efficiency: bandwidth_gbps is not held, and setting it is the loader's error.
  EXPECT_FALSE(held(device_schema(), "units.npu.bandwidth_gbps", d));
  EXPECT_EQ(std::get<double>(*held(device_schema(), "units.npu.bandwidth_efficiency", d)), 1.0);
  EXPECT_FALSE(*apply_value(device_schema(), d, "units.npu.bandwidth_gbps", "3", "--set", FieldSource{"phone8g.toml", {}}));
  EXPECT_FALSE(held(device_schema(), "units.tpu.int8_tops", d));  // no such entry
  const Result<bool> twice = apply_value(device_schema(), d, "units.npu.ops", "[\"norm\", \"norm\"]", "--set x",
                                         FieldSource{"phone8g.toml", {}});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("device.units.npu.ops lists \"norm\" twice"), std::string::npos)
      << twice.error().message;
  const std::optional<Key<ModelSpec>> bits = find_key(model_schema(), "formats.Q4_K_M.bits_per_weight");
  ASSERT_TRUE(bits);
  EXPECT_EQ(bits->entry, "Q4_K_M");
}

// The import writer writes the model's schema rows: every built-in model written and read back is the same
// model (the JSON echo and every key's value), a name holding a quote included.
TEST(Schema, ImportWriterRoundTripsEveryBuiltInModel) {
  for (const EmbeddedFile& f : embedded_profiles()) {
    if (!std::string(f.path).starts_with("models/")) continue;
    ModelSpec m = *load_model(ProfileText{"m\"q", std::string(f.path), "builtin", std::string(f.text)}, {});
    const std::string written = model_profile_toml(m, "a \"quoted\" source");
    const Result<ModelSpec> back = load_model(ProfileText{"m\"q", "written.toml", "test", written}, {});
    ASSERT_TRUE(back.ok()) << f.path << ": " << back.error().message << "\n" << written;
    if (m.vocab) m.params.reset();  // not written when the tensors count the weights
    EXPECT_EQ(state(model_schema(), *back), state(model_schema(), m)) << f.path;
  }
}

}  // namespace
}  // namespace edgeplan::io::schema
