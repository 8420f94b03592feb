#include <gtest/gtest.h>

#include "util/time.hpp"

namespace ctxkit {
namespace {

int64_t at(const char* text) {
  auto ms = util::parse_iso8601_ms(text);
  EXPECT_TRUE(ms) << text;
  return ms.value_or(-1);
}

TEST(Time, ParsesClientTimestamps) {
  EXPECT_EQ(util::format_iso8601_ms(at("2026-11-21T12:55:28.725Z")), "2026-11-21T12:55:28.725Z");
  EXPECT_EQ(at("1970-01-01T00:00:01Z"), 1000);
  EXPECT_EQ(util::format_compact_utc(1000), "19700101T000001Z");
}

TEST(Time, AcceptsEveryFormTheHelpPromises) {
  const int64_t noon = at("2026-11-20T12:00:00Z");
  EXPECT_EQ(at("2026-11-20T12:00"), noon);
  EXPECT_EQ(at("2026-11-20T12:00:00"), noon);
  EXPECT_EQ(at("2026-11-20 12:00"), noon);
  EXPECT_EQ(at("2026-11-20T12:00Z"), noon);
  EXPECT_EQ(at("2026-11-20"), noon - 12 * 3600 * 1000);
  EXPECT_EQ(at("2026-11-20T13:00+01:00"), noon);
  EXPECT_EQ(at("2026-11-20T06:30:00-05:30"), noon);
  EXPECT_EQ(at("2026-11-20T12:00:00.5Z"), noon + 500);
  EXPECT_EQ(at("2024-02-29"), at("2024-03-01") - 24 * 3600 * 1000);
}

TEST(Time, RejectsTrailingTextAndImpossibleTimes) {
  for (const char* bad : {"yesterday", "", "2026-11-20x", "2026-11-20T12:00:00Zjunk",
                          "2026-11-20T12:00 ", "2026-11-20T12", "2026-11-20T12:0", "2026-11-20T",
                          "2026-11-20T12:00:00.", "2026-11-20T12:00+1", "2026-13-01", "2026-02-30",
                          "2025-02-29", "2026-04-31", "2026-11-20T24:00", "2026-11-20T12:60",
                          "2026-11-20T12:00+24:00", "2026/11/20", "2026-11-2"}) {
    EXPECT_FALSE(util::parse_iso8601_ms(bad)) << '"' << bad << '"';
  }
}

}  // namespace
}  // namespace ctxkit
