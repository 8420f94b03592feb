#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "store/sqlite_handle.hpp"
#include "util/error.hpp"

namespace ctxkit::store {

// One session in a line of work (trim and rollover derive new sessions from old ones).
struct SessionRecord {
  std::string session_id;
  std::string parent_id;   // empty for the first session of a line
  std::string line_id;     // the first session of the line of work
  int64_t number = 1;      // 1, 2, 3, ... within the line
  std::string project;     // the project folder name under ~/.claude/projects
  std::string transcript;  // the transcript path
  std::string cwd;
  std::string started_at, ended_at, end_reason;  // end_reason: trim, rollover, completed
  std::optional<int64_t> context_at_end;         // percent when it ended
  std::optional<int64_t> tokens_saved;           // trim only
  std::string summary;                           // rollover only
};

// A rollover prepared inside a supervised session, carried out when the turn ends.
struct PendingRollover {
  std::string supervisor;  // the supervisor's token (CTXKIT_SUPERVISOR)
  std::string session_id;  // the session that rolls over
  std::string new_session_id;
  std::string prompt_path;  // the rendered continuation prompt
  std::string cwd;          // where the new session starts
  bool ready = false;       // the Stop hook saw the turn end
  // What the supervisor does: "rollover" (a new session with the continuation prompt), or a
  // workflow step's context action: "clear" (a new session whose first prompt is the re-anchor)
  // or "compact" (`/compact <focus>` headless on the session, then resume it with the re-anchor).
  std::string action = "rollover";
  std::string focus;  // compact: the focus text
};

// One recorded event: a runner run's (source "run", scope = the run id) or a workflow context
// action's (source "workflow", scope = the worktree). `data` is the event as a JSON object.
struct EventRow {
  int64_t at_ms = 0;
  std::string source, scope, kind, data;
};

// A runner run, as the report lists it (the run folder holds the rest).
struct RunRow {
  std::string run_id, project, folder, mode, status;
  int64_t started_at_ms = 0;
  std::optional<int64_t> ended_at_ms;
  std::string totals = "{}";  // JSON: the run's totals when it last stopped
};

// A fact that must survive compaction: of a line of work (scope_kind "line", scope = the line's
// first session id; trims and rollovers inherit it) or of a project (scope_kind "project", scope =
// the client's folder name of the project).
struct PinRow {
  int64_t id = 0;
  std::string scope_kind, scope, text;
  int64_t created_at_ms = 0;
  std::string session_id;  // the session that pinned it ("" from a shell outside a session)
};

// What one compaction kept of the pins: `detail` is a JSON array of {"id", "text", "kept"};
// `restored` the pins re-injected with the next prompt after it (`restored_at_ms`: when, in rows
// of earlier versions; the hook now delivers them without writing here).
struct PinCheckRow {
  int64_t id = 0;
  std::string session_id, line_id;
  int64_t at_ms = 0;
  std::string trigger;  // manual, auto
  int64_t total = 0, kept = 0;
  std::string detail = "[]";
  int64_t restored = 0;
  std::optional<int64_t> restored_at_ms;
};

// ctxkit's state database (`state.db` in the state directory): lineage, the supervisors' queue,
// the event log and runs (the figures hooks read on every run are in MeterStore). WAL, a busy
// timeout, `synchronous=NORMAL`, schema version in `PRAGMA user_version` with migrations
// (sqlite_open.hpp). The file and its directory are created private (0600/0700). Safe for many
// processes at once, a fresh database included. Errors carry Kind::Corrupt, Kind::ReadOnly or
// Kind::Busy where that is the cause.
class StateStore {
 public:
  // The schema version this build writes.
  static constexpr int kSchemaVersion = 5;

  // Opens (creating and migrating as needed) the database at `path`.
  [[nodiscard]] static Result<StateStore> open(const std::filesystem::path& path,
                                               int busy_timeout_ms);
  StateStore(StateStore&& other) noexcept = default;
  StateStore& operator=(StateStore&& other) noexcept = default;
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;
  ~StateStore() = default;

  // A session's record, if any.
  [[nodiscard]] Result<std::optional<SessionRecord>> session(const std::string& session_id);
  // Records that `child` was derived from `parent` in one transaction: the parent is added if it
  // is not known yet (as the first of its line) and marked ended with `end_reason`,
  // `context_at_end` and `tokens_saved`; the child is added to the parent's line with the next
  // number. Returns the child as stored.
  [[nodiscard]] Result<SessionRecord> record_derivation(const SessionRecord& parent,
                                                        const SessionRecord& child,
                                                        const std::string& end_reason,
                                                        std::optional<int64_t> context_at_end,
                                                        std::optional<int64_t> tokens_saved,
                                                        const std::string& ended_at);
  // Records a session the first time any hook sees it (nothing if it is known).
  [[nodiscard]] Result<void> record_session_seen(const SessionRecord& session);

