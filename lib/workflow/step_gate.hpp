#pragma once

#include <optional>
#include <string>

#include "workflow/workflow_state.hpp"

namespace ctxkit::workflow {

// What the pre-step gate says before the current step / sub-step.
struct GateDecision {
  // The action to hand out now (None: nothing to do, or skipped).
  ContextAction action = ContextAction::None;
  // The action the step declared but that was skipped because the session's context stood
  // below the step's `context_min_percent` (None when nothing was skipped).
  ContextAction skipped = ContextAction::None;
  // For Compact: the focus text for "/compact <focus>".
  std::string focus;
  // The threshold that applied, if any, and the figure it was compared with.
  std::optional<double> min_percent;
  std::optional<double> percent;
};

// Decides the gate for `machine`'s current position: the pending action (sub-step's context
// beats the step's; nothing once handed out); a `context_min_percent` (the sub-step's, else the
// step's) turns it into a skip when `context_percent` is known and below it (an unknown figure
// hands the action out, as the reference implementation always does). Pure: the caller marks
// the action as handed out (or skipped) and saves.
GateDecision decide_gate(const WorkflowMachine& machine, std::optional<double> context_percent);
// Whether decide_gate needs the context figure here: the sub-step or the step has a
// `context_min_percent` (reading the transcript is skipped otherwise).
bool gate_needs_percent(const WorkflowMachine& machine);

// The focus text for "/compact <focus>" before the current position: the step's (or sub-step's)
// `compact_focus` with {task.id} and {task.title} expanded, else "Next workflow step: <step>
// [/ <sub-step>] [(task <id>: <title>)] - <first line of its instructions>".
std::string compact_focus(const WorkflowMachine& machine);

// The slash command of an action ("/compact", "/clear"; "" for None).
std::string command_of(ContextAction action);

}  // namespace ctxkit::workflow
