#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "unit/temp_dir.hpp"
#include "workflow/workflow_service.hpp"

// The typed operations of WorkflowService and the one gate path ("decide, mark as handed out,
// save, record the event") that start, advance and take_gate share.
namespace ctxkit::workflow {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

// plan, then a loop whose sub-step asks for /compact, then a step that asks for /clear.
const char* kLoopCompactClear = R"(
name: gated
description: Gates in a loop and after it
loops:
  work:
    - id: do
      context: compact
      instructions: Do {task.title}
steps:
  - id: plan
    type: action
    instructions: Plan.
  - id: work
    type: loop
  - id: finish
    type: action
    context: clear
    instructions: Finish.
)";

const char* kMinPercent = R"(
name: small
description: A compact only for a full session
steps:
  - id: a
    type: action
    instructions: A.
  - id: b
    type: action
    context: compact
    context_min_percent: 50
    instructions: B.
  - id: c
    type: action
    instructions: C.
)";

// A worktree, a service on it, and what its on_event saw: each event with whether the state
// file already held the mark when the event came (the event is recorded after the save).
struct Gate {
  test::TempDir tmp;
  fs::path worktree;
  std::optional<double> percent;
  int percent_reads = 0;
  std::vector<WorkflowEvent> events;
  std::vector<bool> saved_before_event;

  explicit Gate(const char* yaml) : worktree(tmp.path() / "wt") {
    fs::create_directories(worktree);
    template_path = tmp.write("wf.yaml", yaml);
  }
  WorkflowService service() {
    ServiceOptions o;
    o.worktree = worktree;
    o.workflow = template_path.string();
    o.search_dirs = {tmp.path() / "no-such-dir"};
    o.env = tmp.env();
    o.context_percent = [this] {
      ++percent_reads;
      return percent;
    };
    o.on_event = [this](const WorkflowEvent& e) {
      events.push_back(e);
      saved_before_event.push_back(state().find("\"contextActionExecuted\": true") !=
                                   std::string::npos);
    };
    return WorkflowService(std::move(o));
  }
  std::string state() const { return test::read_file(worktree / "workflow-state.json"); }
  bool marked() const {
    return state().find("\"contextActionExecuted\": true") != std::string::npos;
  }

  fs::path template_path;
};

std::vector<TaskInput> one_task() {
  return {{"a", "Alpha", std::nullopt}};
}

// kLoopCompactClear started, planned, and its loop given one task: at the sub-step whose
// /compact is pending, its gate not taken yet.
::testing::AssertionResult at_the_sub_step(WorkflowService& s) {
  if (auto r = s.start({}); !r) return ::testing::AssertionFailure() << r.error().message;
  if (auto r = s.advance("planned"); !r) return ::testing::AssertionFailure() << r.error().message;
  if (auto r = s.set_tasks("work", one_task()); !r)
    return ::testing::AssertionFailure() << r.error().message;
  return ::testing::AssertionSuccess();
}

TEST(WorkflowGate, TypedStartAdvanceAndStatusGiveTheStateAndTheDecision) {
  Gate g(kLoopCompactClear);
  auto s = g.service();
  auto started = s.start({});
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_EQ(started->machine->step_id(), "plan");
  EXPECT_EQ(started->gate.action, ContextAction::None);
  auto advanced = s.advance("planned");
  ASSERT_TRUE(advanced) << advanced.error().message;
  EXPECT_EQ(advanced->machine->step_id(), "work");
  auto set = s.set_tasks("work", one_task());
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_EQ(*set, 1u);
  // set_tasks does not take the gate: the sub-step's /compact is pending, and status says so
  // without marking it.
  auto st = s.status();
  ASSERT_TRUE(st);
  EXPECT_EQ(st->machine->current_loop_step()->id, "do");
  EXPECT_EQ(st->gate.action, ContextAction::Compact);
  EXPECT_EQ(st->gate.focus, compact_focus(*st->machine));
  EXPECT_FALSE(g.marked());
  EXPECT_TRUE(g.events.empty());
}

TEST(WorkflowGate, TypedErrorsAreTheReferenceTexts) {
  Gate g(kLoopCompactClear);
  auto s = g.service();
  auto not_started = s.advance("x");
  ASSERT_FALSE(not_started);
  EXPECT_EQ(not_started.error().message, "Workflow not started. Call workflow_start first.");
  ASSERT_FALSE(s.status());
  ASSERT_TRUE(s.start({}));
  auto empty_loop = s.set_tasks("", one_task());
  ASSERT_FALSE(empty_loop);
  EXPECT_EQ(empty_loop.error().message, "loop_id must be a non-empty string");
  auto no_title = s.set_tasks("work", {{"a", "", std::nullopt}});
  ASSERT_FALSE(no_title);
  EXPECT_EQ(no_title.error().message, "Each task must have a non-empty title string");
  auto unknown = s.set_tasks("nope", one_task());
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "Loop 'nope' not found in template");
  auto bad_name = s.start({"no-such-workflow", std::nullopt});
  EXPECT_TRUE(bad_name);  // a running state is continued whatever the call names
}

