// JSON text in and out through the one compiled copy of the parser and the serializer
// (util/json_io.hpp): the same results, errors and exceptions as the library's own calls.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/json_io.hpp"

namespace ctxkit::util {
namespace {

TEST(JsonIo, ParsesWhatTheLibraryParses) {
  const std::string text = R"({"b": [1, 2.5, "x"], "a": {"k": null}, "t": true})";
  EXPECT_EQ(parse_json(text), nlohmann::json::parse(text));
  EXPECT_EQ(parse_json_or_throw(text), nlohmann::json::parse(text));
  // The ordered value keeps the members in the text's order.
  const auto ordered = parse_ordered_json(text);
  ASSERT_TRUE(ordered.is_object());
  EXPECT_EQ(ordered.begin().key(), "b");
  EXPECT_EQ(parse_ordered_json_or_throw(text), ordered);
}

TEST(JsonIo, TextThatIsNotJsonIsDiscardedOrThrown) {
  for (const std::string& bad : std::vector<std::string>{"", "{", "[1,]", "{\"a\": 1} trailing",
                                                         std::string("\"a\0b\"", 5)}) {
    EXPECT_TRUE(parse_json(bad).is_discarded()) << bad;
    EXPECT_TRUE(parse_ordered_json(bad).is_discarded()) << bad;
    EXPECT_THROW(parse_json_or_throw(bad), nlohmann::json::parse_error) << bad;
    EXPECT_THROW(parse_ordered_json_or_throw(bad), nlohmann::json::parse_error) << bad;
  }
}

TEST(JsonIo, ParsesAViewThatIsNotTheWholeBuffer) {
  const std::string buffer = R"([1, 2]{"not": "this"})";
  EXPECT_EQ(parse_json(std::string_view(buffer).substr(0, 6)), nlohmann::json::array({1, 2}));
}

TEST(JsonIo, DumpsAsTheLibraryDumps) {
  const auto v = nlohmann::json::parse(R"({"a": [1, "é", null], "b": {"c": 1.5}})");
  EXPECT_EQ(dump_json(v), v.dump());
  EXPECT_EQ(dump_json(v, 2), v.dump(2));
  const auto o = nlohmann::ordered_json::parse(R"({"z": 1, "a": "x"})");
  EXPECT_EQ(dump_json(o), R"({"z":1,"a":"x"})");
  EXPECT_EQ(dump_json(o, 2), o.dump(2));
}

TEST(JsonIo, BadUtf8FailsOrIsReplaced) {
  const nlohmann::json v = std::string(
      "a\xff"
      "b");
  EXPECT_THROW(dump_json(v), nlohmann::json::type_error);
  EXPECT_EQ(dump_json(v, -1, BadUtf8::replace),
            "\"a\xef\xbf\xbd"
            "b\"");
  const nlohmann::ordered_json o = {{"k", std::string("\xc3")}};
  EXPECT_THROW(dump_json(o), nlohmann::json::type_error);
  EXPECT_EQ(dump_json(o, -1, BadUtf8::replace), "{\"k\":\"\xef\xbf\xbd\"}");
}

TEST(JsonIo, MemberIsFoundOrNull) {
  const auto v = nlohmann::json::parse(R"({"a": 1, "n": null})");
  ASSERT_NE(json_member(v, "a"), nullptr);
  EXPECT_EQ(*json_member(v, "a"), 1);
  ASSERT_NE(json_member(v, "n"), nullptr);
  EXPECT_TRUE(json_member(v, "n")->is_null());
  EXPECT_EQ(json_member(v, "b"), nullptr);
  EXPECT_EQ(json_member(nlohmann::json::array({1}), "a"), nullptr);
  EXPECT_EQ(json_member(nlohmann::json("a"), "a"), nullptr);
}

}  // namespace
}  // namespace ctxkit::util
