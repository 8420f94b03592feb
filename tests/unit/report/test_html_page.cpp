#include <gtest/gtest.h>

#include "report/html_page.hpp"

namespace ctxkit::report {
namespace {

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

Timeline sample(size_t points, size_t reminders) {
  Timeline t;
  t.title = "Context of session S";
  SessionPart s;
  s.session_id = "S";
  s.model = "claude-opus-4-8";
  s.window = 200'000;
  s.denominator = 167'000;
  s.basis = "usable";
  s.point_tokens = 167'000;
  s.point_words = "auto-compact window 200k";
  s.start_ms = 1'700'000'000'000;
  s.end_ms = s.start_ms + static_cast<int64_t>(points) * 1000;
  for (size_t i = 0; i < points; ++i)
    s.points.push_back({s.start_ms + static_cast<int64_t>(i) * 1000,
                        static_cast<int64_t>(10'000 + (i * 37) % 150'000), i + 2});
  t.sessions.push_back(s);
  for (size_t i = 0; i < reminders; ++i) {
    Event e;
    e.kind = "reminder";
    e.session = "S";
    e.line = 10 + i;
    e.at_ms = s.start_ms + static_cast<int64_t>(i) * 5000;
    e.label = "R1 61%";
    e.detail = "warn reminder at 61%";
    t.events.push_back(e);
  }
  Event c;
  c.kind = "compaction";
  c.session = "S";
  c.line = 77;
  c.at_ms = s.start_ms + 9000;
  c.label = "compact 160k→9.0k";
  c.detail = "compaction";
  t.events.push_back(c);
  sort_events(t.events);
  return t;
}

TEST(ReportPage, OneMarkAndLabelPerEventAndATableRowEach) {
  auto t = sample(300, 40);
  const std::string page = render_timeline_page(t, {});
  EXPECT_EQ(count(page, "<g class=\"ev ev-"), 41u);
  EXPECT_EQ(count(page, "<g class=\"ev ev-reminder\""), 40u);
  EXPECT_EQ(count(page, "class=\"ev-label\""), 41u);
  EXPECT_EQ(count(page, "<tr class=\"event\""), 41u);
  EXPECT_NE(page.find(">compact 160k→9.0k</text>"), std::string::npos);
  EXPECT_NE(page.find(">S:77</td>"), std::string::npos);
  EXPECT_NE(page.find("class=\"point-line\""), std::string::npos);
  EXPECT_NE(page.find("compacts at 167k"), std::string::npos);
}

TEST(ReportPage, SelfContainedWithADarkThemeAndPrintRules) {
  auto t = sample(50, 3);
  const std::string page = render_timeline_page(t, {});
  EXPECT_TRUE(page.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(page.find("@media (prefers-color-scheme: dark)"), std::string::npos);
  EXPECT_NE(page.find("@media print"), std::string::npos);
  for (const char* outside :
       {"http:", "https:", "//", "<script", "<link", "@import", "url(", "src="})
    if (std::string(outside) == "//") {
      // "//" as the start of an address (after a quote or a parenthesis), not inside CSS text.
      for (auto at = page.find("//"); at != std::string::npos; at = page.find("//", at + 1))
        EXPECT_TRUE(at == 0 ||
                    std::string_view("\"'(").find(page[at - 1]) == std::string_view::npos)
            << page.substr(at == 0 ? 0 : at - 1, 40);
    } else
      EXPECT_EQ(page.find(outside), std::string::npos) << outside;
}

TEST(ReportPage, TextFromTheSessionIsEscaped) {
  auto t = sample(10, 0);
  t.title = "<script>alert(1)</script>";
  t.events.front().detail = "a \"quoted\" <b>detail</b> & more";
  t.events.front().label = "<img src=x>";
  const std::string page = render_timeline_page(t, {});
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("a &quot;quoted&quot; &lt;b&gt;detail&lt;/b&gt; &amp; more"),
            std::string::npos);
  EXPECT_EQ(html_escape(std::string("a\x01\x1b[31mb\tc\n", 11)), "a[31mb\tc\n");
}

TEST(ReportPage, TheCurveIsDownsampledButEveryEventStays) {
  auto t = sample(200'000, 40);
  PageOptions o;
  o.max_points = 2000;
  const std::string page = render_timeline_page(t, o);
  const auto curve = page.find("<polyline class=\"curve\"");
  ASSERT_NE(curve, std::string::npos);
  const auto tag_end = page.find('>', curve);
  const auto attr = page.find("points=\"", curve);
  ASSERT_LT(attr, tag_end);
  const auto from = attr + 8;
  const std::string pts = page.substr(from, page.find('"', from) - from);
  EXPECT_LE(count(pts, ","), 2000u);
  EXPECT_GE(count(pts, ","), 1000u);
  EXPECT_EQ(count(page, "<g class=\"ev ev-"), 41u);
  EXPECT_LT(page.size(), 200'000u);
}

TEST(ReportPage, SaysWhatIsMissing) {
  Timeline t;
  t.title = "Context of session E";
  SessionPart s;
  s.session_id = "E";
  s.missing.push_back("the transcript /x/E.jsonl is empty");
  t.sessions.push_back(s);
  t.notes.push_back("no ctxkit state database at /s/state.db");
  const std::string page = render_timeline_page(t, {});
  EXPECT_NE(page.find("<p class=\"note\">the transcript /x/E.jsonl is empty</p>"),
            std::string::npos);
  EXPECT_NE(page.find("<p class=\"note\">no ctxkit state database at /s/state.db</p>"),
            std::string::npos);
  EXPECT_EQ(page.find("class=\"curve\""), std::string::npos);
  EXPECT_NE(page.find("<h2>Events (0)</h2>"), std::string::npos);
}

TEST(ReportPage, ALineOfWorkMarksEachHandoverAndListsItsSessions) {
  Timeline t = sample(100, 2);
  t.lineage = true;
  SessionPart second = t.sessions.front();
  second.session_id = "T";
  second.number = 2;
  second.start_ms = t.sessions.front().end_ms + 3'600'000;
  second.end_ms = second.start_ms + 50'000;
  for (auto& p : second.points) p.at_ms += 3'600'000 + 100'000;
  t.sessions.front().number = 1;
  t.sessions.push_back(second);
  SessionPart lost;
  lost.session_id = "L";
  lost.number = 3;
  lost.missing.push_back("session #3 L: transcript not found");
  t.sessions.push_back(lost);
  const std::string page = render_timeline_page(t, {});
  EXPECT_EQ(count(page, "<line class=\"handover\""), 2u);
  EXPECT_EQ(count(page, "<polyline class=\"curve\""), 2u);
  EXPECT_NE(page.find("<table class=\"sessions\">"), std::string::npos);
  EXPECT_NE(page.find("session #3 L: transcript not found"), std::string::npos);
}

TEST(ReportPage, RunPageChartsTheModesTotalsAndToleratesAnOldRun) {
  nlohmann::ordered_json a = {{"run_id", "20261125T100000Z-a"},
                              {"mode", "fresh-per-iteration"},
                              {"status", "done"},
                              {"tasks",
                               {{{"id", "t1"},
                                 {"context_mode", "fresh-per-iteration"},
                                 {"iterations", 2},
                                 {"usage", {{"total", 1200}}},
                                 {"cost_usd", 0.5}}}},
                              {"totals",
                               {{"iterations", 2},
                                {"usage", {{"input", 200}, {"output", 1000}, {"total", 1200}}},
                                {"cost_usd", 0.5}}}};
  nlohmann::ordered_json b = a;
  b["run_id"] = "20261125T110000Z-b";
  b["mode"] = "hybrid";
  nlohmann::ordered_json old = {{"run_id", "old"}, {"mode", 3}};
  const std::string page = render_run_page({a, b, old}, {});
  EXPECT_EQ(count(page, "<g class=\"bar\""), 3u);
  EXPECT_EQ(count(page, "<tr class=\"task\""), 2u);
  EXPECT_NE(page.find("$0.5000"), std::string::npos);
  EXPECT_NE(page.find("run old: no totals"), std::string::npos);
  EXPECT_EQ(page.find("http"), std::string::npos);
  const std::string one = render_run_page({a}, {});
  EXPECT_EQ(count(one, "<g class=\"bar\""), 0u);
}

TEST(ReportPage, RunPageDrawsEveryCallAndTheDecisionsBetweenThem) {
  nlohmann::ordered_json r = {
      {"run_id", "R"},
      {"mode", "auto"},
      {"status", "done"},
      {"tasks", nlohmann::ordered_json::array()},
      {"totals", {{"usage", {{"total", 10}}}}},
      {"calls",
       {{{"n", 1},
         {"task_id", "t1"},
         {"fresh", true},
         {"context_tokens", 150000},
         {"cost_usd", 0.25},
         {"usage", {{"input", 5}, {"total", 9}}}},
        {{"n", 2}, {"task_id", "t1"}, {"fresh", false}, {"context_tokens", 20000}},
        {{"n", 3}, {"task_id", "<i>t2</i>"}, {"fresh", true}, {"context_tokens", "x"}}}},
      {"decisions",
       {{{"event", "auto_decision"},
         {"before_call", 2},
         {"decision", "compact"},
         {"why", "compact_at"},
         {"percent", 79},
         {"threshold", 75},
         {"task_id", "t1"}},
        {{"event", "context_reset"}, {"before_call", 3}, {"why", "<mode>"}},
        {{"event", "compact_skipped"}, {"before_call", 99}, {"reason", "late"}}}}};
  const std::string page = render_run_page({r}, {});
  EXPECT_EQ(count(page, "<tr class=\"call\""), 3u);
  EXPECT_EQ(count(page, "<g class=\"call fresh\""), 2u);
  EXPECT_EQ(count(page, "<g class=\"decision\""), 2u);  // the one after the last call: listed only
  EXPECT_EQ(count(page, "<li data-event="), 3u);
  EXPECT_NE(page.find("auto: compact (compact_at, 79% \u2265 75%), task t1"), std::string::npos);
  EXPECT_NE(page.find("fresh session (&lt;mode&gt;)"), std::string::npos);
  EXPECT_EQ(page.find("<i>t2"), std::string::npos);
  EXPECT_NE(page.find("&lt;i&gt;t2&lt;/i&gt;"), std::string::npos);
  EXPECT_NE(page.find("$0.2500"), std::string::npos);
  // The mark of the decision before call 2 is drawn with call 2.
  const auto call2 = page.find("<g class=\"call\" data-n=\"2\"");
  ASSERT_NE(call2, std::string::npos);
  EXPECT_GT(page.find("data-event=\"auto_decision\""), call2);
  nlohmann::ordered_json old = r;
  old.erase("calls");
  EXPECT_NE(render_run_page({old}, {}).find("No per-call figures"), std::string::npos);
}

}  // namespace
}  // namespace ctxkit::report
