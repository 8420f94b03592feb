#include <gtest/gtest.h>

#include "util/utf8.hpp"

namespace ctxkit {
namespace {

TEST(Utf8, Validation) {
  EXPECT_TRUE(util::is_valid_utf8("plain ascii"));
  EXPECT_TRUE(util::is_valid_utf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
  EXPECT_FALSE(util::is_valid_utf8("\xc3"));
  EXPECT_FALSE(util::is_valid_utf8("\xed\xa0\x80"));  // encoded surrogate
  EXPECT_FALSE(util::is_valid_utf8("\xc0\xaf"));      // overlong
}

TEST(Utf8, SanitizeReplacesBadBytesAndLoneSurrogateEscapes) {
  EXPECT_EQ(util::sanitize_json_text("a\xff"
                                     "b"),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(util::sanitize_json_text(R"("\ud800x")"), R"("\ufffdx")");
  EXPECT_EQ(util::sanitize_json_text(R"("\ud83d\ude00")"), R"("\ud83d\ude00")");
  EXPECT_EQ(util::sanitize_json_text(R"("\\ud800")"), R"("\\ud800")");
  EXPECT_EQ(util::sanitize_json_text(R"("\udc00")"), R"("\ufffd")");
}

// As JavaScript reads the bytes (Buffer.toString, TextDecoder): the client names folders so.
TEST(Utf8, Utf16UnitsAreWhatJavaScriptDecodes) {
  EXPECT_EQ(util::utf16_of("caf\xc3\xa9"), u"caf\u00e9");
  EXPECT_EQ(util::utf16_of("\xd0\x9f\xd1\x80"), u"\u041f\u0440");
  EXPECT_EQ(util::utf16_of("\xf0\x9f\x9a\x80"), std::u16string({0xD83D, 0xDE80}));
  EXPECT_EQ(util::utf16_of("\xff"), u"\uFFFD");
  EXPECT_EQ(util::utf16_of("\xe2\x82y"), u"\uFFFDy");                // a cut sequence: one
  EXPECT_EQ(util::utf16_of("\xed\xa0\x80"), u"\uFFFD\uFFFD\uFFFD");  // an encoded surrogate
  EXPECT_EQ(util::utf16_of("\xf0\x9f\x9a"), u"\uFFFD");
  EXPECT_EQ(util::utf16_of("a\xc3"), u"a\uFFFD");
  EXPECT_EQ(util::utf16_of("\xc0\xaf"), u"\uFFFD\uFFFD");  // overlong
}

}  // namespace
}  // namespace ctxkit