// A bad argument of a call that may save is reported after the state's own errors, as before
// the typed operations: a worktree without a state says "not started" first.
TEST(WorkflowGate, McpArgumentErrorsComeAfterTheStatesErrors) {
  Gate g(kLoopCompactClear);
  auto s = g.service();
  EXPECT_EQ(s.call("workflow_set_tasks", {{"loop_id", 5}}).text,
            R"({"error":"Workflow not started. Call workflow_start first."})");
  EXPECT_EQ(s.call("workflow_advance", {{"output", 5}}).text,
            R"({"error":"Workflow not started. Call workflow_start first."})");
  // start checks its argument first.
  EXPECT_EQ(s.call("workflow_start", {{"workflow", 5}}).text,
            R"({"error":"workflow must be a string"})");
  g.tmp.write("wt/workflow-state.json", "{not json");
  const std::string broken = s.call("workflow_set_tasks", {{"loop_id", 5}}).text;
  EXPECT_NE(broken.find("workflow-state.json"), std::string::npos) << broken;
  EXPECT_EQ(broken.find("loop_id"), std::string::npos) << broken;
}

// The pending action of a state another client left (here: after set_tasks) is handed out by
// take_gate exactly once: marked, saved, then one event; later gates, status and the MCP status
// see it as done.
TEST(WorkflowGate, TakeGateHandsOutOnceAndRecordsOneEventAfterTheSave) {
  Gate g(kLoopCompactClear);
  auto s = g.service();
  ASSERT_TRUE(at_the_sub_step(s));
  ASSERT_TRUE(g.events.empty());

  auto taken = s.take_gate("ctx-gate");
  ASSERT_TRUE(taken) << taken.error().message;
  ASSERT_TRUE(*taken);
  EXPECT_EQ((*taken)->gate.action, ContextAction::Compact);
  EXPECT_TRUE((*taken)->machine->action_executed());
  EXPECT_TRUE(g.marked());
  ASSERT_EQ(g.events.size(), 1u);
  EXPECT_TRUE(g.saved_before_event[0]);
  EXPECT_EQ(g.events[0].kind, "handed_out");
  EXPECT_EQ(g.events[0].action, "compact");
  EXPECT_EQ(g.events[0].by, "ctx-gate");
  EXPECT_EQ(g.events[0].step, "work");
  EXPECT_EQ(g.events[0].sub_step, "do");
  EXPECT_EQ(g.events[0].task_id, "a");
  EXPECT_EQ(g.events[0].focus, (*taken)->gate.focus);

  auto again = s.take_gate("ctx-run");
  ASSERT_TRUE(again && *again);
  EXPECT_EQ((*again)->gate.action, ContextAction::None);
  EXPECT_EQ((*again)->gate.skipped, ContextAction::None);
  EXPECT_EQ(s.status()->gate.action, ContextAction::None);
  const json status = json::parse(s.call("workflow_status", json::object()).text);
  EXPECT_FALSE(status.contains("contextAction"));
  EXPECT_EQ(status["subStep"], "do");
  EXPECT_EQ(g.events.size(), 1u);

  // Another service on the same worktree (ctx-run's, ctx-gate's) sees it done as well.
  auto other = g.service();
  auto third = other.take_gate("ctx-run");
  ASSERT_TRUE(third && *third);
  EXPECT_EQ((*third)->gate.action, ContextAction::None);
  EXPECT_EQ(g.events.size(), 1u);
}

// advance takes the gate of the position it reaches; a take_gate after it finds nothing.
TEST(WorkflowGate, AdvanceHandsOutOnceAndTakeGateAfterItFindsNothing) {
  Gate g(kLoopCompactClear);
  auto s = g.service();
  ASSERT_TRUE(at_the_sub_step(s));
  ASSERT_TRUE(s.take_gate("ctx-gate"));
  auto finish = s.advance("did a");
  ASSERT_TRUE(finish) << finish.error().message;
  EXPECT_EQ(finish->machine->step_id(), "finish");
  EXPECT_EQ(finish->gate.action, ContextAction::Clear);
  ASSERT_EQ(g.events.size(), 2u);
  EXPECT_EQ(g.events[1].kind, "handed_out");
  EXPECT_EQ(g.events[1].action, "clear");
  EXPECT_EQ(g.events[1].by, "workflow_advance");
  EXPECT_TRUE(g.saved_before_event[1]);
  auto after = s.take_gate("ctx-gate");
  ASSERT_TRUE(after && *after);
  EXPECT_EQ((*after)->gate.action, ContextAction::None);
  EXPECT_EQ(g.events.size(), 2u);
}

