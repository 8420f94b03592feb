#include <gtest/gtest.h>

#include "runner/policy.hpp"

namespace ctxkit::runner {
namespace {

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
    SCOPED_TRACE(std::string(to_string(r.mode)) + " session=" + std::to_string(r.have_session) + " new_task=" + std::to_string(r.new_task) +
                 " clear=" + std::to_string(r.clear) + " compact=" + std::to_string(r.compact));
    const auto p = plan_session(r.mode, r.have_session, r.new_task, r.clear, r.compact);
    EXPECT_EQ(p.fresh, r.fresh);
    EXPECT_EQ(p.reason, r.reason);
    EXPECT_EQ(p.compact, r.do_compact);
    EXPECT_EQ(p.compact_skipped, r.compact_skipped);
  }
}

TEST(RunnerPolicy, ModeNamesRoundTrip) {
  for (auto m : {ContextMode::Continuous, ContextMode::FreshPerTask, ContextMode::FreshPerIteration, ContextMode::Hybrid})
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
  EXPECT_EQ(parse_task_report("I will print CTXKIT-TASK: DONE when finished").report, TaskReport::None);
  // The last one wins.
  EXPECT_EQ(parse_task_report("CTXKIT-TASK: DONE\nwait, tests fail\nCTXKIT-TASK: BLOCKED tests fail").report, TaskReport::Blocked);
  EXPECT_EQ(parse_task_report("CTXKIT-TASK: BLOCKED x\nCTXKIT-TASK: DONE").report, TaskReport::Done);
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
