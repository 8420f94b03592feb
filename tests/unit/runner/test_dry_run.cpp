#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "runner/dry_run.hpp"

namespace ctxkit::runner {
namespace {

workflow::TaskSpec spec(const std::string& id, const std::string& title,
                        const std::string& context_mode = "") {
  workflow::TaskSpec s;
  s.id = id;
  s.title = title;
  s.context_mode = context_mode;
  return s;
}

// The plan printed for `specs`, with every anchor asked for noted as "<task id>:<mode>".
struct PlanBench {
  RunOptions opts;
  std::vector<std::string> asked;
  std::string print(const std::vector<workflow::TaskSpec>& specs,
                    const std::string& workflow_name = "") {
    std::ostringstream out;
    print_dry_run(out, opts, specs, workflow_name,
                  [this](const workflow::TaskSpec& s, ContextMode mode) {
                    asked.push_back(s.id + ":" + std::string(to_string(mode)));
                    return "ANCHOR of " + s.id;
                  });
    return out.str();
  }
};

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(RunnerDryRun, AContinuousRunStartsOneSessionAndResumesItForTheNextTask) {
  PlanBench b;
  b.opts.reanchor = false;
  const std::string out = b.print({spec("t1", "First"), spec("t2", "Second")});
  EXPECT_EQ(out.rfind("run plan: mode continuous (default), 2 task(s), at most 50 iteration(s), 3 "
                      "per task, on_fail abort\n\ntask t1 (First): first call starts the session "
                      "(start)\nargv: claude --output-format stream-json --verbose -p "
                      "--session-id \"<session id 1>\" \"Task t1: First\\n\\nWhen the task is "
                      "complete",
                      0),
            0u)
      << out;
  EXPECT_TRUE(has(out,
                  "\ntask t2 (Second): first call resumes the session\nargv: claude "
                  "--output-format stream-json --verbose -p --resume \"<session id 1>\" "
                  "\"Task t2: Second\\n"))
      << out;
  EXPECT_TRUE(has(out, "further iterations (up to 3) resume the same session\n")) << out;
  EXPECT_FALSE(has(out, "anchor (")) << out;
  EXPECT_TRUE(b.asked.empty());
}

TEST(RunnerDryRun, EachAnchorIsAskedInTheTasksOwnModeAndPrintedWithItsSize) {
  PlanBench b;
  b.opts.mode = ContextMode::FreshPerTask;
  b.opts.mode_origin = "--context-mode";
  const std::string out =
      b.print({spec("t1", "First"), spec("t2", "Second", "fresh-per-iteration")});
  EXPECT_EQ(b.asked, (std::vector<std::string>{"t1:fresh-per-task", "t2:fresh-per-iteration"}));
  EXPECT_EQ(out.rfind("run plan: mode fresh-per-task (--context-mode), 2 task(s)", 0), 0u) << out;
  EXPECT_TRUE(has(out, " --append-system-prompt \"ANCHOR of t1\" ")) << out;
  EXPECT_TRUE(has(out, "\nanchor (12 bytes, about 3 tokens):\nANCHOR of t1\n")) << out;
  EXPECT_TRUE(has(out,
                  "\ntask t2 (Second), context mode fresh-per-iteration: first call starts "
                  "the session (mode)\n"))
      << out;
  EXPECT_TRUE(has(out, "--session-id \"<session id 2>\"")) << out;
  EXPECT_TRUE(has(out, "further iterations (up to 3) each start a fresh session\n")) << out;
}

TEST(RunnerDryRun, ATaskInAModeOfItsOwnLeavesTheRunsSessionForTheNext) {
  PlanBench b;
  b.opts.reanchor = false;
  const std::string out =
      b.print({spec("t1", "First"), spec("t2", "Second", "fresh-per-task"), spec("t3", "Third")});
  EXPECT_TRUE(has(out,
                  "\ntask t2 (Second), context mode fresh-per-task: first call starts the "
                  "session (mode)\n"))
      << out;
  EXPECT_TRUE(has(out,
                  "\ntask t3 (Third): first call resumes the session\nargv: claude "
                  "--output-format stream-json --verbose -p --resume \"<session id 1>\""))
      << out;
}

TEST(RunnerDryRun, ATaskDoneInTheTasksFileIsSkipped) {
  PlanBench b;
  auto done = spec("t1", "First");
  done.done = true;
  const std::string out = b.print({done, spec("t2", "Second")});
  EXPECT_TRUE(has(out,
                  "\ntask t1 (First): already done in the tasks file, skipped\n\ntask t2 "
                  "(Second): first call starts the session (start)\n"))
      << out;
  EXPECT_EQ(b.asked, (std::vector<std::string>{"t2:continuous"}));
}

TEST(RunnerDryRun, BudgetsAutoThresholdsAndTheTasksOwnLimitsArePrinted) {
  PlanBench b;
  b.opts.reanchor = false;
  b.opts.mode = ContextMode::Auto;
  b.opts.budget.max_tokens = 1000;
  b.opts.budget.max_cost_usd = 2.5;
  b.opts.max_task_iterations = 1;
  auto t = spec("t1", "First");
  t.max_tokens = 10;
  t.max_iterations = 2;
  const std::string out = b.print({t});
  EXPECT_TRUE(has(out, "on_fail abort\nbudget of the run: 1000 tokens $2.5\n\ntask t1")) << out;
  EXPECT_TRUE(has(out,
                  "(start)\nauto: a fresh session instead once the last call's context "
                  "reaches "))
      << out;
  EXPECT_TRUE(has(out, "\nbudget of the task: 10 tokens\nargv: ")) << out;
  EXPECT_TRUE(has(out, "further iterations (up to 2) resume the same session\n")) << out;
}

TEST(RunnerDryRun, AWorkflowRunNamesItsTemplateInsteadOfTasks) {
  PlanBench b;
  b.opts.workflow = "/p/wf.yaml";
  b.opts.on_fail = OnFail::Skip;
  EXPECT_EQ(b.print({spec("t1", "First")}, "ex"),
            "run plan: mode continuous (default), 0 task(s), at most 50 iteration(s), 3 per "
            "task, on_fail skip\n"
            "workflow: ex (/p/wf.yaml); steps and their context actions come from the template "
            "as the run reaches them\n");
  EXPECT_TRUE(b.asked.empty());
}

}  // namespace
}  // namespace ctxkit::runner
