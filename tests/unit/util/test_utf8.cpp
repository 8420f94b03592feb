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

}  // namespace
}  // namespace ctxkit
