#include <gtest/gtest.h>

#include "report/state_events.hpp"
#include "unit/temp_dir.hpp"
#include "util/time.hpp"

namespace ctxkit::report {
namespace {

int64_t at(const char* iso) {
  return *util::parse_iso8601_ms(iso);
}

store::SessionRecord rec(const std::string& id) {
  store::SessionRecord r;
  r.session_id = id;
  r.cwd = "/home/user/proj";
  r.transcript = "/t/" + id + ".jsonl";
  return r;
}

struct StateEventsFixture : ::testing::Test {
  test::TempDir tmp;
  std::optional<store::StateStore> db;
  SessionPart part;
  void SetUp() override {
    auto s = store::StateStore::open(tmp / "state.db", 1000);
    ASSERT_TRUE(s) << s.error().message;
    db.emplace(std::move(*s));
    // P was trimmed into S at 10:00; S rolled over into N at 11:00.
    ASSERT_TRUE(
        db->record_derivation(rec("P"), rec("S"), "trim", 71, 41'000, "2026-11-25T10:00:00.000Z"));
    ASSERT_TRUE(db->record_derivation(rec("S"), rec("N"), "rollover", 88, std::nullopt,
                                      "2026-11-25T11:00:00.000Z"));
    part.session_id = "S";
    part.cwd = "/home/user/proj";
    part.start_ms = at("2026-11-25T10:00:05Z");
    part.end_ms = at("2026-11-25T10:59:50Z");
  }
  std::optional<store::SessionRecord> record(const std::string& id) { return *db->session(id); }
};

TEST_F(StateEventsFixture, TheTrimItCameFromAndTheRolloverThatEndedIt) {
  auto ev = state_events(*db, part, record("S"), {});
  ASSERT_TRUE(ev) << ev.error().message;
  ASSERT_EQ(ev->size(), 2u);
  const Event& trim = (*ev)[0];
  EXPECT_EQ(trim.kind, "trim");
  EXPECT_TRUE(trim.handover);
  EXPECT_EQ(trim.at_ms, at("2026-11-25T10:00:00Z"));
  EXPECT_EQ(*trim.tokens_freed, 41'000);
  EXPECT_EQ(trim.label, "trim −41k");
  EXPECT_EQ(trim.line, 0u);
  EXPECT_NE(trim.detail.find("of P at 71%"), std::string::npos) << trim.detail;
  const Event& roll = (*ev)[1];
  EXPECT_EQ(roll.kind, "rollover");
  EXPECT_EQ(roll.at_ms, at("2026-11-25T11:00:00Z"));
  EXPECT_NE(roll.detail.find("continued as N"), std::string::npos) << roll.detail;
}

TEST_F(StateEventsFixture, ATrimTheTranscriptShowsIsNotRepeated) {
  Event shown;
  shown.kind = "trim";
  shown.line = 1;
  StateEventsOptions o;
  o.ended_by = false;
  auto ev = state_events(*db, part, record("S"), {shown}, o);
  ASSERT_TRUE(ev);
  EXPECT_TRUE(ev->empty());
}

TEST_F(StateEventsFixture, WorkflowActionsOfItsFolderAndRunEventsNamingItWithinItsTime) {
  auto add = [&](const char* when, const char* source, const char* scope, const char* kind,
                 const std::string& data) {
    ASSERT_TRUE(db->append_event({at(when), source, scope, kind, data}));
  };
  add("2026-11-25T10:20:00Z", "workflow", "/home/user/proj", "handed_out",
      R"({"kind":"handed_out","action":"compact","workflow":"ship","step":"build","by":"gate","percent":64})");
  add("2026-11-25T10:21:00Z", "workflow", "/elsewhere", "handed_out", R"({"action":"clear"})");
  add("2026-11-25T10:22:00Z", "workflow", "/elsewhere", "executed",
      R"({"action":"compact","session":"S","by":"supervisor"})");
  add("2026-11-25T10:30:00Z", "run", "R1", "iteration", R"({"session_id":"S","task_id":"t1"})");
  add("2026-11-25T10:31:00Z", "run", "R1", "iteration", R"({"session_id":"other"})");
  add("2026-11-25T12:30:00Z", "workflow", "/home/user/proj", "handed_out", R"({"action":"x"})");
  add("2026-11-25T10:40:00Z", "workflow", "/home/user/proj", "broken", "{not json");
  StateEventsOptions o;
  o.came_from = o.ended_by = false;
  auto ev = state_events(*db, part, std::nullopt, {}, o);
  ASSERT_TRUE(ev) << ev.error().message;
  ASSERT_EQ(ev->size(), 3u);
  EXPECT_EQ((*ev)[0].kind, "workflow");
  EXPECT_EQ((*ev)[0].label, "handed_out compact");
  EXPECT_EQ((*ev)[0].detail, "workflow handed_out compact at ship build by gate (context 64%)");
  EXPECT_EQ((*ev)[1].label, "executed compact");
  EXPECT_EQ((*ev)[2].kind, "run");
  EXPECT_EQ((*ev)[2].label, "iteration");
  EXPECT_EQ((*ev)[2].detail, "ctx-run R1: iteration, task t1");
}

// ctx-cap's events of this session (not another's) and what each of its compactions kept of the
// pins: both on the page.
TEST_F(StateEventsFixture, CappedOutputsAndPinChecksOfTheSession) {
  ASSERT_TRUE(db->append_event(
      {at("2026-11-25T10:10:00Z"), "cap", "S", "capped",
       R"({"tool":"Bash","handle":"toolu_01","chars":45000,"kept_chars":3000,"tokens_kept_out":10500})"}));
  ASSERT_TRUE(db->append_event({at("2026-11-25T10:11:00Z"), "cap", "other", "capped",
                                R"({"tool":"Bash","tokens_kept_out":99})"}));
  store::PinCheckRow c;
  c.session_id = "S";
  c.line_id = "P";
  c.at_ms = at("2026-11-25T10:30:00Z");
  c.trigger = "auto";
  c.total = 3;
  c.kept = 2;
  c.restored = 1;
  c.detail =
      R"([{"id":1,"text":"port 8123","kept":true},{"id":2,"text":"deploys on friday","kept":false},{"id":3,"text":"east-2","kept":true}])";
  ASSERT_TRUE(db->add_pin_check(c));
  c.session_id = "N";  // the next session's compaction: not this page's
  ASSERT_TRUE(db->add_pin_check(c));
  StateEventsOptions o;
  o.came_from = o.ended_by = false;
  auto rec_s = record("S");
  ASSERT_TRUE(rec_s);
  auto ev = state_events(*db, part, rec_s, {}, o);
  ASSERT_TRUE(ev) << ev.error().message;
  ASSERT_EQ(ev->size(), 2u);
  EXPECT_EQ((*ev)[0].kind, "cap");
  EXPECT_EQ((*ev)[0].label, "cap −11k");  // 10,500 rounded
  EXPECT_EQ(*(*ev)[0].tokens_freed, 10'500);
  EXPECT_EQ((*ev)[0].detail,
            "Bash output of 45000 characters capped to 3000, about 10500 tokens kept out of the "
            "window; the whole output: archive_show toolu_01");
  EXPECT_EQ((*ev)[1].kind, "pins");
  EXPECT_EQ((*ev)[1].label, "pins 2/3");
  EXPECT_EQ((*ev)[1].at_ms, at("2026-11-25T10:30:00Z"));
  EXPECT_EQ((*ev)[1].detail,
            "auto compaction kept 2 of 3 pins; dropped: \u201cdeploys on friday\u201d; 1 "
            "re-injected after it (on the next prompt)");
}

TEST_F(StateEventsFixture, ASessionWithoutTimesGetsItsLineageOnly) {
  part.start_ms = part.end_ms = 0;
  ASSERT_TRUE(db->append_event({1, "workflow", "/home/user/proj", "handed_out", "{}"}));
  auto ev = state_events(*db, part, record("S"), {});
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->size(), 2u);
}

}  // namespace
}  // namespace ctxkit::report
