#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "claude/stream_result.hpp"

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
  std::string action;  // "compact" or "clear"
  std::string focus;
};

// The call a limit refused: the next call of the position `key` makes it again.
struct RefusedCall {
  std::string key;
  bool fresh = false;  // it started a fresh session
};

// One task of the run (a tasks-file task; a workflow step or loop task, by its task key).
struct TaskRecord {
  std::string id;
  std::string title;
  std::string status;  // pending, running, done, skipped, failed
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

  static TaskRecord make(std::string id, std::string title, std::string status) {
    TaskRecord t;
    t.id = std::move(id);
    t.title = std::move(title);
    t.status = std::move(status);
    return t;
  }
};

struct RunState {
  std::string run_id;
  std::string project;
  std::string mode;
  std::string mode_origin;
  nlohmann::ordered_json source = nlohmann::ordered_json::object();  // kind, workflow, tasks_file
  std::string status;  // running, paused, completed, stopped, aborted, failed
  int64_t started_at_ms = 0;
  std::optional<int64_t> ended_at_ms;
  int iterations = 0;
  std::optional<SessionRecord> session;
  std::string previous_summary;
  std::map<std::string, int> attempts;  // calls made of each position since it last moved on
  std::optional<PendingAction> pending_action;
  claude::TokenUsage usage;
  uint64_t tokens_total = 0;
  double cost_usd = 0;
  // The options the run was started with (max_iterations, max_task_iterations, on_fail,
  // reanchor, max_tokens, max_cost_usd, fresh_at, compact_at, claude_bin, claude_args).
  nlohmann::ordered_json options = nlohmann::ordered_json::object();
  nlohmann::ordered_json task_specs = nlohmann::ordered_json::array();
  std::vector<TaskRecord> tasks;
  // What each session's client has reported in total (from 2.1.277), by session id.
  std::optional<std::map<std::string, claude::SessionTotals>> session_totals;
  std::optional<nlohmann::ordered_json> stopped_on;  // which budget or limit stopped the run
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
