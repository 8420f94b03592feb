#include <gtest/gtest.h>

#include <algorithm>

#include "report/timeline.hpp"

namespace ctxkit::report {
namespace {

std::vector<Point> ramp(size_t n) {
  std::vector<Point> v;
  for (size_t i = 0; i < n; ++i)
    v.push_back({static_cast<int64_t>(1000 + i), static_cast<int64_t>(i % 1000) * 100, i + 1});
  return v;
}

TEST(ReportTimeline, DownsampleKeepsFewPointsAsTheyAre) {
  auto v = ramp(50);
  auto d = downsample(v, 2000);
  ASSERT_EQ(d.size(), 50u);
  EXPECT_EQ(d[17].line, 18u);
}

TEST(ReportTimeline, DownsampleKeepsEndsPeaksAndDropsWithinTheBudget) {
  auto v = ramp(100'000);        // a saw: 100 rises of 1,000 points, each dropping to 0
  v[54'321].tokens = 5'000'000;  // one peak
  auto d = downsample(v, 2000);
  EXPECT_LE(d.size(), 2000u);
  EXPECT_GE(d.size(), 1000u);
  EXPECT_EQ(d.front().line, v.front().line);
  EXPECT_EQ(d.back().line, v.back().line);
  EXPECT_TRUE(std::any_of(d.begin(), d.end(), [](const Point& p) { return p.line == 54'322; }));
  // Every drop to 0 (a compaction's) is kept: 100 of them (the first point is one).
  EXPECT_EQ(std::count_if(d.begin(), d.end(), [](const Point& p) { return p.tokens == 0; }), 100);
  EXPECT_TRUE(std::is_sorted(d.begin(), d.end(),
                             [](const Point& a, const Point& b) { return a.line < b.line; }));
}

TEST(ReportTimeline, PercentIsFlooredAndZeroWithoutADenominator) {
  EXPECT_EQ(percent_of(99'999, 200'000), 49);
  EXPECT_EQ(percent_of(200'000, 200'000), 100);
  EXPECT_EQ(percent_of(5, 0), 0);
  EXPECT_EQ(percent_of(100'000'000, 1), 10'000'000'000);
}

TEST(ReportTimeline, CitesSessionAndLineOrTheSessionAlone) {
  Event e;
  e.session = "abc";
  e.line = 12;
  EXPECT_EQ(citation(e), "abc:12");
  e.line = 0;
  EXPECT_EQ(citation(e), "abc");
}

TEST(ReportTimeline, EventsSortByTimeKeepingTheOrderFoundForTies) {
  std::vector<Event> ev(3);
  ev[0].at_ms = 30;
  ev[0].label = "c";
  ev[1].at_ms = 10;
  ev[1].label = "a";
  ev[2].at_ms = 30;
  ev[2].label = "d";
  sort_events(ev);
  EXPECT_EQ(ev[0].label, "a");
  EXPECT_EQ(ev[1].label, "c");
  EXPECT_EQ(ev[2].label, "d");
}

TEST(ReportTimeline, JsonHoldsEveryEventAndTheDownsampledReadings) {
  Timeline t;
  t.title = "x";
  SessionPart s;
  s.session_id = "S";
  s.denominator = 1000;
  s.points = ramp(5000);
  t.sessions.push_back(s);
  for (int i = 0; i < 45; ++i) {
    Event e;
    e.kind = i % 2 ? "reminder" : "compaction";
    e.session = "S";
    e.line = static_cast<uint64_t>(i + 1);
    e.at_ms = 1000 + i;
    e.tokens_before = 10;
    t.events.push_back(e);
  }
  auto j = to_json(t, 400);
  ASSERT_EQ(j["events"].size(), 45u);
  EXPECT_EQ(j["events"][3]["cite"], "S:4");
  EXPECT_EQ(j["events"][0]["tokens_before"], 10);
  EXPECT_TRUE(j["events"][0]["tokens_after"].is_null());
  EXPECT_LE(j["sessions"][0]["points"].size(), 400u);
  EXPECT_EQ(j["sessions"][0]["readings"], 5000u);
  const auto& p = j["sessions"][0]["points"][1];
  EXPECT_EQ(p["percent"], percent_of(p["tokens"].get<int64_t>(), 1000));
}

}  // namespace
}  // namespace ctxkit::report
