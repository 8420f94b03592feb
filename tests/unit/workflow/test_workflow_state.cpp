#include <gtest/gtest.h>

#include "workflow/js_compat.hpp"
#include "workflow/workflow_state.hpp"

namespace ctxkit::workflow {
namespace {
using ojson = nlohmann::ordered_json;

WorkflowTemplate load(const std::string& yaml) {
  auto t = parse_template(yaml);
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return t ? *t : WorkflowTemplate{};
}

const char* kWithContext = R"(
name: context-test
description: Test context management

steps:
  - id: step_with_clear
    type: action
    context: clear
    instructions: Clear context first
  - id: step_with_compact
    type: action
    context: compact
    instructions: Compact context first
  - id: step_no_context
    type: action
    instructions: Normal step
)";

std::vector<TaskInput> one_task() {
  return {{"t1", "Task 1", std::nullopt}};
}

// ---- The plan's Task 4 (Context Management suite), one test per case. ----

TEST(ContextManagement, ReturnsNullWhenStepHasNoContextAction) {
  auto m =
      WorkflowMachine::start(load("name: test\ndescription: Test\nsteps:\n  - id: step1\n    type: "
                                  "action\n    instructions: Do something\n"));
  EXPECT_EQ(m.pending_action(), ContextAction::None);
}

TEST(ContextManagement, ReturnsClearWhenStepHasContextClear) {
  auto m = WorkflowMachine::start(load(kWithContext));
  EXPECT_EQ(m.pending_action(), ContextAction::Clear);
}

TEST(ContextManagement, ReturnsCompactWhenStepHasContextCompact) {
  auto m = WorkflowMachine::start(load(kWithContext));
  m.advance("First step done");
  EXPECT_EQ(m.pending_action(), ContextAction::Compact);
}

TEST(ContextManagement, ReturnsNullAfterActionIsMarkedExecuted) {
  auto m = WorkflowMachine::start(load(kWithContext));
  m.mark_action_executed();
  EXPECT_EQ(m.pending_action(), ContextAction::None);
}

TEST(ContextManagement, SubStepContextTakesPrecedenceOverMainStep) {
  auto m = WorkflowMachine::start(load(R"(
name: test
description: Test
loops:
  step1:
    - id: sub1
      context: clear
      instructions: Sub step with clear
    - id: sub2
      instructions: Sub step without
steps:
  - id: step1
    type: loop
    context: compact
)"));
  ASSERT_TRUE(m.set_tasks("step1", one_task()));
  EXPECT_EQ(m.pending_action(), ContextAction::Clear);
}

TEST(ContextManagement, ReturnsNullWhenNeitherSubStepNorStepHasContext) {
  auto m =
      WorkflowMachine::start(load("name: test\ndescription: Test\nloops:\n  step1:\n    - id: "
                                  "sub1\n      instructions: Sub step\n"
                                  "steps:\n  - id: step1\n    type: loop\n"));
  ASSERT_TRUE(m.set_tasks("step1", one_task()));
  EXPECT_EQ(m.pending_action(), ContextAction::None);
}

TEST(ContextManagement, MarkUpdatesStateFlagToTrue) {
  auto m = WorkflowMachine::start(load(kWithContext));
  m.mark_action_executed();
  EXPECT_EQ(m.state()["contextActionExecuted"], true);
}

TEST(ContextManagement, FlagInitializesToFalse) {
  auto m = WorkflowMachine::start(load(kWithContext));
  EXPECT_EQ(m.state()["contextActionExecuted"], false);
}

TEST(ContextManagement, FlagResetsWhenAdvancingToNextStep) {
  auto m = WorkflowMachine::start(load(kWithContext));
  m.mark_action_executed();
  ASSERT_TRUE(m.action_executed());
  m.advance("Done");
  EXPECT_EQ(m.state()["contextActionExecuted"], false);
}

TEST(ContextManagement, FlagResetsWhenAdvancingLoopSubSteps) {
  auto m = WorkflowMachine::start(load(R"(
name: test
description: Test
loops:
  step1:
    - id: sub1
      context: clear
      instructions: Sub 1
    - id: sub2
      context: compact
      instructions: Sub 2
steps:
  - id: step1
    type: loop
)"));
  ASSERT_TRUE(m.set_tasks("step1", one_task()));
  m.mark_action_executed();
  m.advance("Sub 1 done");
  EXPECT_EQ(m.state()["contextActionExecuted"], false);
  EXPECT_EQ(m.pending_action(), ContextAction::Compact);
}

TEST(ContextManagement, FlagResetsForEachRalphIteration) {
  auto m = WorkflowMachine::start(
      load("name: test\ndescription: Test\nsteps:\n  - id: refine\n    type: ralph\n    n: 3\n"
           "    context: compact\n    instructions: Refine\n"));
  m.mark_action_executed();
  m.advance("Iter 1");
  EXPECT_EQ(m.state()["contextActionExecuted"], false);
  EXPECT_EQ(m.pending_action(), ContextAction::Compact);
}

TEST(ContextManagement, TrueFlagIsPreservedWhenRestoringState) {
  const auto tmpl = load(kWithContext);
  auto m1 = WorkflowMachine::start(tmpl);
  m1.mark_action_executed();
  auto m2 = WorkflowMachine::from_state(m1.state(), &tmpl);
  ASSERT_TRUE(m2);
  EXPECT_EQ(m2->state()["contextActionExecuted"], true);
  EXPECT_EQ(m2->pending_action(), ContextAction::None);
}

TEST(ContextManagement, FalseFlagIsPreservedWhenRestoringState) {
  const auto tmpl = load(kWithContext);
  auto m1 = WorkflowMachine::start(tmpl);
  auto m2 = WorkflowMachine::from_state(m1.state(), &tmpl);
  ASSERT_TRUE(m2);
  EXPECT_EQ(m2->state()["contextActionExecuted"], false);
  EXPECT_EQ(m2->pending_action(), ContextAction::Clear);
}

// ---- The design's test table. ----

TEST(ContextDesignTable, ClearStepGivesClearOnceThenInstructions) {
  auto m = WorkflowMachine::start(load(kWithContext));
  ASSERT_EQ(m.pending_action(), ContextAction::Clear);  // first call
  m.mark_action_executed();
  EXPECT_EQ(m.pending_action(), ContextAction::None);  // second call: instructions
  EXPECT_EQ(m.status()["instructions"], "Clear context first");
}

TEST(ContextDesignTable, CompactStepGivesCompactOnceThenInstructions) {
  auto m = WorkflowMachine::start(load(kWithContext));
  m.mark_action_executed();
  m.advance("x");
  ASSERT_EQ(m.pending_action(), ContextAction::Compact);
  m.mark_action_executed();
  EXPECT_EQ(m.pending_action(), ContextAction::None);
  EXPECT_EQ(m.status()["instructions"], "Compact context first");
}

TEST(ContextDesignTable, StepWithoutContextGivesInstructionsAtOnce) {
  auto m = WorkflowMachine::start(load(kWithContext));
  m.advance("x");
  m.advance("y");
  EXPECT_EQ(m.step_id(), "step_no_context");
  EXPECT_EQ(m.pending_action(), ContextAction::None);
}

TEST(ContextDesignTable, EachActionFiresOncePerTaskAndSubStep) {
  auto m = WorkflowMachine::start(load(R"(
name: t
description: d
loops:
  work:
    - id: a
      instructions: "A {task.id}"
    - id: b
      context: clear
      instructions: "B {task.title}"
steps:
  - id: work
    type: loop
    context: compact
)"));
  ASSERT_TRUE(m.set_tasks("work", {{"t1", "One", std::nullopt}, {"t2", "Two", std::nullopt}}));
  std::vector<std::string> seen;
  for (int i = 0; i < 4; ++i) {
    const auto a = m.pending_action();
    seen.push_back(std::string(to_string(a)) + ":" + m.state()["subStep"].get<std::string>());
    m.mark_action_executed();
    EXPECT_EQ(m.pending_action(), ContextAction::None);
    m.advance("out");
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"compact:a", "clear:b", "compact:a", "clear:b"}));
  EXPECT_EQ(m.state_status(), "complete");
}

// ---- Lanes's moves. ----

TEST(WorkflowMachine, InitialStateHasLanesKeysInLanesOrder) {
  auto m = WorkflowMachine::start(load(kWithContext));
  std::vector<std::string> keys;
  for (auto it = m.state().begin(); it != m.state().end(); ++it)
    if (!it.value().is_discarded()) keys.push_back(it.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"status", "step", "stepType", "tasks", "outputs", "artefacts",
                                      "contextActionExecuted", "workflow_definition"}));
  const std::string text = m.serialize();
  EXPECT_EQ(text.rfind("{\n  \"status\": \"running\",\n  \"step\": \"step_with_clear\",\n  "
                       "\"stepType\": \"action\",\n  \"tasks\": {},\n"
                       "  \"outputs\": {},\n  \"artefacts\": [],\n  \"contextActionExecuted\": "
                       "false,\n  \"workflow_definition\": {\n"
                       "    \"name\": \"context-test\",",
                       0),
            0u)
      << text;
  EXPECT_NE(text.back(), '\n');
}

