#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "trim/json_text.hpp"

namespace ctxkit::trim {
namespace {

// The escaped text of `s` as the client writes it.
std::string escaped(const std::string& s) {
  std::string d = nlohmann::json(s).dump();
  return d.substr(1, d.size() - 2);
}

// Code points of UTF-8 text, the reference.
size_t code_points(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

TEST(JsonText, LengthCountsDecodedCharacters) {
  EXPECT_EQ(json_string_length(""), 0u);
  EXPECT_EQ(json_string_length("abc"), 3u);
  EXPECT_EQ(json_string_length(R"(a\nb)"), 3u);
  EXPECT_EQ(json_string_length(R"(\\n)"), 2u);  // backslash, n
  EXPECT_EQ(json_string_length(R"(\u0041\u00e9)"), 2u);
  EXPECT_EQ(json_string_length(R"(\ud83d\ude00x)"), 2u);      // one emoji (surrogate pair) + x
  EXPECT_EQ(json_string_length("\xc3\xa9\xe2\x82\xac"), 2u);  // é €
}

TEST(JsonText, LengthMatchesReferenceOnRandomText) {
  std::mt19937 rng(7);
  const std::vector<std::string> pieces = {"a",   "Z", " ", "\n", "\t",   "\"",   "\\",
                                           "\\n", "é", "€", "😀",  "\x01", "x\\u", "tool_result"};
  for (int round = 0; round < 300; ++round) {
    std::string s;
    size_t n = rng() % 300;
    for (size_t i = 0; i < n; ++i) s += pieces[rng() % pieces.size()];
    std::string e = escaped(s);
    ASSERT_EQ(json_string_length(e), code_points(s)) << e;
  }
}

TEST(JsonText, PrefixNeverSplitsASequence) {
  std::string e = escaped("ab\ncé😀\"z");
  EXPECT_EQ(e.substr(0, json_string_prefix(e, 2)), "ab");
  EXPECT_EQ(e.substr(0, json_string_prefix(e, 3)), "ab\\n");
  EXPECT_EQ(e.substr(0, json_string_prefix(e, 5)), "ab\\nc\xc3\xa9");
  EXPECT_EQ(e.substr(0, json_string_prefix(e, 6)), "ab\\nc\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(e.substr(0, json_string_prefix(e, 7)), "ab\\nc\xc3\xa9\xf0\x9f\x98\x80\\\"");
  EXPECT_EQ(json_string_prefix(e, 100), e.size());
  std::string pair = R"(\ud83d\ude00b)";
  EXPECT_EQ(json_string_prefix(pair, 1), 12u);
}

TEST(JsonText, EscapeRoundTrips) {
  std::string s = "line 1\n\"quoted\" \\ tab\t é";
  EXPECT_EQ(nlohmann::json::parse("\"" + json_escape(s) + "\"").get<std::string>(), s);
}

}  // namespace
}  // namespace ctxkit::trim
