#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "context/context_meter.hpp"
#include "context/reminder.hpp"
#include "report/session_scan.hpp"
#include "unit/report/transcript_builder.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::report {
namespace {
namespace fs = std::filesystem;

// The text of a JSON string literal without its quotes.
std::string json_text(const std::string& s) {
  std::string d = nlohmann::json(s).dump();
  return d.substr(1, d.size() - 2);
}

context::ContextFigure figure_at(int percent) {
  context::ContextFigure f;
  f.window = 200'000;
  f.usable = 167'000;
  f.denominator = 167'000;
  f.tokens = 167'000 * percent / 100;
  f.percent = percent;
  f.point.threshold = true;
  f.point.tokens = 167'000;
  return f;
}

TEST(ReportScan, RecognisesEachTierOfTheRemindersTexts) {
  core::ContextConfig config;
  for (bool subagent : {false, true}) {
    for (auto [tier, percent] :
         {std::pair{context::Tier::Warn, 61}, std::pair{context::Tier::Recommend, 77},
          std::pair{context::Tier::Urgent, 90}}) {
      auto r =
          parse_reminder_text(context::reminder_text(tier, figure_at(percent), config, subagent));
      ASSERT_TRUE(r) << percent;
      EXPECT_EQ(r->percent, percent);
      EXPECT_EQ(r->tier, static_cast<int>(tier)) << percent << (subagent ? " subagent" : "");
    }
  }
}

TEST(ReportScan, OtherTextsAreNoReminder) {
  EXPECT_FALSE(parse_reminder_text("Context at"));
  EXPECT_FALSE(parse_reminder_text("Context at x%"));
  EXPECT_FALSE(parse_reminder_text("Context at 40"));
  EXPECT_FALSE(parse_reminder_text("MARK-A-BOTHCTX"));
  auto r = parse_reminder_text("Context at 40% of something new");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->tier, 0);
}

