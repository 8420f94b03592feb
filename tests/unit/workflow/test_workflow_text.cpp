#include <gtest/gtest.h>

#include "workflow/workflow_text.hpp"

namespace ctxkit::workflow {
namespace {
using ojson = nlohmann::ordered_json;

TEST(WorkflowText, AStatusNamesWhereTheWorkflowIsAndItsInstructionsEscaped) {
  const ojson s = ojson::parse(R"({"status": "running", "step": "impl", "stepType": "loop",
    "progress": {"currentStep": 2, "totalSteps": 4},
    "task": {"id": "t1", "title": "Parse\u001b[2J it", "index": 0, "total": 3},
    "instructions": "Do it.\nThen \u0007stop."})");
  EXPECT_EQ(answer_text("workflow_status", s),
            "Workflow running: step impl (2 of 4, loop), task t1: Parse\\x1b[2J it (1 of 3)\n"
            "\nDo it.\nThen \\x07stop.\n");
}

TEST(WorkflowText, AContextActionComesBeforeTheStep) {
  EXPECT_EQ(answer_text("workflow_advance",
                        ojson::parse(R"({"contextAction": "/compact", "focus": "the parser"})")),
            "Before this step: run /compact the parser\n"
            "Then run `ctx-workflow status` for the step's instructions.\n");
  EXPECT_EQ(answer_text("workflow_status", ojson::parse(R"({"contextAction": "/clear",
              "message": "ctxkit's supervisor clears\nat the turn's end"})")),
            "ctxkit's supervisor clears\nat the turn's end\n");
}

TEST(WorkflowText, ListsSetTasksAndContext) {
  EXPECT_EQ(answer_text("workflow_list", ojson::parse(R"({"workflows": []})")),
            "no workflow templates found\n");
  EXPECT_EQ(answer_text("workflow_list", ojson::parse(R"({"workflows": [{"name": "ex",
              "description": "An example", "path": "/t/ex.yaml", "error": "bad"}]})")),
            "ex                   An example (does not load: bad)\n    /t/ex.yaml\n");
  EXPECT_EQ(answer_text("workflow_set_tasks", ojson::parse(R"({"tasksSet": 3})"), "impl"),
            "3 tasks set for impl\n");
  EXPECT_EQ(answer_text("workflow_context", ojson::parse(R"({"plan": "a\nb"})")),
            "plan:\na\nb\n\n");
}

RecordedEvent event(const std::string& kind, const std::string& step, const std::string& action,
                    const std::string& at, const std::string& by) {
  RecordedEvent e;
  e.event.kind = kind;
  e.event.step = step;
  e.event.action = action;
  e.event.by = by;
  e.at = at;
  return e;
}

TEST(WorkflowText, TheFateOfAStepsActionIsItsLastHandOutAndWhatFollowed) {
  const std::vector<RecordedEvent> log{
      event("handed_out", "impl", "clear", "T1", "workflow_advance"),
      event("handed_out", "impl", "compact", "T2", "workflow_advance"),
      event("confirmed", "other", "compact", "T3", "session-start:x"),
      event("confirmed", "impl", "compact", "T4", "session-start:y"),
      event("executed", "", "compact", "T5", "supervisor"),
      event("executed", "", "clear", "T6", "supervisor"),
  };
  EXPECT_EQ(action_fate(log, "impl"),
            "Context action (compact): handed out at T2 by workflow_advance; confirmed at T4 by "
            "session-start:y; executed at T5 by supervisor");
  EXPECT_EQ(action_fate(log, "review"), "");
}

}  // namespace
}  // namespace ctxkit::workflow