  // Stores a pending rollover for a supervisor (replacing an older one).
  [[nodiscard]] Result<void> put_pending_rollover(const PendingRollover& p);
  // The pending rollover of a supervisor, if any.
  [[nodiscard]] Result<std::optional<PendingRollover>> pending_rollover(
      const std::string& supervisor);
  // Marks the pending rollover of (supervisor, session) ready; returns whether there was one. A
  // pending workflow action (clear, compact) is marked ready by any session of that supervisor,
  // and takes that session as the one it acts on.
  [[nodiscard]] Result<bool> mark_rollover_ready(const std::string& supervisor,
                                                 const std::string& session_id);
  // Removes the pending rollover of a supervisor (carried out).
  [[nodiscard]] Result<void> clear_pending_rollover(const std::string& supervisor);

  // Appends an event to the event log.
  [[nodiscard]] Result<void> append_event(const EventRow& event);
  // The events of (source, scope), oldest first.
  [[nodiscard]] Result<std::vector<EventRow>> events(const std::string& source,
                                                     const std::string& scope);
  // Every event with from_ms <= at_ms <= to_ms, oldest first, at most `limit`.
  [[nodiscard]] Result<std::vector<EventRow>> events_between(int64_t from_ms, int64_t to_ms,
                                                             size_t limit);
  // Records a run (replacing its earlier row).
  [[nodiscard]] Result<void> put_run(const RunRow& run);
  // A run's row, if any.
  [[nodiscard]] Result<std::optional<RunRow>> run(const std::string& run_id);

  // Pins (state_store_pins.cpp). The line of work of a session: its recorded line_id, else its
  // own id (a session not recorded yet starts its line).
  [[nodiscard]] Result<std::string> line_of(const std::string& session_id);
  // Adds a pin, or finds the same text already pinned in that scope (returns its id and sets
  // `existed`). A scope that already holds `max_per_scope` pins refuses another (Kind::Invalid).
  [[nodiscard]] Result<int64_t> add_pin(const PinRow& pin, int64_t max_per_scope,
                                        bool* existed = nullptr);
  // The pins of a line of work and of a project, oldest first, at most `limit` (a store that holds
  // more is read no further).
  [[nodiscard]] Result<std::vector<PinRow>> pins(const std::string& line_id,
                                                 const std::string& project, int64_t limit);
  // How many pins the line of work and the project hold together.
  [[nodiscard]] Result<int64_t> count_pins(const std::string& line_id, const std::string& project);
  // Removes a pin by id, only if it belongs to the line or the project; returns whether it did.
  [[nodiscard]] Result<bool> remove_pin(int64_t id, const std::string& line_id,
                                        const std::string& project);
  // Records what a compaction kept; returns the row's id.
  [[nodiscard]] Result<int64_t> add_pin_check(const PinCheckRow& check);
  // The newest check of a session, if any.
  [[nodiscard]] Result<std::optional<PinCheckRow>> last_pin_check(const std::string& session_id);
  // Every check of a line of work, oldest first.
  [[nodiscard]] Result<std::vector<PinCheckRow>> pin_checks_of_line(const std::string& line_id);

  // The sessions whose parent is `session_id`.
  [[nodiscard]] Result<std::vector<SessionRecord>> children(const std::string& session_id);

  // The schema version found in the file (for diagnostics and tests).
  [[nodiscard]] Result<int> user_version();

 private:
  StateStore(sqlite::Handle db, std::string path);
  [[nodiscard]] Result<void> exec(const char* sql);
  Error error(const std::string& what, int rc) const;
  sqlite::Handle db_;
  std::string path_;
};

// Moves a database that SQLite reports as corrupt (and its -wal/-shm files) aside to
// "<name>.corrupt-<UTC stamp>", so a fresh one can be created without destroying evidence.
// Only renames if `path` is still the same file (inode) that was found corrupt.
[[nodiscard]] Result<std::filesystem::path> quarantine_database(const std::filesystem::path& path,
                                                                uint64_t inode);

// The inode of `path`, or 0 if it does not exist.
uint64_t file_inode(const std::filesystem::path& path);

}  // namespace ctxkit::store