TEST(WorkflowMachine, RalphFirstStepStartsAtIterationOne) {
  auto m =
      WorkflowMachine::start(load("name: t\ndescription: d\nsteps:\n  - id: r\n    type: ralph\n   "
                                  " n: 2\n    instructions: Go\n"));
  EXPECT_EQ(m.state()["ralphIteration"], 1);
  auto s = m.status();
  EXPECT_EQ(s["ralphIteration"], 1);
  EXPECT_EQ(s["ralphTotal"], 2);
  EXPECT_EQ(s["instructions"],
            "Go\n\n[Ralph Loop - Iteration 1 of 2]\nThis task will be repeated 2 times to "
            "iteratively improve the result. After you "
            "complete this iteration, you will receive the SAME TASK again to refine your work. "
            "Each iteration is an opportunity to "
            "improve quality.");
  m.advance("one");
  EXPECT_EQ(m.status()["instructions"],
            "Go\n\n[Ralph Loop - Iteration 2 of 2]\nYou are receiving THE SAME TASK again to "
            "refine and improve your previous result. "
            "This is intentional - you should work on this task again, NOT skip it. Your goal is "
            "to iterate and improve the quality "
            "of the work from iteration 1.");
  m.advance("two");
  EXPECT_EQ(m.state_status(), "complete");
  EXPECT_EQ(m.context(), ojson::parse(R"({"r.1":"one","r.2":"two"})"));
}

