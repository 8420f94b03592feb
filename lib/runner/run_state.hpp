#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "claude/stream_result.hpp"
#include "workflow/task_list.hpp"
#include "workflow/workflow_template.hpp"

namespace ctxkit::runner {

// The state of a run, as run.json keeps it (RunRecord reads and writes the file: see
// run_record.hpp for its layout). Everything here comes from a file in the project: a value of
// the wrong type reads as its default, keys this version does not know are kept in `extra`.

// The session the run is in.
struct SessionRecord {
  std::string id;
  std::string task_key;     // the task (position's task key) that started it
  int anchor_epoch = 0;     // anchors/NNNN.md: one per session started or re-anchored
  std::string anchor_file;  // "" when the session has no anchor
  // The context of the session's last call, for auto's next decision (absent before a call).
  std::optional<uint64_t> context_tokens;
  std::optional<uint64_t> context_window;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
};

// A context action the workflow handed out for the position `key`, carried out on --resume when
// the run stopped before it.
struct PendingAction {
  std::string key;
  // Written "compact" or "clear"; any other word reads as a compaction, as it always did.
  workflow::ContextAction action = workflow::ContextAction::Compact;
  std::string focus;
};

// Where a task of the run is; run.json writes the words of to_string(). A word this version
// does not know reads as pending.
enum class TaskStatus { Pending, Running, Done, Skipped, Failed };
const char* to_string(TaskStatus s);  // "pending", "running", "done", "skipped", "failed"
std::optional<TaskStatus> parse_task_status(std::string_view word);
// Done, skipped or failed: the run does not come back to it.
inline bool is_finished(TaskStatus s) {
  return s == TaskStatus::Done || s == TaskStatus::Skipped || s == TaskStatus::Failed;
}

// The call a limit refused: the next call of the position `key` makes it again.
struct RefusedCall {
  std::string key;
  bool fresh = false;  // it started a fresh session
};

// One task of the run (a tasks-file task; a workflow step or loop task, by its task key).
struct TaskRecord {
  std::string id;
  std::string title;
  TaskStatus status = TaskStatus::Pending;
  int iterations = 0;
  int resets = 0;
  int compactions = 0;
  uint64_t anchoring_tokens = 0;
  claude::TokenUsage usage;
  std::vector<std::string> sessions;
  std::optional<int64_t> started_at_ms;
  std::optional<int64_t> ended_at_ms;
  int64_t wall_ms = 0;
  std::optional<std::string> context_mode;  // set when the task starts
  std::optional<std::string> git_head;      // the commit the task started from
  std::optional<double> cost_usd;           // set by its first call
  std::optional<std::string> reason;        // why it was skipped or failed
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();

  static TaskRecord make(std::string id, std::string title, TaskStatus status) {
    TaskRecord t;
    t.id = std::move(id);
    t.title = std::move(title);
    t.status = status;
    return t;
  }
};

// What the run runs: a tasks file, or a workflow (with the tasks file that fills its loops).
struct RunSource {
  std::string kind;                       // "tasks" or "workflow"
  std::optional<std::string> workflow;    // the workflow template's path
  std::optional<std::string> name;        // the workflow's name
  std::optional<std::string> tasks_file;  // the tasks file's absolute path
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
};

// The options the run was started with; a --resume goes on with them (but for a budget given
// again and the client to run). A key run.json lacks is absent: the option of the command line
// holds.
struct RunOptionsRecord {
  std::optional<int> max_iterations;
  std::optional<int> max_task_iterations;
  std::optional<std::string> on_fail;
  std::optional<bool> reanchor;
  std::optional<uint64_t> max_tokens;  // the run's budget; absent: none (written as null)
  std::optional<double> max_cost_usd;  // the run's budget; absent: none (written as null)
  std::optional<int> fresh_at;
  std::optional<int> compact_at;
  std::optional<std::string> claude_bin;  // what ran, named on --resume when it differs
  std::optional<std::vector<std::string>> claude_args;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
};

// A task of the tasks file as the run started with it (its budgets as a --resume read them).
struct TaskSpecRecord {
  workflow::TaskSpec spec;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
};

// Which budget or limit stopped the run. A budget: scope "run" or "task" (with task_id), which
// budget ("tokens", "cost"), its limit, what was spent and by how much it was passed. A limit:
// scope "limit", the limit's kind, the client's message, why the run stopped rather than waited,
// and when the limit resets when the client said.
struct StopRecord {
  std::string scope;
  std::optional<std::string> budget;
  std::optional<double> limit, spent, over;
  std::optional<std::string> task_id;
  std::optional<std::string> kind, message, why, reset_at;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
};

struct RunState {
  std::string run_id;
  std::string project;
  std::string mode;
  std::string mode_origin;
  RunSource source;
  std::string status;  // running, paused, completed, stopped, aborted, failed
  int64_t started_at_ms = 0;
  std::optional<int64_t> ended_at_ms;
  int iterations = 0;
  std::optional<SessionRecord> session;
  // The run's own session, put aside while a task in a mode of its own runs in sessions it started,
  // and taken back by the next task in the run's mode (an empty id: the run had none yet).
  std::optional<SessionRecord> run_session;
  std::string previous_summary;
  std::map<std::string, int> attempts;  // calls made of each position since it last moved on
  std::optional<PendingAction> pending_action;
  claude::TokenUsage usage;
  uint64_t tokens_total = 0;
  double cost_usd = 0;
  RunOptionsRecord options;
  std::vector<TaskSpecRecord> task_specs;  // a tasks file's tasks, in the order they run
  std::vector<TaskRecord> tasks;
  // What each session's client has reported in total (from 2.1.277), by session id.
  std::optional<std::map<std::string, claude::SessionTotals>> session_totals;
  std::optional<StopRecord> stopped_on;
  std::optional<RefusedCall> refused_call;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();

  // The session's id, "" without one.
  std::string session_id() const { return session ? session->id : std::string(); }
  // The task record `id`, or null.
  TaskRecord* find_task(const std::string& id) {
    for (auto& t : tasks)
      if (t.id == id) return &t;
    return nullptr;
  }
};

}  // namespace ctxkit::runner
