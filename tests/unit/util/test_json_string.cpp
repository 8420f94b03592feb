#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "util/json_string.hpp"

namespace ctxkit {
namespace {

// What the library writes for `s` (replacing bad UTF-8), the output append_json_string must equal.
std::string library(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

TEST(JsonString, EqualsTheLibraryForEscapesControlsAndUnicode) {
  const std::string cases[] = {
      "",
      "plain",
      "a \"quoted\" word and a back\\slash",
      "lines\nand\ttabs\r\nform\ffeed\bbackspace",
      std::string("nul \0 byte", 10),
      "\x01\x02\x1f\x7f controls and DEL",
      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 beyond ASCII",
      "{\n  \"status\": \"running\",\n  \"step\": \"tasks\"\n}",
      std::string(37, 'x') + "\"" + std::string(1000, 'y') + "\n",  // runs across 8-byte blocks
      std::string(3000, '"'),                                       // more than one slice
  };
  for (const auto& s : cases) {
    std::string out = "prefix:";
    ASSERT_TRUE(util::append_json_string(out, s)) << s;
    EXPECT_EQ(out, "prefix:" + library(s)) << s;
  }
}

TEST(JsonString, RefusesIllFormedUtf8AndAppendsNothing) {
  for (const std::string s : {"a\xff", "\xc3", "\xed\xa0\x80", "\xc0\xaf", "ok \"x\"\n\x80"}) {
    std::string out = "kept";
    EXPECT_FALSE(util::append_json_string(out, s));
    EXPECT_EQ(out, "kept");
  }
}

TEST(JsonString, EqualsTheLibraryOnRandomText) {
  std::mt19937 rng(42);
  // Mostly printable ASCII with escapes, some multi-byte characters, sometimes a stray byte.
  const std::string pieces[] = {"a",
                                "Z",
                                " ",
                                "\"",
                                "\\",
                                "\n",
                                "\t",
                                "\x01",
                                "\x1f",
                                "\x7f",
                                "\xc3\xa9",
                                "\xe2\x82\xac",
                                "\xf0\x9f\x98\x80",
                                "0123456789"};
  for (int round = 0; round < 2000; ++round) {
    std::string s;
    const auto len = rng() % 80;
    for (unsigned i = 0; i < len; ++i) s += pieces[rng() % std::size(pieces)];
    const bool stray = rng() % 8 == 0;
    if (stray) s.insert(rng() % (s.size() + 1), 1, static_cast<char>(0x80 + rng() % 0x80));
    std::string out;
    if (util::append_json_string(out, s))
      EXPECT_EQ(out, library(s));
    else
      EXPECT_TRUE(stray) << "refused well-formed text";
  }
}

}  // namespace
}  // namespace ctxkit
