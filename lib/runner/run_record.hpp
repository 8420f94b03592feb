#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "runner/run_state.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"

namespace ctxkit::runner {

// A run's folder (<project>/.ctxkit/runs/<run id>/, private): run.json (the run's state, replaced
// atomically after every iteration), events.jsonl (one event a line), anchors/NNNN.md (each
// session's anchor, byte for byte), tasks/<task>/iter-NNN.prompt.md and .result.json,
// tasks/<task>/summary.md, task_summary.md (the latest), the STOP / PAUSE control files, and
// run.lock (held by the ctx-run that drives the run).
class RunRecord {
 public:
  RunRecord() = default;
  RunRecord(std::filesystem::path folder, RunState initial)
      : state(std::move(initial)), folder_(std::move(folder)) {}

  // Loads a run folder, refusing one that is not a ctxkit run of this user (a link, another
  // owner, no run.json, a run.json that is not ours).
  [[nodiscard]] static Result<RunRecord> load(const std::filesystem::path& folder);
  // run.json of the run folder as it is, refused as load() refuses it.
  [[nodiscard]] static Result<nlohmann::ordered_json> read_json(
      const std::filesystem::path& folder);

  // Creates the folder (0700, links refused) and writes run.json; an existing folder is an error.
  [[nodiscard]] Result<void> create();
  // Replaces run.json with `state`.
  [[nodiscard]] Result<void> save();
  // Appends one line to events.jsonl.
  [[nodiscard]] Result<void> append_event(const std::string& line);
  // Replaces the file `relative` (below the folder; parents created) with `data`.
  [[nodiscard]] Result<void> write_file(const std::string& relative, std::string_view data);
  // Reads the file `relative` below the folder (an absolute name or one with ".." is refused).
  [[nodiscard]] Result<std::string> read_file(const std::string& relative) const;

  // Takes the run's lock (run.lock in the folder) for as long as this record lives, or the
  // process: one ctx-run drives a run at a time. Held by another process: an error of kind Busy.
  [[nodiscard]] Result<void> lock();
  // Whether a ctx-run holds the run in `folder` now (a run.json saying "running" without one was
  // interrupted).
  static bool in_use(const std::filesystem::path& folder);

  const std::filesystem::path& folder() const { return folder_; }
  std::filesystem::path file() const { return folder_ / "run.json"; }

  // `id` as one safe path component (characters outside [A-Za-z0-9._-] become '_', "." and
  // ".." and "" become "_").
  static std::string safe_name(const std::string& id);

  RunState state;

 private:
  std::filesystem::path folder_;
  std::optional<util::FileLock> lock_;
  std::set<std::filesystem::path>
      made_;  // folders below folder_ this record has made (or found) already
};

// run.json's layout: {"ctxkit": "run", "version": 1, "run_id", "project", "mode",
// "mode_origin", "source", "status", "started_at_ms", "ended_at_ms", "iterations", "session",
// "previous_summary", "attempts", "pending_action", "usage", "tokens_total", "cost_usd",
// "options", "task_specs", "tasks", and once they arise "session_totals", "stopped_on",
// "refused_call"}; a task: {"id", "title", "status", "iterations", "resets", "compactions",
// "anchoring_tokens", "usage", "sessions", "started_at_ms", "ended_at_ms", "wall_ms", and once
// they arise "context_mode", "git_head", "cost_usd", "reason"}. Each object's keys are written
// in that order, and then the keys it does not know, kept as they were read.
nlohmann::ordered_json run_state_json(const RunState& state);
// Reads run.json's text by content: a missing key or a value of another type is the default
// (an object of the wrong type is absent, an entry of a list that is not an object a default
// record in its place).
RunState run_state_from_json(const nlohmann::ordered_json& j);

// run.json's "source" ({"kind", and what it has of "workflow", "name", "tasks_file"}).
nlohmann::ordered_json source_json(const RunSource& source);
// run.json's "stopped_on" ({"scope", and what it has of "budget", "limit", "spent", "over",
// "task_id", "kind", "message", "why", "reset_at"}).
nlohmann::ordered_json stop_json(const StopRecord& stop);

// A usage object of run.json ({"input", "cache_creation", "cache_read", "output"}).
nlohmann::ordered_json usage_json(const claude::TokenUsage& u);
// run.json lies in the project: a count that is not a non-negative integer counts as 0.
claude::TokenUsage usage_from_json(const nlohmann::ordered_json& j);

}  // namespace ctxkit::runner
