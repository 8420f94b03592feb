#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/locations.hpp"
#include "runner/runner.hpp"
#include "runner/workflow_driver.hpp"
#include "unit/temp_dir.hpp"
#include "workflow/workflow_service.hpp"

namespace ctxkit::runner {
namespace {
namespace fs = std::filesystem;

const char* kTwoSteps = R"(
name: ex
description: Example
steps:
  - id: plan
    type: action
    instructions: Plan the work.
  - id: build
    type: action
    context: compact
    instructions: Build it.
)";

const char* kLoop = R"(
name: lp
description: Loop
loops:
  work:
    - id: code
      instructions: Code {task.title}.
    - id: review
      on_fail: skip
      instructions: Review {task.id}.
steps:
  - id: work
    type: loop
)";

const char* kRalph = R"(
name: rl
description: Ralph
steps:
  - id: refine
    type: ralph
    n: 2
    instructions: Refine.
)";

// A project folder (the driver's worktree) and a workflow template file in a temp dir, with the
// run's options pointing at both.
struct DriverBench {
  test::TempDir tmp;
  util::Env env = tmp.env();
  core::Locations loc = core::Locations::resolve(env);
  core::Config cfg;
  RunOptions opts;
  explicit DriverBench(const std::string& yaml) {
    opts.project = tmp.path() / "proj";
    fs::create_directories(opts.project);
    opts.workflow = tmp.write("wf.yaml", yaml).string();
    opts.on_fail = OnFail::Retry;
    opts.mode = ContextMode::FreshPerTask;
    opts.max_task_iterations = 4;
  }
  WorkflowDriver driver(std::vector<workflow::TaskSpec> loop_tasks = {}) {
    return WorkflowDriver(opts, env, loc, std::move(loop_tasks));
  }
  Position position(WorkflowDriver& d) {
    auto p = d.position("", env, cfg);
    EXPECT_TRUE(p) << (p ? "" : p.error().message);
    return p ? *p : Position{};
  }
};

TEST(WorkflowDriver, StartsTheWorkflowAndGivesItsFirstStepWithTheRunsOptions) {
  DriverBench b(kTwoSteps);
  auto d = b.driver();
  EXPECT_EQ(d.name(), b.opts.workflow);
  ASSERT_TRUE(d.ensure_started());
  EXPECT_TRUE(fs::exists(workflow::state_path(b.opts.project)));
  const Position p = b.position(d);
  EXPECT_FALSE(p.finished);
  EXPECT_FALSE(p.workflow_failed);
  EXPECT_EQ(p.key, "plan");
  EXPECT_EQ(p.task_key, "plan");
  EXPECT_EQ(p.title, "plan");
  EXPECT_EQ(p.work, "Workflow \"ex\", step plan\n\nPlan the work.");
  EXPECT_EQ(p.action, workflow::ContextAction::None);
  EXPECT_EQ(p.focus, "");
  EXPECT_EQ(p.on_fail, OnFail::Retry);
  EXPECT_EQ(p.mode, ContextMode::FreshPerTask);
  EXPECT_EQ(p.max_attempts, 4);
  EXPECT_EQ(p.workflow_text.rfind("Workflow \"ex\"\n", 0), 0u) << p.workflow_text;
}

TEST(WorkflowDriver, AnAdvanceHandsOutTheNextStepsCompactOnceWithItsFocus) {
  DriverBench b(kTwoSteps);
  auto d = b.driver();
  ASSERT_TRUE(d.ensure_started());
  b.position(d);
  ASSERT_TRUE(d.advance("planned", "", b.cfg.context));
  Position p = b.position(d);
  EXPECT_EQ(p.key, "build");
  EXPECT_EQ(p.work, "Workflow \"ex\", step build\n\nBuild it.");
  EXPECT_EQ(p.action, workflow::ContextAction::Compact);
  EXPECT_EQ(p.focus, "Next workflow step: build - Build it.");
  p = b.position(d);  // handed out already: not again
  EXPECT_EQ(p.key, "build");
  EXPECT_EQ(p.action, workflow::ContextAction::None);
  EXPECT_EQ(p.focus, "");
}

TEST(WorkflowDriver, AnExistingStateIsContinuedNotStartedAgain) {
  DriverBench b(kTwoSteps);
  {
    auto first = b.driver();
    ASSERT_TRUE(first.ensure_started());
    ASSERT_TRUE(first.advance("planned", "", b.cfg.context));
  }
  auto d = b.driver();
  ASSERT_TRUE(d.ensure_started());
  EXPECT_EQ(b.position(d).key, "build");
}