// The MCP adapter and the typed operations are one path: the same calls leave the same state
// file, byte for byte, and the same events.
TEST(WorkflowGate, McpCallsAndTypedOperationsLeaveTheSameStateAndEvents) {
  Gate typed(kLoopCompactClear), mcp(kLoopCompactClear);
  auto t = typed.service();
  auto m = mcp.service();
  ASSERT_TRUE(t.start({"", "Do the work"}));
  ASSERT_TRUE(t.advance("planned"));
  ASSERT_TRUE(t.set_tasks("work", one_task()));
  ASSERT_TRUE(t.advance("did a"));
  ASSERT_FALSE(m.call("workflow_start", {{"summary", "Do the work"}}).is_error);
  ASSERT_FALSE(m.call("workflow_advance", {{"output", "planned"}}).is_error);
  ASSERT_FALSE(m.call("workflow_set_tasks",
                      {{"loop_id", "work"}, {"tasks", {{{"id", "a"}, {"title", "Alpha"}}}}})
                   .is_error);
  // set_tasks reaches the sub-step's /compact without taking the gate; the advance out of the
  // sub-step hands out the next step's /clear.
  const json clear = json::parse(m.call("workflow_advance", {{"output", "did a"}}).text);
  EXPECT_EQ(clear["contextAction"], "/clear");

  EXPECT_EQ(typed.state(), mcp.state());
  ASSERT_EQ(typed.events.size(), mcp.events.size());
  ASSERT_EQ(typed.events.size(), 1u);
  EXPECT_EQ(typed.events[0].by, mcp.events[0].by);
  EXPECT_EQ(typed.events[0].action, "clear");
  EXPECT_EQ(mcp.events[0].action, "clear");
}

// A skip (the session below context_min_percent) goes the same way: marked, saved, one
// "skipped" event, no action; the figure is read once, and only where a threshold applies.
TEST(WorkflowGate, ASkipIsMarkedAndRecordedOnceAndTheFigureReadOnlyWhereItCounts) {
  Gate g(kMinPercent);
  auto s = g.service();
  g.percent = 20;
  ASSERT_TRUE(s.start({}));
  EXPECT_EQ(g.percent_reads, 0);  // step a has no threshold
  auto b = s.advance("a done");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->gate.action, ContextAction::None);
  EXPECT_EQ(b->gate.skipped, ContextAction::Compact);
  EXPECT_EQ(g.percent_reads, 1);
  ASSERT_EQ(g.events.size(), 1u);
  EXPECT_EQ(g.events[0].kind, "skipped");
  EXPECT_EQ(g.events[0].action, "compact");
  EXPECT_EQ(g.events[0].percent, 20);
  EXPECT_EQ(g.events[0].min_percent, 50);
  EXPECT_TRUE(g.saved_before_event[0]);
  // Skipped is done: a bigger session later does not bring the action back.
  g.percent = 90;
  auto later = s.take_gate("ctx-gate");
  ASSERT_TRUE(later && *later);
  EXPECT_EQ((*later)->gate.action, ContextAction::None);
  EXPECT_EQ(g.events.size(), 1u);
  EXPECT_EQ(g.percent_reads, 1);
}

// Without a state file take_gate gives nothing and needs no worktree (no lock is taken).
TEST(WorkflowGate, TakeGateWithoutAStateGivesNothing) {
  Gate g(kLoopCompactClear);
  auto s = g.service();
  auto none = s.take_gate("ctx-gate");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_FALSE(*none);
  fs::remove_all(g.worktree);
  auto missing = g.service().take_gate("ctx-gate");
  ASSERT_TRUE(missing) << missing.error().message;
  EXPECT_FALSE(*missing);
  EXPECT_TRUE(g.events.empty());
}

// A finished workflow is given back untouched.
TEST(WorkflowGate, TakeGateLeavesAFinishedWorkflowAlone) {
  Gate g(kMinPercent);
  auto s = g.service();
  g.percent = 90;
  ASSERT_TRUE(s.start({}));
  ASSERT_TRUE(s.advance("a"));  // hands out b's /compact
  ASSERT_TRUE(s.advance("b"));
  ASSERT_TRUE(s.advance("c"));
  const std::string before = g.state();
  auto done = s.take_gate("ctx-gate");
  ASSERT_TRUE(done && *done);
  EXPECT_NE((*done)->machine->state_status(), "running");
  EXPECT_EQ((*done)->gate.action, ContextAction::None);
  EXPECT_EQ(g.state(), before);
  EXPECT_EQ(g.events.size(), 1u);
}

