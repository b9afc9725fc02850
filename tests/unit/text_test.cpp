#include "edgeplan/io/text.hpp"

#include <gtest/gtest.h>

namespace edgeplan::io {
namespace {

TEST(Text, ValidUtf8) {
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xFF"));
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // a surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));          // cut short
}

TEST(Text, EscapesControlCharactersAndInvalidBytes) {
  EXPECT_EQ(escaped("blk.0.weight"), "blk.0.weight");
  EXPECT_EQ(escaped("a\nb\tc\rd\x1B[2J\x7F"), "a\\nb\\tc\\rd\\x1B[2J\\x7F");
  EXPECT_EQ(escaped("x\xFFy\xC3"), "x\\xFFy\\xC3");
  EXPECT_EQ(escaped("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(escaped("\xC2\x9B"), "\\xC2\\x9B");  // U+009B, the C1 control sequence introducer
}

TEST(Text, QuotesAndCutsShort) {
  EXPECT_EQ(quoted("general.name"), "'general.name'");
  EXPECT_EQ(quoted("a\nb"), "'a\\nb'");
  EXPECT_EQ(quoted(std::string(1 << 20, 'x'), 4), "'xxxx...' (1048576 bytes)");
  EXPECT_EQ(clipped("abcdef", 3), "abc... (6 bytes)");
  EXPECT_EQ(clipped("abc", 3), "abc");
}

}  // namespace
}  // namespace edgeplan::io