TEST(WorkflowDriver, ALoopWithoutTasksGetsTheTasksFilesTasks) {
  DriverBench b(kLoop);
  workflow::TaskSpec t1;
  t1.id = "t1";
  t1.title = "First";
  t1.description = "Do the first.";
  workflow::TaskSpec t2;
  t2.id = "t2";
  t2.title = "Second";
  auto d = b.driver({t1, t2});
  ASSERT_TRUE(d.ensure_started());
  Position p = b.position(d);
  EXPECT_EQ(p.key, "work/t1/code");
  EXPECT_EQ(p.task_key, "work/t1");
  EXPECT_EQ(p.title, "First");
  EXPECT_EQ(p.work, "Workflow \"lp\", step work, sub-step code, task t1: First\n\nCode First.");
  EXPECT_EQ(p.on_fail, OnFail::Retry);
  const std::string state = test::read_file(workflow::state_path(b.opts.project));
  EXPECT_NE(state.find("\"description\": \"Do the first.\""), std::string::npos) << state;
  EXPECT_NE(state.find("\"id\": \"t2\""), std::string::npos) << state;

  ASSERT_TRUE(d.advance("coded", "", b.cfg.context));
  p = b.position(d);
  EXPECT_EQ(p.key, "work/t1/review");
  EXPECT_EQ(p.work, "Workflow \"lp\", step work, sub-step review, task t1: First\n\nReview t1.");
  EXPECT_EQ(p.on_fail, OnFail::Skip);  // the sub-step's own on_fail

  ASSERT_TRUE(d.advance("reviewed", "", b.cfg.context));
  p = b.position(d);
  EXPECT_EQ(p.key, "work/t2/code");
  EXPECT_EQ(p.title, "Second");
}

TEST(WorkflowDriver, ALoopWithoutTasksAndNoTasksFileIsLeftToTheWorkflow) {
  DriverBench b(kLoop);
  auto d = b.driver();
  ASSERT_TRUE(d.ensure_started());
  const Position p = b.position(d);
  EXPECT_EQ(p.key, "work");
  EXPECT_EQ(p.title, "work");
}

TEST(WorkflowDriver, ARalphStepsIterationIsPartOfItsKeyAndText) {
  DriverBench b(kRalph);
  auto d = b.driver();
  ASSERT_TRUE(d.ensure_started());
  Position p = b.position(d);
  EXPECT_EQ(p.key, "refine#1");
  EXPECT_EQ(p.task_key, "refine");
  EXPECT_EQ(p.work.rfind("Workflow \"rl\", step refine, iteration 1 of 2\n\nRefine.", 0), 0u)
      << p.work;
  ASSERT_TRUE(d.advance("once", "", b.cfg.context));
  p = b.position(d);
  EXPECT_EQ(p.key, "refine#2");
  EXPECT_EQ(p.work.rfind("Workflow \"rl\", step refine, iteration 2 of 2\n\n", 0), 0u) << p.work;
}

TEST(WorkflowDriver, ACompletedWorkflowIsFinishedNotFailed) {
  DriverBench b(kTwoSteps);
  auto d = b.driver();
  ASSERT_TRUE(d.ensure_started());
  ASSERT_TRUE(d.advance("planned", "", b.cfg.context));
  ASSERT_TRUE(d.advance("built", "", b.cfg.context));
  const Position p = b.position(d);
  EXPECT_TRUE(p.finished);
  EXPECT_FALSE(p.workflow_failed);
  EXPECT_EQ(p.key, "");
}

TEST(WorkflowDriver, AStateThatDisappearedIsAnError) {
  DriverBench b(kTwoSteps);
  auto d = b.driver();
  ASSERT_TRUE(d.ensure_started());
  fs::remove(workflow::state_path(b.opts.project));
  auto p = d.position("", b.env, b.cfg);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message, "the workflow state disappeared");
}

TEST(WorkflowDriver, AWorkflowThatCannotStartNamesTheCall) {
  DriverBench b(kTwoSteps);
  b.opts.workflow = (b.tmp.path() / "missing.yaml").string();
  auto d = b.driver();
  auto r = d.ensure_started();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.rfind("workflow_start: {\"error\":", 0), 0u) << r.error().message;
  EXPECT_FALSE(fs::exists(workflow::state_path(b.opts.project)));
}

}  // namespace
}  // namespace ctxkit::runner
