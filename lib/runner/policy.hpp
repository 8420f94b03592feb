#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ctxkit::runner {

// How the runner trades continuity for clean context (issue: the fresh-context runner).
enum class ContextMode { Continuous, FreshPerTask, FreshPerIteration, Hybrid };

std::optional<ContextMode> parse_context_mode(std::string_view text);
std::string_view to_string(ContextMode mode);

// What a call does with the session: starts a fresh one or resumes the current one.
struct SessionPlan {
  bool fresh = false;
  // Why a fresh session starts: "start" (no session yet), "mode" (the context mode asks for it),
  // "workflow clear" (the workflow step asks for /clear); empty when resuming.
  std::string reason;
  // Whether the workflow's /compact runs on the session before the call (never on a fresh one).
  bool compact = false;
  // A compact the workflow asked for that a fresh session makes pointless.
  bool compact_skipped = false;
};

// The policy table: which call starts a session, resumes it, or compacts it first.
//   have_session    a session of this run exists and may be resumed
//   new_task        this call is the first of a task (workflow: a new step or loop task)
//   workflow_clear  the workflow handed out /clear for this step
//   workflow_compact the workflow handed out /compact for this step
SessionPlan plan_session(ContextMode mode, bool have_session, bool new_task, bool workflow_clear, bool workflow_compact);

// How the agent reports a task: the last line of its final message that starts with the marker.
//   CTXKIT-TASK: DONE
//   CTXKIT-TASK: BLOCKED <reason>
inline constexpr std::string_view kDoneMarker = "CTXKIT-TASK:";

enum class TaskReport { None, Done, Blocked };
struct ParsedReport {
  TaskReport report = TaskReport::None;
  std::string reason;  // BLOCKED's reason
};
// Finds the last marker line (leading spaces, '*'/'`' emphasis and a trailing '.' tolerated;
// case-insensitive keywords). A marker with another word counts as none.
ParsedReport parse_task_report(std::string_view final_message);

// The final message without its marker lines (what a workflow step records as its output).
std::string strip_task_report(std::string_view final_message);

// What happens when a task ran out of iterations (templates' on_fail).
enum class OnFail { Retry, Skip, Abort };
std::optional<OnFail> parse_on_fail(std::string_view text);
std::string_view to_string(OnFail f);

}  // namespace ctxkit::runner
