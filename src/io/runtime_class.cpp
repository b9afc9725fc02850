#include "edgeplan/io/runtime_class.hpp"

#include "edgeplan/io/profile_reader.hpp"
#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/io/toml_text.hpp"

namespace edgeplan::io {

Result<RuntimeClass> load_runtime_class(const ProfileText& text) {
  return read_profile<RuntimeClass>(text, "runtime", {}, [&](Fields& f) {
    RuntimeClass c;
    c.name = text.name;
    schema::read_schema(schema::runtime_class_schema(), f, c);
    return c;
  });
}

Result<StorageClass> load_storage_class(const ProfileText& text) {
  return read_profile<StorageClass>(text, "storage", {}, [&](Fields& f) {
    StorageClass c;
    c.name = text.name;
    schema::read_schema(schema::storage_class_schema(), f, c);
    return c;
  });
}

std::string runtime_class_text(const RuntimeClass& c, std::span<const std::string> comments,
                               std::string_view description) {
  TomlText t;
  for (const std::string& line : comments) t.comment(line);
  t.set("description", description);
  const auto& schema = schema::runtime_class_schema();
  for (const auto& section : schema.sections) {
    if (!section.present || section.present(c)) schema::write_rows(section, c, t, {});
  }
  return t.text();
}

}  // namespace edgeplan::io