TEST(WorkflowMachine, LoopOutputsAreKeyedStepTaskSubStep) {
  auto m = WorkflowMachine::start(load(
      "name: t\ndescription: d\nloops:\n  l:\n    - id: a\n      instructions: x\n"
      "steps:\n  - id: p\n    type: action\n    instructions: plan\n  - id: l\n    type: loop\n"));
  m.advance("planned");
  ASSERT_TRUE(m.set_tasks("l", {{"t1", "One", "first"}}));
  EXPECT_EQ(m.status()["task"], ojson::parse(R"({"index":0,"id":"t1","title":"One","total":1})"));
  m.advance("done");
  EXPECT_EQ(m.context(), ojson::parse(R"({"p":"planned","l.t1.a":"done"})"));
  EXPECT_EQ(m.state()["tasks"]["l"][0]["status"], "done");
  EXPECT_EQ(m.state()["tasks"]["l"][0]["description"], "first");
}

TEST(WorkflowMachine, TasksSetBeforeTheLoopStartItOnArrival) {
  auto m = WorkflowMachine::start(load(
      "name: t\ndescription: d\nloops:\n  l:\n    - id: a\n      context: compact\n      "
      "instructions: x\n"
      "steps:\n  - id: p\n    type: action\n    instructions: plan\n  - id: l\n    type: loop\n"));
  ASSERT_TRUE(m.set_tasks("l", one_task()));
  EXPECT_FALSE(m.state().contains("task"));
  m.advance("planned");
  EXPECT_EQ(m.state()["subStep"], "a");
  EXPECT_EQ(m.state()["tasks"]["l"][0]["status"], "in_progress");
  EXPECT_EQ(m.pending_action(), ContextAction::Compact);
}

