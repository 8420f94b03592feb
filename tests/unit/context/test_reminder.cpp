#include <gtest/gtest.h>

#include "context/reminder.hpp"

namespace ctxkit::context {
namespace {

TEST(Reminder, TierBoundaries) {
  core::ContextConfig c;
  c.reserved_tokens = 33000;  // usable: 167k of 200k, as an explicit override
  EXPECT_EQ(tier_for(59, c), Tier::None);
  EXPECT_EQ(tier_for(60, c), Tier::Warn);
  EXPECT_EQ(tier_for(74, c), Tier::Warn);
  EXPECT_EQ(tier_for(75, c), Tier::Recommend);
  EXPECT_EQ(tier_for(85, c), Tier::Urgent);
  EXPECT_EQ(tier_for(130, c), Tier::Urgent);
}

TEST(Reminder, FirstCrossingFires) {
  auto d = decide_reminder(std::nullopt, Tier::Warn, 1000, 60000);
  EXPECT_TRUE(d.fire);
  ASSERT_TRUE(d.store);
  EXPECT_EQ(d.store->tier, 1);
  EXPECT_EQ(d.store->fired_at_ms, 1000);
}

TEST(Reminder, RemindOncePerTierWithinInterval) {
  core::ReminderState prev{1, 1000};
  auto d = decide_reminder(prev, Tier::Warn, 1000 + 59999, 60000);
  EXPECT_FALSE(d.fire);
  EXPECT_FALSE(d.store);
  d = decide_reminder(prev, Tier::Warn, 1000 + 60000, 60000);
  EXPECT_TRUE(d.fire);
}

TEST(Reminder, HigherTierFiresAtOnce) {
  auto d = decide_reminder(core::ReminderState{1, 1000}, Tier::Recommend, 1001, 60000);
  EXPECT_TRUE(d.fire);
  EXPECT_EQ(d.store->tier, 2);
}

TEST(Reminder, DropBelowWarnRearms) {
  auto d = decide_reminder(core::ReminderState{3, 1000}, Tier::None, 2000, 60000);
  EXPECT_FALSE(d.fire);
  ASSERT_TRUE(d.store);
  EXPECT_EQ(d.store->tier, 0);
  auto again = decide_reminder(d.store, Tier::Warn, 2001, 60000);
  EXPECT_TRUE(again.fire);
}

TEST(Reminder, DropToALowerTierFiresAndRearms) {
  auto d = decide_reminder(core::ReminderState{3, 1000}, Tier::Warn, 1001, 60000);
  EXPECT_TRUE(d.fire);
  EXPECT_EQ(d.store->tier, 1);
}

TEST(Reminder, BelowThresholdWithNothingStoredWritesNothing) {
  auto d = decide_reminder(std::nullopt, Tier::None, 1, 60000);
  EXPECT_FALSE(d.fire);
  EXPECT_FALSE(d.store);
}

TEST(Reminder, TextsBeginWithContextAtAndNameTheSkills) {
  core::ContextConfig c;
  c.reserved_tokens = 33000;  // usable: 167k of 200k, as an explicit override
  auto f = make_figure(c, {}, 127000);
  std::string warn = reminder_text(Tier::Warn, f, c, false);
  std::string rec = reminder_text(Tier::Recommend, f, c, false);
  std::string urg = reminder_text(Tier::Urgent, f, c, false);
  for (const auto& t : {warn, rec, urg}) {
    EXPECT_TRUE(t.starts_with("Context at 76% (127k of 167k usable tokens). ")) << t;
    EXPECT_NE(t.find("/trim"), std::string::npos) << t;
    EXPECT_LT(t.size(), 400u);
  }
  EXPECT_NE(rec.find("/rollover"), std::string::npos);
  EXPECT_NE(urg.find("/rollover"), std::string::npos);
}

TEST(Reminder, WholeWindowBasisStatesTheWindow) {
  core::ContextConfig c;
  c.reserved_tokens = 33000;  // usable: 167k of 200k, as an explicit override
  c.basis = core::Basis::Window;
  auto f = make_figure(c, {}, 170000);
  std::string t = reminder_text(Tier::Urgent, f, c, false);
  EXPECT_TRUE(t.starts_with("Context at 85% (170k of 200k tokens). ")) << t;
  EXPECT_NE(t.find("about 83% of the window"), std::string::npos) << t;
}

TEST(Reminder, SubagentTextDoesNotOfferSessionSkills) {
  core::ContextConfig c;
  c.reserved_tokens = 33000;  // usable: 167k of 200k, as an explicit override
  auto f = make_figure(c, {}, 150000);
  std::string t = reminder_text(Tier::Urgent, f, c, true);
  EXPECT_TRUE(t.starts_with("Context at 89% (150k of 167k usable tokens) in this subagent.")) << t;
  EXPECT_EQ(t.find("/rollover"), std::string::npos);
}

// With the client's live countdown of the window (totalTokensReminder "countdown"), the reminder
// states no figure of its own, only what to do.
TEST(Reminder, WithTheClientsWindowCountdownNoFigureOnlyWhatToDo) {
  core::ContextConfig c;
  c.reserved_tokens = 33000;
  auto f = make_figure(c, {}, 127000);
  const std::string t = reminder_text(Tier::Urgent, f, c, false, true);
  EXPECT_EQ(t.find('%'), std::string::npos) << t;
  EXPECT_EQ(t.find("127k"), std::string::npos) << t;
  EXPECT_EQ(t,
            "Context is filling (the tokens-left count after each tool result is this window's). "
            "Close to the limit: auto-compaction (lossy) starts when the usable part is full. Use "
            "/trim or /rollover now.");
}

// Every text a reminder can say, pinned: a change of wording is a deliberate change of this test.
TEST(Reminder, EveryTextIsPinned) {
  core::ContextConfig c;
  c.reserved_tokens = 33000;  // usable: 167k of 200k, as an explicit override
  auto f = make_figure(c, {}, 127000);
  const std::string head = "Context at 76% (127k of 167k usable tokens)";
  EXPECT_EQ(
      reminder_text(Tier::Warn, f, c, false),
      head +
          ". Response quality can start to degrade at this level. /trim writes a copy of this "
          "session with large old tool outputs cut, to resume in place of this one; consider it "
          "if responses feel degraded.");
  EXPECT_EQ(
      reminder_text(Tier::Recommend, f, c, false),
      head +
          ". /trim is recommended now; /rollover (a fresh session with a handoff summary and a "
          "searchable archive) if trimming does not free enough. /pin the facts that must "
          "survive a compaction.");
  EXPECT_EQ(
      reminder_text(Tier::Urgent, f, c, false),
      head +
          ". Close to the limit: auto-compaction (lossy) starts when the usable part is full. "
          "Use /trim or /rollover now.");
  EXPECT_EQ(reminder_text(Tier::Warn, f, c, true),
            head + " in this subagent. Keep further tool output small.");
  EXPECT_EQ(reminder_text(Tier::Recommend, f, c, true),
            head + " in this subagent. Plan to finish the task and return a concise result soon.");
  EXPECT_EQ(
      reminder_text(Tier::Urgent, f, c, true),
      head + " in this subagent. Finish now and return a concise result before the window fills.");
  core::ContextConfig whole;
  whole.basis = core::Basis::Window;
  whole.reserved_tokens = 33000;
  auto w = make_figure(whole, {}, 170000);
  EXPECT_EQ(
      reminder_text(Tier::Urgent, w, whole, false),
      "Context at 85% (170k of 200k tokens). Close to the limit: auto-compaction (lossy) starts at "
      "about 83% of the window. Use /trim or /rollover now.");
}

TEST(Reminder, NoTextClaimsTrimStaysInThisSession) {
  core::ContextConfig c;
  c.reserved_tokens = 33000;  // usable: 167k of 200k, as an explicit override
  auto f = make_figure(c, {}, 127000);
  for (Tier t : {Tier::Warn, Tier::Recommend, Tier::Urgent}) {
    EXPECT_EQ(reminder_text(t, f, c, false).find("stays in this session"), std::string::npos);
  }
}

// Without an override, usable ends where the client compacts: at the window when it compacts only
// once the API refuses, below it with an auto-compact window; with auto-compaction off the texts
// say so and count against the whole window.
TEST(Reminder, TheTextsFollowWhereTheClientCompacts) {
  core::ContextConfig c;
  WindowHints h;
  auto f = make_figure(c, h, 170000);
  EXPECT_EQ(reminder_text(Tier::Urgent, f, c, false),
            "Context at 85% (170k of 200k tokens). Close to the limit: auto-compaction (lossy) "
            "starts when the "
            "window is full. Use /trim or /rollover now.");
  h.compaction.auto_compact_window = 100000;
  f = make_figure(c, h, 57000);
  EXPECT_EQ(reminder_text(Tier::Urgent, f, c, false),
            "Context at 85% (57k of 67k usable tokens). Close to the limit: auto-compaction "
            "(lossy) starts when the "
            "usable part is full. Use /trim or /rollover now.");
  h.compaction.disabled = true;
  f = make_figure(c, h, 170000);
  EXPECT_EQ(reminder_text(Tier::Urgent, f, c, false),
            "Context at 85% (170k of 200k tokens). Close to the limit: auto-compaction is off, so "
            "the session stops "
            "when the window is full. Use /trim or /rollover now.");
}

// The rate limit as a hook applies it: a state it cannot get at, and the second look under the
// lock, where another hook of the same session may have reminded first.
struct FakeState {
  std::optional<core::ReminderState> stored;
  int updates = 0;
  std::optional<Error::Kind> fails;
  ReminderUpdate update() {
    return [this](const auto& decide) -> Result<void> {
      ++updates;
      if (fails) return fail("database is locked", *fails);
      if (auto next = decide(stored)) stored = next;
      return {};
    };
  }
};

TEST(ReminderFires, WithoutTheStateALockedOneStaysQuietAndAMissingOneReminds) {
  FakeState st;
  std::string problem;
  EXPECT_FALSE(reminder_fires(RateLimitAccess::Locked, std::nullopt, Tier::Urgent, 1000, 60000,
                              st.update(), problem));
  EXPECT_TRUE(reminder_fires(RateLimitAccess::Unavailable, std::nullopt, Tier::Warn, 1000, 60000,
                             st.update(), problem));
  EXPECT_TRUE(reminder_fires(RateLimitAccess::Unread, std::nullopt, Tier::Warn, 1000, 60000,
                             st.update(), problem));
  EXPECT_FALSE(reminder_fires(RateLimitAccess::Unavailable, std::nullopt, Tier::None, 1000, 60000,
                              st.update(), problem));
  EXPECT_EQ(st.updates, 0);
  EXPECT_EQ(problem, "");
}

TEST(ReminderFires, TheFirstReminderIsRecordedAndTheNextWithinTheIntervalIsNot) {
  FakeState st;
  std::string problem;
  EXPECT_TRUE(reminder_fires(RateLimitAccess::Read, st.stored, Tier::Warn, 1000, 60000, st.update(),
                             problem));
  ASSERT_TRUE(st.stored);
  EXPECT_EQ(st.stored->tier, 1);
  EXPECT_EQ(st.stored->fired_at_ms, 1000);
  // Read again: the same tier within the interval changes nothing, and the lock is not taken.
  EXPECT_FALSE(reminder_fires(RateLimitAccess::Read, st.stored, Tier::Warn, 2000, 60000,
                              st.update(), problem));
  EXPECT_EQ(st.updates, 1);
}

TEST(ReminderFires, AnotherHookThatRemindedFirstWinsTheSecondLook) {
  FakeState st;
  std::string problem;
  // Read before the other hook recorded its reminder; under the lock the state holds it.
  const std::optional<core::ReminderState> read;
  st.stored = core::ReminderState{2, 990};
  EXPECT_FALSE(reminder_fires(RateLimitAccess::Read, read, Tier::Recommend, 1000, 60000,
                              st.update(), problem));
  EXPECT_EQ(st.updates, 1);
  EXPECT_EQ(st.stored->fired_at_ms, 990);
}

TEST(ReminderFires, AFailedUpdateStaysQuietWhenLockedAndRemindsOtherwise) {
  FakeState st;
  std::string problem;
  st.fails = Error::Kind::Busy;
  EXPECT_FALSE(reminder_fires(RateLimitAccess::Read, std::nullopt, Tier::Warn, 1000, 60000,
                              st.update(), problem));
  EXPECT_EQ(problem, "database is locked");
  st.fails = Error::Kind::Generic;
  problem.clear();
  EXPECT_TRUE(reminder_fires(RateLimitAccess::Read, std::nullopt, Tier::Warn, 1000, 60000,
                             st.update(), problem));
  EXPECT_EQ(problem, "database is locked");
}

}  // namespace
}  // namespace ctxkit::context
