#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"
#include "workflow/workflow_template.hpp"

namespace ctxkit::workflow {

// A task of a loop step, as workflow_set_tasks gives it.
struct TaskInput {
  std::string id;
  std::string title;
  std::optional<std::string> description;
};

// The task a loop stands at, as the state holds it.
struct CurrentTask {
  long index = 0;  // 0-based, in the loop's task list
  std::string id;
  std::string title;
};

// The workflow state machine of the reference implementation (its `WorkflowState` and the
// moves between steps, sub-steps, tasks and ralph iterations), including the context-action
// flag: the sub-step's `context` beats the step's, and the flag resets on a new step, sub-step,
// task and ralph iteration. The state is kept as the JSON document the state file holds, in the
// reference implementation's key order, so that a state written by either side resumes on the
// other. Pure: no I/O.
class WorkflowMachine {
 public:
  // A fresh state at the template's first step (createInitialState + start()).
  static WorkflowMachine start(WorkflowTemplate tmpl);
  // Restores a machine from a state document. The template is the state's own
  // `workflow_definition` when it has one, else `fallback`; an error when neither is usable or
  // the state does not fit the template (unknown step, sub-step not in its loop, wrong types).
  [[nodiscard]] static Result<WorkflowMachine> from_state(nlohmann::ordered_json state,
                                                          const WorkflowTemplate* fallback);
  // Parses a state file's text and restores it (see from_state).
  [[nodiscard]] static Result<WorkflowMachine> from_state_text(std::string_view text,
                                                               const WorkflowTemplate* fallback);

  // The context action due before the current step / sub-step, or None when there is none or
  // it was already handed out (getContextActionIfNeeded).
  ContextAction pending_action() const;
  // The action the current step / sub-step declares, handed out or not.
  ContextAction declared_action() const;
  // Records that the current action was handed out (markContextActionExecuted).
  void mark_action_executed();
  bool action_executed() const;

  // The status answer (getStatus): status, step, stepType, agent, delegate, instructions,
  // progress, artefacts, and task / subStep / subStepIndex / totalSubSteps or ralphIteration /
  // ralphTotal.
  nlohmann::ordered_json status() const;
  // The status answer's text, JSON.stringify(status(), null, 2), written without building the
  // document; with `reminder`, a running workflow's instructions end with kAdvanceReminder.
  std::string status_text(bool reminder) const;
  // Stores `tasks` (status "pending") for loop `loop_id`; when the workflow stands at that loop
  // and has not started it, starts its first task and sub-step (or skips an empty loop). Error:
  // "Loop '<id>' not found in template".
  [[nodiscard]] Result<void> set_tasks(const std::string& loop_id,
                                       const std::vector<TaskInput>& tasks);
  // Stores `output` under the current output key and moves on. After completion it stores
  // nothing. Returns status().
  nlohmann::ordered_json advance(const std::string& output);
  // The outputs so far, in the order they were stored.
  nlohmann::ordered_json context() const;
  // Stores a summary (trim, control characters removed, at most 100 UTF-16 units); a blank
  // one is not stored.
  void set_summary(std::string_view summary);

  // Accessors for the gate and the re-anchor.
  const WorkflowTemplate& workflow() const { return tmpl_; }
  std::string state_status() const;  // "running" | "complete" | "failed"
  std::string step_id() const;
  StepType step_type() const;
  const WorkflowStep& current_step() const;
  // The current sub-step, or nullptr outside a started loop.
  const LoopStep* current_loop_step() const;
  // The current task {index, id, title} or null.
  nlohmann::ordered_json task() const;
  // The current task, typed; nullopt outside a loop task.
  std::optional<CurrentTask> current_task() const;
  // Whether tasks are stored for loop `loop_id` (a non-empty list).
  bool has_tasks(std::string_view loop_id) const;
  std::optional<long> ralph_iteration() const;
  std::optional<std::string> summary() const;
  // The current step's instructions as status() gives them (placeholders expanded, agent
  // delegation line, ralph iteration note), without the advance reminder.
  std::string instructions() const;
  // The stored output added last, with its key, if any.
  std::optional<std::pair<std::string, std::string>> latest_output() const;

  // How many times this machine (or the one it was copied from) was changed: a copy taken at
  // revision r is still equal to the original while the original is at r.
  uint64_t revision() const { return revision_; }

  // The state document (undefined members are discarded values).
  const nlohmann::ordered_json& state() const { return state_; }
  // The state file's text: JSON.stringify(state, null, 2).
  std::string serialize() const;

 private:
  WorkflowMachine(WorkflowTemplate tmpl, nlohmann::ordered_json state)
      : tmpl_(std::move(tmpl)), state_(std::move(state)) {}
  static nlohmann::ordered_json initial_state(const WorkflowTemplate& tmpl);
  bool has(const char* key) const;
  // The state's member `key` (a null value when there is none).
  const nlohmann::ordered_json& field(std::string_view key) const;
  void unset(const char* key);
  nlohmann::ordered_json& tasks_of(const std::string& loop_id);
  const nlohmann::ordered_json* current_tasks() const;
  int sub_step_index() const;
  const std::vector<LoopStep>& loop_steps() const;
  void init_loop_iteration();
  void advance_to_next_step();
  void advance_within_loop();
  std::string output_key() const;
  std::string agent() const;
  struct Progress;
  Progress progress_figures() const;
  nlohmann::ordered_json progress() const;

  WorkflowTemplate tmpl_;
  nlohmann::ordered_json state_;
  uint64_t revision_ = 0;
};

// The advance reminder appended to running instructions by workflow_status, workflow_start and
// workflow_advance.
inline constexpr const char* kAdvanceReminder =
    "\n\nIMPORTANT: When you have completed this step, you MUST call workflow_advance with a "
    "summary of what you accomplished.";

// The summary as workflow_start takes it: trimmed; longer than 100 UTF-16 units becomes the
// first 97 and "..."; then set_summary's own cleaning. nullopt when blank.
std::optional<std::string> start_summary(std::string_view raw);

}  // namespace ctxkit::workflow