TEST(WorkflowMachine, LoopStepContextAppliesBeforeEverySubStepWithoutOne) {
  auto m =
      WorkflowMachine::start(load("name: t\ndescription: d\nloops:\n  l:\n    - id: a\n      "
                                  "instructions: x\n    - id: b\n      instructions: y\n"
                                  "steps:\n  - id: l\n    type: loop\n    context: compact\n"));
  EXPECT_EQ(m.pending_action(), ContextAction::Compact);  // at the loop, before tasks
  m.mark_action_executed();
  ASSERT_TRUE(m.set_tasks("l", one_task()));
  EXPECT_EQ(m.pending_action(), ContextAction::Compact);  // first sub-step: pending again
  m.mark_action_executed();
  m.advance("a");
  EXPECT_EQ(m.pending_action(), ContextAction::Compact);  // second sub-step
}

TEST(WorkflowMachine, AdvancingAtLoopWithoutTasksSkipsItAndKeysOutputByLoopId) {
  auto m = WorkflowMachine::start(load(
      "name: t\ndescription: d\nloops:\n  l:\n    - id: a\n      instructions: x\n"
      "steps:\n  - id: l\n    type: loop\n  - id: z\n    type: action\n    instructions: end\n"));
  m.advance("nothing to loop");
  EXPECT_EQ(m.step_id(), "z");
  EXPECT_EQ(m.context(), ojson::parse(R"({"l":"nothing to loop"})"));
}

TEST(WorkflowMachine, EmptyTaskListAtTheLoopSkipsIt) {
  auto m = WorkflowMachine::start(load(
      "name: t\ndescription: d\nloops:\n  l:\n    - id: a\n      instructions: x\n"
      "steps:\n  - id: l\n    type: loop\n  - id: z\n    type: action\n    instructions: end\n"));
  ASSERT_TRUE(m.set_tasks("l", {}));
  EXPECT_EQ(m.step_id(), "z");
}

TEST(WorkflowMachine, AdvanceAfterCompletionStoresNothing) {
  auto m = WorkflowMachine::start(
      load("name: t\ndescription: d\nsteps:\n  - id: a\n    type: action\n    instructions: x\n"));
  m.advance("one");
  const auto before = m.serialize();
  auto s = m.advance("again");
  EXPECT_EQ(m.serialize(), before);
  EXPECT_EQ(
      s, ojson::parse(
             R"({"status":"complete","step":"a","stepType":"action","agent":null,"delegate":false,
    "instructions":"Workflow complete.","progress":{"currentStep":1,"totalSteps":1},"artefacts":[]})"));
}

TEST(WorkflowMachine, SetTasksForUnknownLoopFails) {
  auto m = WorkflowMachine::start(load(kWithContext));
  auto r = m.set_tasks("nope", one_task());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "Loop 'nope' not found in template");
}

TEST(WorkflowMachine, OnlyTaskIdAndTitleAreExpandedIdFirstAndLiterally) {
  auto m = WorkflowMachine::start(
      load("name: t\ndescription: d\nloops:\n  l:\n    - id: a\n      instructions: \"{task.id} "
           "{task.title} {task.description} {task.index}\"\n"
           "steps:\n  - id: l\n    type: loop\n"));
  ASSERT_TRUE(m.set_tasks("l", {{"x$$y{task.title}", "T$&{task.id}", "desc"}}));
  // {task.id} first, then {task.title}: an id holding "{task.title}" gets the title.
  EXPECT_EQ(m.status()["instructions"],
            "x$$yT$&{task.id} T$&{task.id} {task.description} {task.index}");
}

