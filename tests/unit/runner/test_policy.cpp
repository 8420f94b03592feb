#include <gtest/gtest.h>

#include "runner/policy.hpp"

namespace ctxkit::runner {
namespace {
std::string fmt_row(bool have_session, bool new_task, bool wf_compact, std::string_view action) {
  return "session=" + std::to_string(have_session) + " new_task=" + std::to_string(new_task) +
         " wf_compact=" + std::to_string(wf_compact) + " auto=" + std::string(action);
}

struct Row {
  ContextMode mode;
  bool have_session, new_task, clear, compact;
  bool fresh;
  const char* reason;
  bool do_compact, compact_skipped;
};

// Which call starts a session, resumes it, or compacts it first.
TEST(RunnerPolicy, SessionPlanTable) {
  using M = ContextMode;
  const Row rows[] = {
      // The first call of a run always starts a session.
      {M::Continuous, false, true, false, false, true, "start", false, false},
      {M::FreshPerTask, false, true, false, false, true, "start", false, false},
      {M::FreshPerIteration, false, true, false, false, true, "start", false, false},
      {M::Hybrid, false, true, false, false, true, "start", false, false},
      // continuous: resumes across tasks and iterations.
      {M::Continuous, true, true, false, false, false, "", false, false},
      {M::Continuous, true, false, false, false, false, "", false, false},
      // fresh-per-task and hybrid: a new session at each task, resumed across its iterations.
      {M::FreshPerTask, true, true, false, false, true, "mode", false, false},
      {M::FreshPerTask, true, false, false, false, false, "", false, false},
      {M::Hybrid, true, true, false, false, true, "mode", false, false},
      {M::Hybrid, true, false, false, false, false, "", false, false},
      // fresh-per-iteration: every call.
      {M::FreshPerIteration, true, false, false, false, true, "mode", false, false},
      {M::FreshPerIteration, true, true, false, false, true, "mode", false, false},
      // The workflow's clear is a fresh session on top of any mode.
      {M::Continuous, true, false, true, false, true, "workflow clear", false, false},
      {M::FreshPerTask, true, false, true, false, true, "workflow clear", false, false},
      // The workflow's compact runs on a session that is resumed, never on a fresh one.
      {M::Continuous, true, true, false, true, false, "", true, false},
      {M::FreshPerTask, true, false, false, true, false, "", true, false},
      {M::FreshPerTask, true, true, false, true, true, "mode", false, true},
      {M::FreshPerIteration, true, false, false, true, true, "mode", false, true},
      {M::Continuous, false, true, false, true, true, "start", false, true},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(std::string(to_string(r.mode)) + " session=" + std::to_string(r.have_session) +
                 " new_task=" + std::to_string(r.new_task) + " clear=" + std::to_string(r.clear) +
                 " compact=" + std::to_string(r.compact));
    const auto p = plan_session(r.mode, r.have_session, r.new_task, r.clear, r.compact);
    EXPECT_EQ(p.fresh, r.fresh);
    EXPECT_EQ(p.reason, r.reason);
    EXPECT_EQ(p.compact, r.do_compact);
    EXPECT_EQ(p.compact_skipped, r.compact_skipped);
  }
}

// Auto runs as continuous until its decision says otherwise; a fresh session it asks for wins over
// a compaction, and a workflow's compact stays the workflow's.
TEST(RunnerPolicy, AutoSessionPlanTable) {
  using A = AutoAction;
  struct AutoRow {
    bool have_session, new_task, wf_compact;
    A action;
    bool fresh;
    const char* reason;
    bool do_compact;
    const char* why;
  };
  const AutoRow rows[] = {
      {false, true, false, A::Keep, true, "start", false, ""},
      {false, true, false, A::Fresh, true, "start", false, ""},
      {true, true, false, A::Keep, false, "", false, ""},
      {true, false, false, A::Keep, false, "", false, ""},
      {true, true, false, A::Fresh, true, "auto", false, ""},
      {true, false, false, A::Compact, false, "", true, "auto"},
      {true, false, true, A::Compact, false, "", true, "workflow compact"},
      {true, true, true, A::Fresh, true, "auto", false, "workflow compact"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(fmt_row(r.have_session, r.new_task, r.wf_compact, to_string(r.action)));
    const auto p =
        plan_session(ContextMode::Auto, r.have_session, r.new_task, false, r.wf_compact, r.action);
    EXPECT_EQ(p.fresh, r.fresh);
    EXPECT_EQ(p.reason, r.reason);
    EXPECT_EQ(p.compact, r.do_compact);
    EXPECT_EQ(p.compact_why, r.why);
  }
  // Another mode ignores an auto decision.
  for (auto m : {ContextMode::Continuous, ContextMode::FreshPerTask, ContextMode::Hybrid}) {
    const auto p = plan_session(m, true, false, false, false, AutoAction::Compact);
    EXPECT_FALSE(p.compact) << to_string(m);
    EXPECT_FALSE(
        plan_session(ContextMode::Continuous, true, true, false, false, AutoAction::Fresh).fresh);
  }
}

TEST(RunnerPolicy, CompactAtOnlyWhereTheSessionIsKept) {
  SessionPlan keep = plan_session(ContextMode::Continuous, true, false, false, false);
  apply_compact_at(keep, false);
  EXPECT_TRUE(keep.compact);
  EXPECT_FALSE(keep.fresh);
  EXPECT_EQ(keep.compact_why, "[compact] at");
  SessionPlan roll = plan_session(ContextMode::Continuous, true, false, false, false);
  apply_compact_at(roll, true);
  EXPECT_TRUE(roll.fresh);
  EXPECT_FALSE(roll.compact);
  EXPECT_EQ(roll.reason, "[compact] at");
  // A fresh session already, or the workflow's own compaction: left as planned.
  SessionPlan fresh = plan_session(ContextMode::FreshPerIteration, true, false, false, false);
  apply_compact_at(fresh, false);
  EXPECT_TRUE(fresh.fresh);
  EXPECT_FALSE(fresh.compact);
  EXPECT_EQ(fresh.reason, "mode");
  SessionPlan workflow = plan_session(ContextMode::Continuous, true, false, false, true);
  apply_compact_at(workflow, true);
  EXPECT_FALSE(workflow.fresh);
  EXPECT_EQ(workflow.compact_why, "workflow compact");
}

TEST(RunnerPolicy, AutoDecisionTable) {
  const AutoThresholds t{50, 75};
  struct R {
    std::optional<int> percent;
    bool new_task;
    AutoAction want;
  };
  const R rows[] = {
      {std::nullopt, true, AutoAction::Keep},
      {std::nullopt, false, AutoAction::Keep},
      {0, true, AutoAction::Keep},
      {49, true, AutoAction::Keep},
      {50, true, AutoAction::Fresh},
      {90, true, AutoAction::Fresh},
      {50, false, AutoAction::Keep},
      {74, false, AutoAction::Keep},
      {75, false, AutoAction::Compact},
      {120, false, AutoAction::Compact},
  };
  for (const auto& r : rows)
    EXPECT_EQ(decide_auto(r.percent, r.new_task, t), r.want)
        << (r.percent ? *r.percent : -1) << " new_task=" << r.new_task;
  // Other thresholds move the decision.
  EXPECT_EQ(decide_auto(30, true, {20, 40}), AutoAction::Fresh);
  EXPECT_EQ(decide_auto(30, false, {20, 40}), AutoAction::Keep);
  EXPECT_EQ(decide_auto(40, false, {20, 40}), AutoAction::Compact);
}

TEST(RunnerPolicy, TaskModeAndSummaries) {
  EXPECT_EQ(task_mode(ContextMode::Continuous, std::nullopt), ContextMode::Continuous);
  EXPECT_EQ(task_mode(ContextMode::Continuous, ContextMode::FreshPerIteration),
            ContextMode::FreshPerIteration);
  EXPECT_EQ(task_mode(ContextMode::Auto, ContextMode::Continuous), ContextMode::Continuous);
  EXPECT_TRUE(carries_summary(ContextMode::Hybrid));
  EXPECT_TRUE(carries_summary(ContextMode::Auto));
  EXPECT_FALSE(carries_summary(ContextMode::Continuous));
  EXPECT_FALSE(carries_summary(ContextMode::FreshPerTask));
}

TEST(RunnerPolicy, BudgetTable) {
  struct R {
    Budget b;
    Spent s;
    const char* which;  // "" when not reached
    double over;
  };
  const R rows[] = {
      {{}, {1000000, 99.0}, "", 0},
      {{1000, std::nullopt}, {999, 5.0}, "", 0},
      {{1000, std::nullopt}, {1000, 0}, "tokens", 0},
      {{1000, std::nullopt}, {1234, 0}, "tokens", 234},
      {{std::nullopt, 0.5}, {1u << 30, 0.49}, "", 0},
      {{std::nullopt, 0.5}, {0, 0.75}, "cost", 0.25},
      {{1000, 0.5}, {2000, 0.75}, "tokens", 1000},  // tokens first
      {{1000, 0.5}, {10, 0.5}, "cost", 0},
      {{0, std::nullopt}, {0, 0}, "tokens", 0},  // a zero budget is reached before any call
  };
  for (const auto& r : rows) {
    const auto o = budget_reached(r.b, r.s);
    SCOPED_TRACE(std::to_string(r.s.tokens) + " tokens, " + std::to_string(r.s.cost_usd) + " USD");
    if (std::string(r.which).empty()) {
      EXPECT_FALSE(o);
      continue;
    }
    ASSERT_TRUE(o);
    EXPECT_EQ(o->budget, r.which);
    EXPECT_DOUBLE_EQ(o->over, r.over);
    EXPECT_DOUBLE_EQ(o->spent - o->limit, r.over);
  }
  EXPECT_FALSE(Budget{}.any());
  EXPECT_TRUE((Budget{std::nullopt, 1.0}.any()));
}

// After a call: done, another attempt, or on_fail's answer once attempts ran out (or BLOCKED).
TEST(RunnerPolicy, AfterCallTable) {
  using T = TaskReport;
  using F = OnFail;
  using A = AfterCall;
  struct R {
    bool ok;
    T report;
    int attempt, max;
    F on_fail;
    A want;
  };
  const R rows[] = {
      {true, T::Done, 1, 3, F::Abort, A::Done},     {true, T::Done, 3, 3, F::Abort, A::Done},
      {false, T::Done, 1, 3, F::Abort, A::Again},  // a failed call's DONE does not count
      {false, T::Done, 3, 3, F::Abort, A::Abort},   {true, T::None, 1, 3, F::Abort, A::Again},
      {true, T::None, 2, 3, F::Skip, A::Again},     {true, T::None, 3, 3, F::Abort, A::Abort},
      {true, T::None, 3, 3, F::Skip, A::Skip},      {true, T::None, 3, 3, F::Retry, A::Retry},
      {true, T::Blocked, 1, 3, F::Abort, A::Abort}, {true, T::Blocked, 1, 3, F::Skip, A::Skip},
      {true, T::Blocked, 1, 3, F::Retry, A::Skip},  {false, T::None, 1, 1, F::Retry, A::Retry},
  };
  for (const auto& r : rows)
    EXPECT_EQ(to_string(decide_after_call({r.ok, false, r.report, r.attempt, r.max, r.on_fail})),
              to_string(r.want))
        << "ok=" << r.ok << " report=" << static_cast<int>(r.report) << " attempt " << r.attempt
        << "/" << r.max << " on_fail " << to_string(r.on_fail);
}

// A limit is no attempt, whatever else the call says; the wait is the policy's.
TEST(RunnerPolicy, ALimitIsAWaitNotAnAttempt) {
  for (auto report : {TaskReport::None, TaskReport::Done, TaskReport::Blocked})
    for (int attempt : {1, 3})
      EXPECT_EQ(decide_after_call({false, true, report, attempt, 3, OnFail::Abort}),
                AfterCall::LimitWait);
  EXPECT_EQ(decide_after_call({true, true, TaskReport::Done, 1, 3, OnFail::Abort}),
            AfterCall::LimitWait);
}

TEST(RunnerPolicy, LimitWaitTable) {
  const LimitPolicy wait{OnLimit::Wait, 60, 3600};
  struct R {
    LimitPolicy p;
    std::optional<int64_t> reset;
    int in_a_row;
    bool stop;
    int64_t seconds;
    const char* why;
  };
  const int64_t now = 1'800'000'000;
  const R rows[] = {
      {wait, now + 300, 1, false, 300, "reset"},
      {wait, now + 300, 5, false, 300, "reset"},    // a reset time wins over the backoff
      {wait, now - 10, 1, false, 1, "reset"},       // a reset already past: a second
      {wait, now + 3600, 1, false, 3600, "reset"},  // at the ceiling
      {wait, now + 3601, 1, true, 3601, "the reset lies past limit_max_wait_seconds"},
      {wait, std::nullopt, 1, false, 60, "backoff"},
      {wait, std::nullopt, 2, false, 120, "backoff"},
      {wait, std::nullopt, 4, false, 480, "backoff"},
      {wait, std::nullopt, 7, false, 3600, "backoff"},     // 3840 capped
      {wait, std::nullopt, 1000, false, 3600, "backoff"},  // no overflow
      {{OnLimit::Stop, 60, 3600}, now + 30, 1, true, 0, "on_limit stop"},
      {{OnLimit::Stop, 60, 3600}, std::nullopt, 1, true, 0, "on_limit stop"},
      {{OnLimit::Wait, 1, 5}, std::nullopt, 3, false, 4, "backoff"},
  };
  for (const auto& r : rows) {
    const auto w = decide_limit_wait(r.p, r.reset, now, r.in_a_row);
    SCOPED_TRACE(std::string(r.why) + " in_a_row " + std::to_string(r.in_a_row));
    EXPECT_EQ(w.stop, r.stop);
    EXPECT_EQ(w.seconds, r.seconds);
    EXPECT_EQ(w.why, r.why);
  }
  EXPECT_EQ(parse_on_limit("wait"), OnLimit::Wait);
  EXPECT_EQ(parse_on_limit("stop"), OnLimit::Stop);
  EXPECT_FALSE(parse_on_limit("retry"));
}

TEST(RunnerPolicy, ModeNamesRoundTrip) {
  for (auto m : {ContextMode::Continuous, ContextMode::FreshPerTask, ContextMode::FreshPerIteration,
                 ContextMode::Hybrid, ContextMode::Auto})
    EXPECT_EQ(parse_context_mode(to_string(m)), m);
  EXPECT_FALSE(parse_context_mode("fresh"));
  EXPECT_FALSE(parse_context_mode("Continuous"));
  EXPECT_FALSE(parse_context_mode(""));
  EXPECT_EQ(parse_on_fail("skip"), OnFail::Skip);
  EXPECT_FALSE(parse_on_fail("ignore"));
}

TEST(RunnerPolicy, DoneMarkerIsTheLastMarkerLine) {
  EXPECT_EQ(parse_task_report("All done.\nCTXKIT-TASK: DONE").report, TaskReport::Done);
  EXPECT_EQ(parse_task_report("ctxkit-task: done.").report, TaskReport::Done);
  EXPECT_EQ(parse_task_report("  **CTXKIT-TASK: DONE**  ").report, TaskReport::Done);
  EXPECT_EQ(parse_task_report("`CTXKIT-TASK: DONE`").report, TaskReport::Done);
  EXPECT_EQ(parse_task_report("no marker here").report, TaskReport::None);
  EXPECT_EQ(parse_task_report("").report, TaskReport::None);
  // Mentioned inside a sentence: not a report.
  EXPECT_EQ(parse_task_report("I will print CTXKIT-TASK: DONE when finished").report,
            TaskReport::None);
  // The last one wins.
  EXPECT_EQ(
      parse_task_report("CTXKIT-TASK: DONE\nwait, tests fail\nCTXKIT-TASK: BLOCKED tests fail")
          .report,
      TaskReport::Blocked);
  EXPECT_EQ(parse_task_report("CTXKIT-TASK: BLOCKED x\nCTXKIT-TASK: DONE").report,
            TaskReport::Done);
  const auto b = parse_task_report("CTXKIT-TASK: BLOCKED: the API key is missing");
  EXPECT_EQ(b.report, TaskReport::Blocked);
  EXPECT_EQ(b.reason, "the API key is missing");
  // An unknown word is no report (and cancels an earlier one).
  EXPECT_EQ(parse_task_report("CTXKIT-TASK: DONE\nCTXKIT-TASK: MAYBE").report, TaskReport::None);
  EXPECT_EQ(parse_task_report("CTXKIT-TASK: DONEISH").report, TaskReport::None);
}

TEST(RunnerPolicy, StripRemovesOnlyMarkerLines) {
  EXPECT_EQ(strip_task_report("Plan:\n- a\n- b\nCTXKIT-TASK: DONE\n"), "Plan:\n- a\n- b");
  EXPECT_EQ(strip_task_report("nothing to strip"), "nothing to strip");
}

}  // namespace
}  // namespace ctxkit::runner
