#include "edgeplan/io/toml_parse.hpp"

#include <gtest/gtest.h>
#include "test_files.hpp"

namespace edgeplan::io {
namespace {

using testing_files::repeat;

TEST(TomlParse, ShallowTextsPass) {
  EXPECT_FALSE(scan_toml("a = 1.5\n[units.npu]\nops = [\"matmul\", \"add\"]\nx = {a.b = [1, [2]]}\n").too_deep);
  // Dots in strings and comments do not count, nor do those of earlier lines or list items.
  EXPECT_FALSE(scan_toml("s = \"" + repeat(".", 100) + "\" # " + repeat(".", 100) + "\n", 4).too_deep);
  EXPECT_FALSE(scan_toml(repeat("a.b = 1\n", 100), 4).too_deep);
  EXPECT_FALSE(scan_toml("x = [" + repeat("1.5, ", 100) + "]\n", 4).too_deep);
  EXPECT_FALSE(scan_toml("s = '''\n" + repeat("[", 100) + "'''\n", 4).too_deep);
}

TEST(TomlParse, FindsWhereTheNestingGoesTooDeep) {
  const auto p = scan_toml("a = 1\nb = [[[[[1]]]]]\n", 4).too_deep;
  ASSERT_TRUE(p);
  EXPECT_EQ(p->line, 2u);
  EXPECT_EQ(p->column, 9u);
  EXPECT_FALSE(scan_toml("a.b.c.d.e = 1\n[a.b.c.d]\nx = {a = {b = {c = {d = 1}}}}\n", 4).too_deep);
  EXPECT_TRUE(scan_toml("a.b.c.d.e.f = 1\n", 4).too_deep);
  EXPECT_TRUE(scan_toml("[a.b.c.d.e]\n", 4).too_deep);
  EXPECT_TRUE(scan_toml("x = {a = {b = {c = {d = {e = 1}}}}}\n", 4).too_deep);
}

TEST(TomlParse, RefusesDeepNestingBeforeParsing) {
  // 50000 nested inline tables in arrays (about 200 KB): a stack overflow inside toml++ without the check.
  const std::string text = "x = " + repeat("[{a=", 50000) + "1" + repeat("}]", 50000) + "\n";
  const auto t = parse_toml(text, "deep.toml");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message, "deep.toml:1:133: TOML nested deeper than 64 levels (tables, dotted keys, arrays and "
                               "inline tables each count one)");
}

TEST(TomlParse, HandsTomlppTheTextLessItsPlainComments) {
  EXPECT_EQ(scan_toml("# head\na = 1  # one\n\n[t] # table\nb = 2\n").text, "\na = 1  \n\n[t] \nb = 2\n");
  // A # in a string is no comment, in every kind of string, after an escaped quote, and after a multi-line
  // string that ends in quotes of its own.
  const std::string strings = "s = \"x#y\" # c\nt = 'a#b'\nu = \"a\\\"#b\"\nv = \"\"\"a\"\"\"\"\nw = \"p#q\"\n"
                              "x = '''#\n#'''\n";
  EXPECT_EQ(scan_toml(strings).text,
            "s = \"x#y\" \nt = 'a#b'\nu = \"a\\\"#b\"\nv = \"\"\"a\"\"\"\"\nw = \"p#q\"\nx = '''#\n#'''\n");
  const auto t = parse_toml(strings, "strings.toml");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->at_path("v").value_or(std::string()), "a\"");
  EXPECT_EQ(t->at_path("w").value_or(std::string()), "p#q");
  EXPECT_EQ(t->at_path("x").value_or(std::string()), "#\n#");
  // Comments toml++ must judge stay: a control character, UTF-8, a carriage return before the line break.
  const std::string kept = "a = 1 # \x01\nb = 2 # caf\xc3\xa9\nc = 3 # crlf\r\n";
  EXPECT_EQ(scan_toml(kept).text, kept);
  const auto control = parse_toml(kept, "control.toml");
  ASSERT_FALSE(control);
  EXPECT_EQ(control.error().message.rfind("control.toml:1:", 0), 0u) << control.error().message;
}

TEST(TomlParse, InvalidTomlNamesTheSpot) {
  const auto t = parse_toml("a = \n", "bad.toml");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message.rfind("bad.toml:1:", 0), 0u) << t.error().message;
  ASSERT_TRUE(parse_toml("a.b = 1\n", "ok.toml"));
}

}  // namespace
}  // namespace edgeplan::io