TEST(WorkflowMachine, AgentDelegationPrefixAndProgress) {
  auto m = WorkflowMachine::start(load(
      "name: t\ndescription: d\nagents:\n  coder:\n    description: c\nloops:\n  l:\n    - id: a\n"
      "      agent: coder\n      instructions: Do {task.title}\n    - id: b\n      instructions: "
      "Check\n"
      "steps:\n  - id: l\n    type: loop\n"));
  ASSERT_TRUE(m.set_tasks("l", {{"t1", "One", std::nullopt}, {"t2", "Two", std::nullopt}}));
  auto s = m.status();
  EXPECT_EQ(s["agent"], "coder");
  EXPECT_EQ(s["delegate"], true);
  EXPECT_EQ(s["instructions"], "SPAWN the 'coder' sub-agent to handle this step:\n\nDo One");
  EXPECT_EQ(
      s["progress"],
      ojson::parse(
          R"({"currentStep":1,"totalSteps":1,"completedTasks":0,"totalTasks":2,"currentTaskProgress":"Task 1/2, Sub-step 1/2"})"));
  EXPECT_EQ(s["subStepIndex"], 0);
  EXPECT_EQ(s["totalSubSteps"], 2);
  // Key order of a loop answer.
  std::vector<std::string> keys;
  for (auto it = s.begin(); it != s.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"status", "step", "stepType", "agent", "delegate",
                                            "instructions", "progress", "artefacts", "task",
                                            "subStep", "subStepIndex", "totalSubSteps"}));
}

// completedTasks counts a status of exactly "done", wherever a task's file put the key.
TEST(WorkflowMachine, CompletedTasksCountsDoneStatusesWhereverTheKeyStands) {
  auto m = WorkflowMachine::start(
      load("name: t\ndescription: d\nloops:\n  l:\n    - id: a\n      instructions: Do\n"
           "steps:\n  - id: l\n    type: loop\n"));
  ASSERT_TRUE(m.set_tasks("l", {{"t1", "One", std::nullopt},
                                {"t2", "Two", std::nullopt},
                                {"t3", "Three", std::nullopt},
                                {"t4", "Four", std::nullopt},
                                {"t5", "Five", std::nullopt}}));
  m.advance("one");
  m.advance("two");
  ojson state = m.state();
  auto& tasks = state["tasks"]["l"];
  ASSERT_EQ(tasks[0]["status"], "done");
  ASSERT_EQ(tasks[1]["status"], "done");
  // The status key first, a status that only starts with "done", one that is not a string.
  tasks[2] = ojson::parse(R"({"status":"done","id":"t3","title":"Three"})");
  tasks[3]["status"] = "done!";
  tasks[4]["status"] = true;
  auto r = WorkflowMachine::from_state(state, nullptr);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status()["progress"]["completedTasks"], 3);
  EXPECT_EQ(r->status()["progress"]["totalTasks"], 5);
}

// status_text() writes what JSON.stringify(status(), null, 2) writes, at every position of
// every kind of step, with and without the advance reminder.
TEST(WorkflowMachine, StatusTextIsTheStatusDocumentStringified) {
  auto expect_same = [](const WorkflowMachine& m, const std::string& where) {
    const ojson s = m.status();
    EXPECT_EQ(m.status_text(false), js::stringify(s, 2)) << where;
    ojson reminded = s;
    if (s["status"] == "running")
      reminded["instructions"] = s["instructions"].get<std::string>() + kAdvanceReminder;
    EXPECT_EQ(m.status_text(true), js::stringify(reminded, 2)) << where;
  };
  const std::string yaml =
      "name: t\ndescription: d\nagents:\n  coder:\n    description: c\nloops:\n  l:\n"
      "    - id: a\n      agent: coder\n      instructions: \"Do {task.title} ({task.id})\"\n"
      "    - id: b\n      context: compact\n      instructions: Check\n"
      "steps:\n  - id: first\n    type: action\n    instructions: \"Say \\\"hi\\\"\\tthen\\n"
      "go \\u00e9\"\n  - id: l\n    type: loop\n  - id: r\n    type: ralph\n    n: 2\n"
      "    instructions: Refine\n  - id: last\n    type: action\n    agent: coder\n"
      "    instructions: End\n";
  auto m = WorkflowMachine::start(load(yaml));
  expect_same(m, "start");
  ASSERT_TRUE(m.set_tasks("l", {{"t\"1", "One \"quoted\"\n", std::nullopt},
                                {"t2", "Deux \xc3\xa9t\xc3\xa9", std::string("desc")}}));
  for (int i = 0; m.state_status() == "running" && i < 20; ++i) {
    expect_same(m, "advance " + std::to_string(i));
    m.mark_action_executed();
    expect_same(m, "marked " + std::to_string(i));
    m.advance("out " + std::to_string(i));
  }
  expect_same(m, "complete");
  // A state from a file: artefacts, a task carrying a "total" of its own, a failed workflow.
  ojson st = WorkflowMachine::start(load(yaml)).state();
  st["artefacts"] = ojson::parse(R"(["a.md", {"path": "b \"c\"", "n": 1.5}])");
  st["step"] = "l";
  st["stepType"] = "loop";
  st["tasks"]["l"] = ojson::parse(R"([{"id":"x","title":"X","status":"in_progress"}])");
  st["task"] = ojson::parse(R"({"index":0,"total":7,"id":"x","title":"X","extra":[]})");
  st["subStep"] = "b";
  auto loaded = WorkflowMachine::from_state(st, nullptr);
  ASSERT_TRUE(loaded) << loaded.error().message;
  expect_same(*loaded, "from a file");
  st["status"] = "failed";
  auto failed = WorkflowMachine::from_state(st, nullptr);
  ASSERT_TRUE(failed) << failed.error().message;
  expect_same(*failed, "failed");
}

