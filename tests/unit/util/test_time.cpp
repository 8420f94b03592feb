#include <gtest/gtest.h>

#include "util/time.hpp"

namespace ctxkit {
namespace {

TEST(Time, ParsesClientTimestamps) {
  auto ms = util::parse_iso8601_ms("2026-11-21T12:55:28.725Z");
  ASSERT_TRUE(ms);
  EXPECT_EQ(util::format_iso8601_ms(*ms), "2026-11-21T12:55:28.725Z");
  EXPECT_EQ(*util::parse_iso8601_ms("1970-01-01T00:00:01Z"), 1000);
  EXPECT_FALSE(util::parse_iso8601_ms("yesterday"));
  EXPECT_FALSE(util::parse_iso8601_ms("2026-13-01T00:00:00Z"));
  EXPECT_EQ(util::format_compact_utc(1000), "19700101T000001Z");
}

}  // namespace
}  // namespace ctxkit