TEST(ReportScan, ReadsEachResponseOnceAndSkipsSidechains) {
  test::TempDir tmp;
  test::TranscriptBuilder b;
  b.user(0).response(5, 20'000, 3).response(9, 5'000, 2, /*sidechain=*/true).response(12, 31'000);
  auto path = tmp.write("t.jsonl", b.text());
  auto s = scan_transcript(path, "S");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->points.size(), 2u);
  EXPECT_EQ(s->points[0].tokens, 20'000);
  EXPECT_EQ(s->points[0].line, 2u);
  EXPECT_EQ(s->points[0].at_ms, b.at_ms(5));
  EXPECT_EQ(s->points[1].tokens, 31'000);
  EXPECT_EQ(s->points[1].line, 7u);
  EXPECT_EQ(s->lines, 7u);
  EXPECT_EQ(s->model, "claude-opus-4-8");
  EXPECT_EQ(s->client_version, "2.1.332");
  EXPECT_EQ(s->start_ms, b.at_ms(5));
  EXPECT_EQ(s->end_ms, b.at_ms(12));
  EXPECT_TRUE(s->events.empty());
}

TEST(ReportScan, CompactionsAndRemindersAreEventsWithTheirLines) {
  test::TempDir tmp;
  test::TranscriptBuilder b;
  core::ContextConfig config;
  b.user(0)
      .response(10, 120'000)
      .hook_context(11, json_text(context::reminder_text(context::Tier::Recommend, figure_at(78),
                                                         config, false)))
      .hook_context(12, "MARK-A-BOTHCTX")
      .compaction(20, 160'000, 9'000)
      .response(30, 12'000);
  auto path = tmp.write("t.jsonl", b.text());
  auto s = scan_transcript(path, "S");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->events.size(), 2u);
  EXPECT_EQ(s->events[0].kind, "reminder");
  EXPECT_EQ(s->events[0].tier, 2);
  EXPECT_EQ(s->events[0].line, 3u);
  EXPECT_EQ(s->events[0].at_ms, b.at_ms(11));
  EXPECT_EQ(s->events[0].label, "R2 78%");
  EXPECT_EQ(s->events[1].kind, "compaction");
  EXPECT_EQ(s->events[1].line, 5u);
  EXPECT_EQ(*s->events[1].tokens_before, 160'000);
  EXPECT_EQ(*s->events[1].tokens_after, 9'000);
  EXPECT_EQ(s->events[1].label, "compact 160k→9.0k");
  // The estimate after the compaction is a reading of its own.
  ASSERT_EQ(s->points.size(), 3u);
  EXPECT_EQ(s->points[1].tokens, 9'000);
  EXPECT_EQ(s->points[1].line, 5u);
}

TEST(ReportScan, TheTrimThatWroteACopyIsAnEventOnItsFirstLine) {
  test::TempDir tmp;
  test::TranscriptBuilder b;
  std::string meta =
      R"({"parent_file":"/x/P.jsonl","parent_session_id":"P-1","trimmed_at":"2026-11-25T09:59:00.000Z","stats":{"tokens_saved":41000,"lines":10}})";
  meta.insert(meta.size() - 1, std::string(300, ' '));
  b.raw("{\"trim_metadata\":" + meta + R"(,"type":"queue-operation","operation":"enqueue"})")
      .user(0)
      .response(3, 50'000);
  auto path = tmp.write("t.jsonl", b.text());
  auto s = scan_transcript(path, "S");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->events.size(), 1u);
  const Event& e = s->events[0];
  EXPECT_EQ(e.kind, "trim");
  EXPECT_EQ(e.line, 1u);
  EXPECT_EQ(*e.tokens_freed, 41'000);
  EXPECT_EQ(e.label, "trim −41k");
  EXPECT_NE(e.detail.find("P-1"), std::string::npos);
  EXPECT_EQ(e.at_ms, *util::parse_iso8601_ms("2026-11-25T09:59:00Z"));
}

TEST(ReportScan, RecordedCompactionsAreFoundWithTheirFigures) {
  fs::path f = test::fixture_root() /
               "claude-code-2.1.332/claude-opus-4-8/d_compact/proactive/transcripts/"
               "f76d1dc8-43ed-4744-bb0c-f3fda90724c9.jsonl";
  auto s = scan_transcript(f, "f76d1dc8");
  ASSERT_TRUE(s) << s.error().message;
  std::vector<std::pair<uint64_t, int64_t>> got;
  for (const auto& e : s->events)
    if (e.kind == "compaction") got.push_back({e.line, *e.tokens_before});
  EXPECT_EQ(got, (std::vector<std::pair<uint64_t, int64_t>>{
                     {39, 120'055}, {70, 180'056}, {107, 182'043}}));
  // Each reading is newer than the one before, and the newest is the meter's own reading.
  ASSERT_FALSE(s->points.empty());
  EXPECT_TRUE(std::is_sorted(s->points.begin(), s->points.end(),
                             [](const Point& a, const Point& b) { return a.line < b.line; }));
  auto tail = context::scan_transcript_tail(f, "");
  ASSERT_TRUE(tail && tail->reading);
  EXPECT_EQ(s->points.back().tokens, tail->reading->tokens);
}

TEST(ReportScan, EmptyAndFigurelessTranscriptsSayWhatIsMissing) {
  test::TempDir tmp;
  core::ContextConfig config;
  auto empty = tmp.write("e.jsonl", "");
  auto s = scan_transcript(empty, "E");
  ASSERT_TRUE(s);
  auto part = make_session_part(*s, empty, config, {});
  ASSERT_EQ(part.missing.size(), 1u);
  EXPECT_NE(part.missing[0].find("is empty"), std::string::npos);

  test::TranscriptBuilder b;
  b.user(0).user(3).raw("not json at all");
  auto none = tmp.write("n.jsonl", b.text());
  s = scan_transcript(none, "N");
  ASSERT_TRUE(s);
  part = make_session_part(*s, none, config, {});
  ASSERT_EQ(part.missing.size(), 1u);
  EXPECT_NE(part.missing[0].find("no usage figure"), std::string::npos);

  EXPECT_FALSE(scan_transcript(tmp / "absent.jsonl", "A"));
}

TEST(ReportScan, PercentagesAreTheMetersFigures) {
  test::TempDir tmp;
  test::TranscriptBuilder b;
  b.user(0).response(1, 40'000).response(2, 150'000).response(3, 180'000);
  auto path = tmp.write("t.jsonl", b.text());
  core::ContextConfig config;
  auto s = scan_transcript(path, "S");
  ASSERT_TRUE(s);
  auto part = make_session_part(*s, path, config, {});
  EXPECT_TRUE(part.missing.empty());
  context::WindowHints hints;
  hints.model = "claude-opus-4-8";
  hints.client_version = "2.1.332";
  for (const auto& p : part.points)
    EXPECT_EQ(percent_of(p.tokens, part.denominator),
              context::make_figure(config, hints, p.tokens).percent)
        << p.tokens;
  EXPECT_GT(part.point_tokens, 0);
  EXPECT_LE(part.point_tokens, part.window);
  EXPECT_FALSE(part.point_words.empty());
}

TEST(ReportScan, SubagentTranscriptsAreListedByName) {
  test::TempDir tmp;
  auto main = tmp.write("p/S.jsonl", "");
  tmp.write("p/S/subagents/agent-b.jsonl", "");
  tmp.write("p/S/subagents/agent-a.jsonl", "");
  tmp.write("p/S/subagents/agent-a.meta.json", "{}");
  auto subs = subagent_transcripts(main);
  ASSERT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs[0].filename(), "agent-a.jsonl");
  EXPECT_EQ(subs[1].filename(), "agent-b.jsonl");
  EXPECT_TRUE(subagent_transcripts(tmp / "p/none.jsonl").empty());
}

}  // namespace
}  // namespace ctxkit::report