TEST(WorkflowMachine, EveryChangeCountsARevisionAndACopyKeepsIt) {
  auto m = WorkflowMachine::start(load(kWithContext));
  const auto r0 = m.revision();
  m.mark_action_executed();
  m.set_summary("a summary");
  m.advance("done");
  EXPECT_EQ(m.revision(), r0 + 3);
  const WorkflowMachine copy = m;
  EXPECT_EQ(copy.revision(), m.revision());
  (void)m.status();
  (void)m.serialize();
  EXPECT_EQ(m.revision(), r0 + 3);  // reading changes nothing
}

TEST(WorkflowMachine, SummaryIsTrimmedCleanedAndCut) {
  auto m = WorkflowMachine::start(load(kWithContext));
  m.set_summary("   ");
  EXPECT_FALSE(m.summary());
  m.set_summary("  fix\tthe\x01 bug  ");
  EXPECT_EQ(m.summary(), "fixthe bug");
  EXPECT_EQ(start_summary("   "), std::nullopt);
  const std::string long_text(120, 'a');
  const auto cut = start_summary(long_text);
  ASSERT_TRUE(cut);
  EXPECT_EQ(*cut, std::string(97, 'a') + "...");
  // UTF-16 units: 60 two-unit characters are 120 units.
  std::string emoji;
  for (int i = 0; i < 60; ++i) emoji += "\xF0\x9F\x98\x80";
  const auto cut2 = start_summary(emoji);
  ASSERT_TRUE(cut2);
  EXPECT_EQ(*cut2, emoji.substr(0, 48 * 4) + "...");  // 96 units kept, the half pair dropped
  EXPECT_EQ(start_summary(std::string(100, 'b')), std::string(100, 'b'));
}

TEST(WorkflowMachine, RestoreUsesTheSnapshotNotTheFallback) {
  auto m = WorkflowMachine::start(load(kWithContext));
  const auto other = load(
      "name: other\ndescription: d\nsteps:\n  - id: x\n    type: action\n    instructions: y\n");
  auto r = WorkflowMachine::from_state_text(m.serialize(), &other);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->workflow().name, "context-test");
  EXPECT_EQ(r->serialize(), m.serialize());
}

TEST(WorkflowMachine, RestoreWithoutSnapshotUsesTheFallback) {
  auto st = ojson::parse(
      R"({"status":"running","step":"x","stepType":"action","tasks":{},"outputs":{},"artefacts":[],"contextActionExecuted":false})");
  const auto other = load(
      "name: other\ndescription: d\nsteps:\n  - id: x\n    type: action\n    instructions: y\n");
  auto r = WorkflowMachine::from_state(st, &other);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status()["instructions"], "y");
  EXPECT_FALSE(WorkflowMachine::from_state(st, nullptr));
}

