#include "edgeplan/io/runtime_class.hpp"

#include "edgeplan/io/profile_reader.hpp"
#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/io/toml_text.hpp"

namespace edgeplan::io {

namespace {

// A class profile read through its schema, named by its file.
template <class Class>
Result<Class> load_class(const ProfileText& text, const std::string& profile, const schema::Schema<Class>& s) {
  return read_profile<Class>(text, profile, {}, [&](Fields& f) {
    Class c;
    c.name = text.name;
    schema::read_schema(s, f, c);
    return c;
  });
}

}  // namespace

Result<RuntimeClass> load_runtime_class(const ProfileText& text) {
  return load_class(text, "runtime", schema::runtime_class_schema());
}

Result<StorageClass> load_storage_class(const ProfileText& text) {
  return load_class(text, "storage", schema::storage_class_schema());
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