// The SessionStart hook's confirmation goes the gate's way: an action carried out before anyone
// asked for it is marked and saved, then one "confirmed" event is recorded; the gate then has
// nothing left to hand out.
TEST(WorkflowGate, ConfirmMarksAnActionDoneBeforeAnyoneAskedThenRecordsIt) {
  Gate g(kLoopCompactClear);
  auto s = g.service();
  ASSERT_TRUE(at_the_sub_step(s));
  ASSERT_FALSE(g.marked());
  auto c = s.confirm(ContextAction::Compact, "session-start:s1");
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_TRUE(*c);
  EXPECT_TRUE((*c)->confirmed);
  EXPECT_FALSE((*c)->unsaved);
  EXPECT_TRUE((*c)->machine->action_executed());
  EXPECT_TRUE(g.marked());
  ASSERT_EQ(g.events.size(), 1u);
  EXPECT_TRUE(g.saved_before_event[0]);
  EXPECT_EQ(g.events[0].kind, "confirmed");
  EXPECT_EQ(g.events[0].action, "compact");
  EXPECT_EQ(g.events[0].by, "session-start:s1");
  EXPECT_EQ(g.events[0].step, "work");
  EXPECT_EQ(g.events[0].sub_step, "do");
  EXPECT_EQ(g.events[0].task_id, "a");
  auto after = s.take_gate("ctx-gate");
  ASSERT_TRUE(after && *after);
  EXPECT_EQ((*after)->gate.action, ContextAction::None);
  EXPECT_EQ(g.events.size(), 1u);
}

// An action the gate handed out already is confirmed without saving the state again.
TEST(WorkflowGate, ConfirmOfAnActionHandedOutRecordsItWithoutSaving) {
  Gate g(kLoopCompactClear);
  auto s = g.service();
  ASSERT_TRUE(at_the_sub_step(s));
  ASSERT_TRUE(s.take_gate("ctx-gate"));
  const std::string before = g.state();
  auto c = s.confirm(ContextAction::Compact, "session-start:s2");
  ASSERT_TRUE(c && *c);
  EXPECT_TRUE((*c)->confirmed);
  EXPECT_EQ(g.state(), before);
  ASSERT_EQ(g.events.size(), 2u);
  EXPECT_EQ(g.events[0].kind, "handed_out");
  EXPECT_EQ(g.events[1].kind, "confirmed");
  EXPECT_EQ(g.events[1].by, "session-start:s2");
}

// The action happened whatever the state file says: a mark that cannot be saved (here the file
// size limit stops the write) is said, the file keeps its last state, and the confirmation is
// recorded all the same.
TEST(WorkflowGate, ConfirmRecordsTheActionEvenWhenItsMarkCannotBeSaved) {
  Gate g(kLoopCompactClear);
  auto s = g.service();
  ASSERT_TRUE(at_the_sub_step(s));
  const std::string before = g.state();
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  struct rlimit small = old;
  small.rlim_cur = 16;
  const auto previous = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  auto c = s.confirm(ContextAction::Compact, "session-start:s4");
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_TRUE(*c);
  EXPECT_TRUE((*c)->confirmed);
  ASSERT_TRUE((*c)->unsaved);
  EXPECT_NE((*c)->unsaved->find("workflow-state.json"), std::string::npos) << *(*c)->unsaved;
  EXPECT_EQ(g.state(), before);
  ASSERT_EQ(g.events.size(), 1u);
  EXPECT_EQ(g.events[0].kind, "confirmed");
  EXPECT_FALSE(g.saved_before_event[0]);
}

// Another action than the position's, or no state at all: nothing is marked or recorded.
TEST(WorkflowGate, ConfirmOfAnotherActionOrWithoutAStateChangesNothing) {
  Gate g(kLoopCompactClear);
  auto s = g.service();
  auto none = s.confirm(ContextAction::Clear, "session-start:s3");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_FALSE(*none);
  ASSERT_TRUE(at_the_sub_step(s));
  const std::string before = g.state();
  auto other = s.confirm(ContextAction::Clear, "session-start:s3");
  ASSERT_TRUE(other && *other);
  EXPECT_FALSE((*other)->confirmed);
  EXPECT_FALSE((*other)->machine->action_executed());
  EXPECT_EQ(g.state(), before);
  EXPECT_TRUE(g.events.empty());
}

}  // namespace
}  // namespace ctxkit::workflow
