#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/locations.hpp"
#include "runner/policy.hpp"
#include "runner/runner.hpp"
#include "util/env.hpp"
#include "util/error.hpp"
#include "workflow/step_gate.hpp"
#include "workflow/task_list.hpp"
#include "workflow/workflow_service.hpp"

namespace ctxkit::runner {

// Where the run stands before a call: the task (a tasks-file task, or a workflow step / loop
// task) and the text the agent gets.
struct Position {
  bool finished = false;  // nothing left to do
  bool workflow_failed = false;
  std::string key;  // identifies the retry unit (a task; a step, sub-step, loop task, iteration)
  std::string task_key;  // the "task" of the context modes (task id; step or step/loop task)
  std::string title;
  std::string work;           // the task text or the step's instructions
  std::string workflow_text;  // the workflow position for the anchor
  OnFail on_fail = OnFail::Abort;
  workflow::ContextAction action = workflow::ContextAction::None;
  std::string focus;
  ContextMode mode = ContextMode::Continuous;  // the task's own mode, else the run's
  int max_attempts = 3;  // the task's max_iterations, else max_task_iterations
  Budget budget;         // the task's own budget
};

// The workflow as the runner's source of work: the same service and gate as the MCP server, on
// the state file of the run's project (`RunOptions::project`) and the workflow it names
// (`RunOptions::workflow`). The options and locations are held by reference and must outlive
// the driver. Errors are values whose message names the workflow call that failed.
class WorkflowDriver {
 public:
  // `loop_tasks` (the tasks file's tasks) are given to a loop step reached without tasks.
  WorkflowDriver(const RunOptions& o, const util::Env& env, const core::Locations& loc,
                 std::vector<workflow::TaskSpec> loop_tasks);

  // Starts the workflow unless its state already exists (with the run's summary, if any). An
  // action the start hands out is kept for the next position().
  [[nodiscard]] Result<void> ensure_started();

  // Advances the workflow past the current step with `output`; `session` (the runner's, or
  // empty) is the one whose figure decides a context_min_percent gate of the next step. An
  // action the advance hands out is kept for the next position().
  [[nodiscard]] Result<void> advance(const std::string& output, const std::string& session,
                                     const core::ContextConfig& context);

  // The position the workflow stands at: finished (and whether it failed) when it is not
  // running; else the step (sub-step, loop task, iteration), its instructions, and the context
  // action due before it (taken from the gate as ctx-gate takes it, `session`'s figure deciding
  // a context_min_percent, or the one the last start or advance handed out). A loop reached
  // without tasks first gets the loop tasks. An error when the state disappeared or does not
  // load.
  [[nodiscard]] Result<Position> position(const std::string& session, const util::Env& env,
                                          const core::Config& cfg);

  // The workflow as the run names it.
  std::string name() const { return opts_.workflow; }

 private:
  // The session whose figure a context_min_percent gate reads when the service hands out an
  // action: the runner's current session, set by advance() and position().
  struct GateSession {
    std::string id;
    core::ContextConfig context;
  };

  static workflow::ServiceOptions make_options(const RunOptions& o, const util::Env& env,
                                               const core::Locations& loc,
                                               std::shared_ptr<const GateSession> session);
  [[nodiscard]] Result<workflow::WorkflowMachine> load();
  void note_answer(const workflow::WorkflowAnswer& answer);

  const RunOptions& opts_;
  const core::Locations& loc_;
  std::vector<workflow::TaskSpec> loop_tasks_;
  std::shared_ptr<GateSession> figure_ =
      std::make_shared<GateSession>();  // before service_: its options hold it
  workflow::WorkflowService service_;
  workflow::ContextAction handed_out_ = workflow::ContextAction::None;
};

}  // namespace ctxkit::runner
