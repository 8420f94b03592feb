#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ctxkit::runner {

// How the runner trades continuity for clean context (issue: the fresh-context runner).
// Auto: continuous while the session is small; a fresh session (with hybrid's summary) for the
// next task once the last call's context reaches fresh_at, a compaction between a task's
// iterations once it reaches compact_at (decide_auto).
enum class ContextMode { Continuous, FreshPerTask, FreshPerIteration, Hybrid, Auto };

std::optional<ContextMode> parse_context_mode(std::string_view text);
std::string_view to_string(ContextMode mode);

// The mode a task runs in: its own (the tasks file's context_mode) when it has one, else the run's.
ContextMode task_mode(ContextMode run_mode, std::optional<ContextMode> own);

// Whether a task's anchor and summaries are hybrid's: the previous task's summary carried over.
bool carries_summary(ContextMode mode);

// Auto's thresholds, in percent of the context figure (the meter's basis: usable by default).
struct AutoThresholds {
  int fresh_at = 50;    // a new task starts a fresh session from here on
  int compact_at = 75;  // a task's session is compacted between its iterations from here on
};
enum class AutoAction { Keep, Fresh, Compact };
std::string_view to_string(AutoAction action);
// Auto's decision before a call, from the last call's context figure (`percent`; nullopt: none
// known, e.g. a new session): Fresh for a new task at or past fresh_at; Compact for a further
// iteration of the same task at or past compact_at; Keep otherwise.
AutoAction decide_auto(std::optional<int> percent, bool new_task, const AutoThresholds& t);

// A run's or a task's budget: tokens (all four kinds) and cost (USD); nullopt: no limit.
struct Budget {
  std::optional<uint64_t> max_tokens;
  std::optional<double> max_cost_usd;
  bool any() const { return max_tokens || max_cost_usd; }
};
struct Spent {
  uint64_t tokens = 0;
  double cost_usd = 0;
};
// A budget reached: which ("tokens" or "cost"), its limit, what was spent and by how much it was
// passed (0 when reached exactly).
struct BudgetOverrun {
  std::string budget;
  double limit = 0, spent = 0, over = 0;
};
// Whether `spent` reached a limit of `budget` (so that the next call would pass it); tokens are
// checked first.
std::optional<BudgetOverrun> budget_reached(const Budget& budget, const Spent& spent);

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
  // Who asked for the compaction: "workflow compact" or "auto".
  std::string compact_why;
};

// The policy table: which call starts a session, resumes it, or compacts it first.
//   have_session    a session of this run exists and may be resumed
//   new_task        this call is the first of a task (workflow: a new step or loop task)
//   workflow_clear  the workflow handed out /clear for this step
//   workflow_compact the workflow handed out /compact for this step
//   auto_action      auto's decision (decide_auto); Keep for the other modes
// Auto without a decision runs as continuous.
SessionPlan plan_session(ContextMode mode, bool have_session, bool new_task, bool workflow_clear,
                         bool workflow_compact, AutoAction auto_action = AutoAction::Keep);

// The user's `[compact] at` (core::CompactConfig), reached by the last call's context before a
// call that resumes its session: the session is compacted first (why "[compact] at"), or with
// `rollover` the call starts a fresh session (reason "[compact] at"). A plan that starts a fresh
// session or compacts already is left as it is.
void apply_compact_at(SessionPlan& plan, bool rollover);

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

// What the runner does when a call ended on a rate or usage limit (or an overload).
enum class OnLimit { Wait, Stop };
std::optional<OnLimit> parse_on_limit(std::string_view text);
std::string_view to_string(OnLimit o);
struct LimitPolicy {
  OnLimit on_limit = OnLimit::Wait;
  int64_t backoff_seconds =
      60;  // the first wait when no reset time was given; doubled each time in a row
  int64_t max_wait_seconds = 21600;  // the ceiling of one wait
};
struct LimitWait {
  bool stop = false;    // the run stops (exit 3) instead of waiting
  int64_t seconds = 0;  // how long to wait before the same call again
  std::string why;      // "reset" (until the time given), "backoff", or why it stops
};
// After a call that ended on a limit: wait until `reset_epoch` when it is given (at least 1 s),
// else backoff_seconds * 2^(in_a_row - 1) up to the ceiling; stop under on_limit stop or when the
// reset lies past the ceiling. `in_a_row`: 1 for the first limit since a call that got through.
LimitWait decide_limit_wait(const LimitPolicy& policy, std::optional<int64_t> reset_epoch,
                            int64_t now_epoch, int in_a_row);

// What the runner does after a call of a position.
enum class AfterCall {
  LimitWait,  // the call ended on a limit: not an attempt; wait (or stop), then the same call again
  Done,       // the position is done
  Again,      // another attempt at it (attempts remain)
  Retry,      // on_fail retry: the attempts start over
  Skip,       // on_fail skip (also a BLOCKED task under on_fail retry)
  Abort,      // on_fail abort: the run ends
};
std::string_view to_string(AfterCall a);
struct CallOutcome {
  bool ok = false;     // the call ended with a result that is no error
  bool limit = false;  // it ended on a rate or usage limit or an overload (classify_limit)
  TaskReport report = TaskReport::None;
  int attempt = 1;       // this call's attempt at the position
  int max_attempts = 3;  // max_task_iterations (or the task's own max_iterations)
  OnFail on_fail = OnFail::Abort;
};
AfterCall decide_after_call(const CallOutcome& c);

}  // namespace ctxkit::runner
