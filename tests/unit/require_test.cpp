#include "edgeplan/io/require.hpp"

#include <gtest/gtest.h>

#include "edgeplan/util/names.hpp"
#include "edgeplan/io/json.hpp"

namespace edgeplan::io {
namespace {

Node doc(const char* text) { return from_json(Json::parse(text)); }

Node results() {
  return doc(R"({"fits": true, "max_context": 19431, "budget_gib": 2.37,
                         "formats": [{"format": "Q4_K_M", "tok_per_s": 11.15}, {"format": "F16", "tok_per_s": 3.61}]})");
}

std::vector<std::string> check(const std::string& text) {
  return *check_requirements(results(), {*parse_requirement(text)});
}

TEST(Require, Parses) {
  auto r = parse_requirement("max_context >= 8192");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->field, "max_context");
  EXPECT_EQ(r->op, ">=");
  EXPECT_EQ(r->bound, Node(8192.0));
  EXPECT_EQ(parse_requirement("fits").error().message,
            "--require 'fits': expected 'FIELD OP VALUE' with OP one of < <= > >= == !=, for example 'fits == true'");
}

// A bound takes a token count as --context does: 8k is 8,192, 1M 1,048,576 (it was refused: "cannot compare").
TEST(Require, ABoundTakesTokenSuffixes) {
  EXPECT_EQ(parse_requirement("max_context >= 8k")->bound, Node(8192.0));
  EXPECT_EQ(parse_requirement("max_context < 1M")->bound, Node(1048576.0));
  EXPECT_TRUE(check("max_context >= 16k").empty());
  EXPECT_EQ(check("max_context >= 32k"),
            std::vector<std::string>{"requirement failed: max_context >= 32k (got max_context = 19431)"});
  EXPECT_EQ(parse_requirement("device == 8kb")->bound, Node(std::string("8kb")));  // text stays text
}

TEST(Require, Evaluates) {
  EXPECT_TRUE(check("fits == true").empty());
  EXPECT_TRUE(check("max_context >= 8192").empty());
  EXPECT_TRUE(check("formats[Q4_K_M].tok_per_s > 10").empty());
  EXPECT_TRUE(check("formats[1].tok_per_s < 4").empty());
  EXPECT_EQ(check("max_context > 20000"), std::vector<std::string>{"requirement failed: max_context > 20000 (got max_context = 19431)"});
  EXPECT_EQ(check("fits != true"), std::vector<std::string>{"requirement failed: fits != true (got fits = true)"});
}

TEST(Require, UnknownFieldSuggests) {
  auto r = check_requirements(results(), {*parse_requirement("max_contxt >= 1")});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "--require: no field 'max_contxt' in the results; did you mean max_context?");
  auto s = check_requirements(results(), {*parse_requirement("fits < 3")});
  EXPECT_EQ(s.error().message, "--require 'fits < 3': cannot compare fits (true) with <");
}

// A one-row table's fields are addressable by their own names; in a table of several rows, a row is named.
TEST(Require, OneRowTableFieldsDirectly) {
  const Node one = doc(R"({"formats": [{"format": "Q4_K_M", "tok_per_s": 11.15}]})");
  EXPECT_TRUE(check_requirements(one, {*parse_requirement("tok_per_s >= 10")})->empty());
  EXPECT_EQ(*check_requirements(one, {*parse_requirement("tok_per_s >= 12")}),
            std::vector<std::string>{"requirement failed: tok_per_s >= 12 (got tok_per_s = 11.15)"});
  EXPECT_TRUE(check_requirements(one, {*parse_requirement("formats[Q4_K_M].tok_per_s >= 10")})->empty());
  EXPECT_EQ(check_requirements(results(), {*parse_requirement("tok_per_s >= 10")}).error().message,
            "--require: no field 'tok_per_s' in the results: 'tok_per_s' is a field of the 2 rows of formats; pick one, "
            "as in 'formats[Q4_K_M].tok_per_s'");
  const Node two = doc(R"({"a": [{"id": "x", "v": 1}], "b": [{"id": "y", "v": 2}]})");
  EXPECT_EQ(check_requirements(two, {*parse_requirement("v >= 1")}).error().message,
            "--require: 'v' is a field of the one-row tables a and b: name the table, as in 'a[0].v'");
}

// The error lists the fields that exist, the tables' ones included (it listed none when results held only tables).
TEST(Require, UnknownFieldListsTheFields) {
  const Node one = doc(R"({"formats": [{"format": "Q4_K_M", "tok_per_s": 11.15}]})");
  EXPECT_EQ(check_requirements(one, {*parse_requirement("zzzzzzzz >= 10")}).error().message,
            "--require: no field 'zzzzzzzz' in the results (its fields: formats[Q4_K_M].format, "
            "formats[Q4_K_M].tok_per_s, format, tok_per_s)");
}

TEST(Suggest, NearestWithinDistance) {
  const std::vector<std::string> c{"decode", "kv", "profiles"};
  EXPECT_EQ(util::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(util::nearest("decod", c), "decode");
  EXPECT_EQ(util::nearest("zzzzzz", c), std::nullopt);
  EXPECT_EQ(util::did_you_mean("profile", c), "; did you mean profiles?");
  const std::vector<std::string> keys{"bandwidth_gbps", "utilization"};
  EXPECT_EQ(util::nearest("bandwith", keys), "bandwidth_gbps");  // misspelt and without its unit
  EXPECT_EQ(util::nearest("band", keys), "bandwidth_gbps");
}

}  // namespace
}  // namespace edgeplan::io
