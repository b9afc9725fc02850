#include "edgeplan/io/toml_parse.hpp"

#include <gtest/gtest.h>
#include "test_files.hpp"

namespace edgeplan::io {
namespace {

using testing_files::repeat;

TEST(TomlParse, ShallowTextsPass) {
  EXPECT_FALSE(toml_too_deep("a = 1.5\n[units.npu]\nops = [\"matmul\", \"add\"]\nx = {a.b = [1, [2]]}\n"));
  // Dots in strings and comments do not count, nor do those of earlier lines or list items.
  EXPECT_FALSE(toml_too_deep("s = \"" + repeat(".", 100) + "\" # " + repeat(".", 100) + "\n", 4));
  EXPECT_FALSE(toml_too_deep(repeat("a.b = 1\n", 100), 4));
  EXPECT_FALSE(toml_too_deep("x = [" + repeat("1.5, ", 100) + "]\n", 4));
  EXPECT_FALSE(toml_too_deep("s = '''\n" + repeat("[", 100) + "'''\n", 4));
}

TEST(TomlParse, FindsWhereTheNestingGoesTooDeep) {
  const auto p = toml_too_deep("a = 1\nb = [[[[[1]]]]]\n", 4);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->line, 2u);
  EXPECT_EQ(p->column, 9u);
  EXPECT_FALSE(toml_too_deep("a.b.c.d.e = 1\n[a.b.c.d]\nx = {a = {b = {c = {d = 1}}}}\n", 4));
  EXPECT_TRUE(toml_too_deep("a.b.c.d.e.f = 1\n", 4));
  EXPECT_TRUE(toml_too_deep("[a.b.c.d.e]\n", 4));
  EXPECT_TRUE(toml_too_deep("x = {a = {b = {c = {d = {e = 1}}}}}\n", 4));
}

TEST(TomlParse, RefusesDeepNestingBeforeParsing) {
  // 50000 nested inline tables in arrays (about 200 KB): a stack overflow inside toml++ without the check.
  const std::string text = "x = " + repeat("[{a=", 50000) + "1" + repeat("}]", 50000) + "\n";
  const auto t = parse_toml(text, "deep.toml");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message, "deep.toml:1:133: TOML nested deeper than 64 levels (tables, dotted keys, arrays and "
                               "inline tables each count one)");
}

TEST(TomlParse, InvalidTomlNamesTheSpot) {
  const auto t = parse_toml("a = \n", "bad.toml");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message.rfind("bad.toml:1:", 0), 0u) << t.error().message;
  ASSERT_TRUE(parse_toml("a.b = 1\n", "ok.toml"));
}

}  // namespace
}  // namespace edgeplan::io