TEST(WorkflowMachine, RestoreRejectsAStateThatDoesNotFit) {
  const auto tmpl = load(kWithContext);
  auto bad_step = WorkflowMachine::from_state(
      ojson::parse(R"({"status":"running","step":"gone","stepType":"action"})"), &tmpl);
  ASSERT_FALSE(bad_step);
  EXPECT_EQ(bad_step.error().message, "Step 'gone' not found in template");
  EXPECT_FALSE(WorkflowMachine::from_state_text("{not json", &tmpl));
  EXPECT_FALSE(WorkflowMachine::from_state(
      ojson::parse(R"({"status":"paused","step":"step_no_context","stepType":"action"})"), &tmpl));
}

TEST(WorkflowMachine, UndefinedKeysKeepTheirPlaceLikeJavaScript) {
  auto m = WorkflowMachine::start(
      load("name: t\ndescription: d\nloops:\n  l:\n    - id: a\n      instructions: x\n"
           "steps:\n  - id: l\n    type: loop\n  - id: z\n    type: action\n    instructions: end\n"
           "  - id: l2\n    type: action\n    instructions: end\n"));
  ASSERT_TRUE(m.set_tasks("l", one_task()));
  m.advance("a");  // to z: task, subStep, ralphIteration become undefined
  const auto text = m.serialize();
  EXPECT_EQ(text.find("\"task\""), std::string::npos);
  EXPECT_EQ(text.find("\"ralphIteration\""), std::string::npos);
  auto round = WorkflowMachine::from_state_text(text, nullptr);
  ASSERT_TRUE(round);
  EXPECT_EQ(round->serialize(), text);
}

TEST(WorkflowMachine, ArrayIndexKeysComeFirstAsInJavaScript) {
  auto m = WorkflowMachine::start(
      load("name: t\ndescription: d\nsteps:\n  - id: b\n    type: action\n    instructions: x\n"
           "  - id: \"7\"\n    type: action\n    instructions: y\n  - id: c\n    type: action\n    "
           "instructions: z\n"));
  m.advance("first");
  m.advance("second");
  const auto text = m.serialize();
  EXPECT_LT(text.find("\"7\": \"second\""), text.find("\"b\": \"first\"")) << text;
}

// ---- Typed accessors of the position. ----

TEST(WorkflowMachineAccessors, CurrentTaskIsTheLoopTaskTheStateHolds) {
  auto m =
      WorkflowMachine::start(load("name: test\ndescription: Test\nloops:\n  step1:\n    - id: "
                                  "sub1\n      instructions: Sub step\n"
                                  "steps:\n  - id: step1\n    type: loop\n"
                                  "  - id: after\n    type: action\n    instructions: A\n"));
  EXPECT_FALSE(m.current_task());
  ASSERT_TRUE(m.set_tasks("step1", {{"t1", "Task 1", std::nullopt}, {"t2", "Task 2", "Two"}}));
  auto task = m.current_task();
  ASSERT_TRUE(task);
  EXPECT_EQ(task->index, 0);
  EXPECT_EQ(task->id, "t1");
  EXPECT_EQ(task->title, "Task 1");
  m.advance("one done");
  task = m.current_task();
  ASSERT_TRUE(task);
  EXPECT_EQ(task->index, 1);
  EXPECT_EQ(task->id, "t2");
  EXPECT_EQ(task->title, "Task 2");
  m.advance("two done");
  EXPECT_EQ(m.step_id(), "after");
  EXPECT_FALSE(m.current_task());
}

TEST(WorkflowMachineAccessors, HasTasksOnlyForALoopWithAStoredNonEmptyList) {
  auto m =
      WorkflowMachine::start(load("name: test\ndescription: Test\nloops:\n  step1:\n    - id: "
                                  "sub1\n      instructions: Sub step\n"
                                  "steps:\n  - id: step1\n    type: loop\n"
                                  "  - id: after\n    type: action\n    instructions: A\n"));
  EXPECT_FALSE(m.has_tasks("step1"));
  EXPECT_FALSE(m.has_tasks("other"));
  ASSERT_TRUE(m.set_tasks("step1", one_task()));
  EXPECT_TRUE(m.has_tasks("step1"));
  EXPECT_FALSE(m.has_tasks("other"));
}

}  // namespace
}  // namespace ctxkit::workflow
