#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "util/json_depth.hpp"

namespace ctxkit::util {
namespace {

bool wanted(std::string_view name) {
  return name == "a" || name == "b" || name == "odd\\\"name";
}

using Members = std::vector<std::pair<std::string_view, std::string_view>>;

TEST(JsonTopLevelMembers, GivesTheWantedMembersTextsInOrder) {
  const std::string text = R"( {"x": {"a": 1, "b": [2]}, "a" : {"k": "v,}]\"{"} ,
    "skip": "\\", "b":[1, {"c": 2}], "z": null } )";
  const auto m = json_top_level_members(text, wanted, 64);
  ASSERT_TRUE(m);
  EXPECT_EQ(*m, (Members{{"a", R"({"k": "v,}]\"{"})"}, {"b", R"([1, {"c": 2}])"}}));
  // Each value parses as what a whole parse of the document finds there.
  const auto whole = nlohmann::json::parse(text);
  for (const auto& [name, value] : *m)
    EXPECT_EQ(nlohmann::json::parse(value), whole[std::string(name)]) << name;
}

TEST(JsonTopLevelMembers, ScalarsAndTheLastMember) {
  EXPECT_EQ(*json_top_level_members(R"({"a":true,"b":12})", wanted, 8),
            (Members{{"a", "true"}, {"b", "12"}}));
  EXPECT_EQ(*json_top_level_members("{}", wanted, 8), Members{});
  // A name written with an escape is compared as written.
  EXPECT_EQ(*json_top_level_members(R"({"odd\"name": 1, "a\u0062": 2})", wanted, 8),
            (Members{{"odd\\\"name", "1"}}));
}

TEST(JsonTopLevelMembers, NotAnObjectCutShortOrTooDeepIsNothing) {
  EXPECT_FALSE(json_top_level_members("[1]", wanted, 8));
  EXPECT_FALSE(json_top_level_members("", wanted, 8));
  EXPECT_FALSE(json_top_level_members(R"({"a": 1)", wanted, 8));
  EXPECT_FALSE(json_top_level_members(R"({"a": "open)", wanted, 8));
  EXPECT_FALSE(json_top_level_members(R"({"a": [1})", wanted, 8));
  const std::string deep = R"({"a": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_FALSE(json_top_level_members(deep, wanted, 64));
  EXPECT_TRUE(json_top_level_members(R"({"a": [[1]]})", wanted, 3));
  EXPECT_FALSE(json_top_level_members(R"({"a": [[[1]]]})", wanted, 3));
}

}  // namespace
}  // namespace ctxkit::util
