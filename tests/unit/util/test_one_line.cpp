#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "util/one_line.hpp"
#include "util/saturate.hpp"

namespace ctxkit {
namespace {

TEST(OneLine, PlainTextAndUtf8AreKept) {
  EXPECT_EQ(util::one_line("reading /p/x.jsonl: line 12"), "reading /p/x.jsonl: line 12");
  EXPECT_EQ(util::one_line("Zürich – 東京 🚀"), "Zürich – 東京 🚀");
}

TEST(OneLine, ControlCharactersAreEscaped) {
  EXPECT_EQ(util::one_line("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(util::one_line("\x1b[2J\x1b]0;pwned\x07"), "\\x1b[2J\\x1b]0;pwned\\x07");
  EXPECT_EQ(util::one_line(std::string("nul\0end", 7)), "nul\\x00end");
  EXPECT_EQ(util::one_line("del\x7f"), "del\\x7f");
}

TEST(OneLine, C1ControlsAndInvalidBytesAreEscaped) {
  EXPECT_EQ(util::one_line("csi\xc2\x9b"
                           "2J"),
            "csi\\u009b2J");
  EXPECT_EQ(util::one_line("raw\x9b"
                           "2J"),
            "raw\\x9b2J");
  EXPECT_EQ(util::one_line("cut\xe2\x82"), "cut\\xe2\\x82");
  EXPECT_EQ(util::one_line("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a UTF-16 surrogate
}

TEST(OneLine, LongTextIsCutAtACharacterBoundary) {
  EXPECT_EQ(util::one_line(std::string(10, 'x'), 4), "xxxx…");
  EXPECT_EQ(util::one_line("ab\xc3\xa9", 3), "ab…");  // é does not fit whole
  EXPECT_EQ(util::one_line("a\nb", 2), "a…");         // neither does "\n"
  EXPECT_EQ(util::one_line(std::string(5000, 'y')).size(),
            util::kOneLineMax + std::string("…").size());
}

TEST(Saturate, AddAndMultiplyHoldAtTheLimits) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(util::sat_add(kMax, 1), kMax);
  EXPECT_EQ(util::sat_add(kMax - 1, 1), kMax);
  EXPECT_EQ(util::sat_add(std::numeric_limits<int64_t>::min(), -1),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(util::sat_add(2, 3), 5);
  EXPECT_EQ(util::sat_mul(kMax / 2, 3), kMax);
  EXPECT_EQ(util::sat_mul(kMax / 2, -3), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(util::sat_mul(7, 6), 42);
}

TEST(Saturate, ConversionsHoldAtTheLimits) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(util::sat_from_double(1e300), kMax);
  EXPECT_EQ(util::sat_from_double(9223372036854775807.0), kMax);  // rounds to 2^63
  EXPECT_EQ(util::sat_from_double(-1e300), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(util::sat_from_double(std::numeric_limits<double>::quiet_NaN()), 0);
  EXPECT_EQ(util::sat_from_double(1234.9), 1234);
  EXPECT_EQ(util::sat_from_unsigned(18446744073709551615ull), kMax);
  EXPECT_EQ(util::sat_from_unsigned(5), 5);
}

}  // namespace
}  // namespace ctxkit
