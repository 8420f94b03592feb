#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "core/reminder_state.hpp"
#include "store/sqlite_handle.hpp"
#include "util/error.hpp"

namespace ctxkit::store {

// The exact figure the status line was last given for a session.
struct StatusFigure {
  int64_t tokens = 0;
  int64_t window = 0;
  int64_t recorded_at_ms = 0;
};

// The context meter's database (`meter.db` in the state directory): what ctx-remind and
// ctx-status read on every run (reminders fired, the status line's figures, windows seen over
// 200k tokens), one row per (session, agent). Its own file of one table so that loading its
// schema and reading a row cost a hook little, opened with
// exclusive locking (sqlite::Locking::Exclusive): no shared WAL index to rebuild per run; a
// second process waits its turn through the busy timeout. WAL, `synchronous=NORMAL`, schema
// version with migrations, private file and folder, like the state database.
// What the meter database holds for one (session, agent): agent "" is the main session (the
// status line's figure is only kept for it).
struct MeterRow {
  std::optional<core::ReminderState> reminder;
  std::optional<StatusFigure> status;
  bool large_window = false;
  std::string client_version;    // the client release last seen for the session ("" if none)
  std::string model;             // the model last seen
  int64_t compactions = 0;       // compactions seen (PostCompact or SessionStart "compact")
  int64_t reclaimed_tokens = 0;  // the tokens they freed, added up
};

// What was read from the client's state file, with the size and time it had.
struct ClientStateRow {
  int64_t size = 0;
  int64_t mtime_ns = 0;
  std::string hints;  // context::ServerHints as JSON
};

class MeterStore {
 public:
  static constexpr int kSchemaVersion = 2;

  // Opens (creating and migrating as needed) the database at `path`. When it is created and
  // `earlier_state` names a state database of before the meter database (which kept these
  // figures in tables of its own), its figures are copied in, so that an upgrade forgets no
  // reminder fired and no large window seen.
  [[nodiscard]] static Result<MeterStore> open(const std::filesystem::path& path,
                                               int busy_timeout_ms,
                                               const std::filesystem::path& earlier_state = {});
  MeterStore(MeterStore&& other) noexcept = default;
  MeterStore& operator=(MeterStore&& other) noexcept = default;
  MeterStore(const MeterStore&) = delete;
  MeterStore& operator=(const MeterStore&) = delete;
  ~MeterStore() = default;

  // Everything kept for (session, agent), in one read; an empty row when nothing was recorded.
  [[nodiscard]] Result<MeterRow> row(const std::string& session, const std::string& agent);

  // Runs a read-decide-write on the reminder state of (session, agent) inside one
  // BEGIN IMMEDIATE transaction: `decide` gets the current state and returns the state to store,
  // or nullopt to store nothing. Returns what `decide` returned.
  [[nodiscard]] Result<std::optional<core::ReminderState>> update_reminder(
      const std::string& session, const std::string& agent,
      const std::function<
          std::optional<core::ReminderState>(const std::optional<core::ReminderState>&)>& decide);

  // Records the status line's figure for a session (only when it changed).
  [[nodiscard]] Result<void> record_status(const std::string& session, const StatusFigure& figure);

  // Remembers that a reading of (session, agent) exceeded 200,000 tokens (a 1M window).
  [[nodiscard]] Result<void> mark_large_window(const std::string& session,
                                               const std::string& agent);

  // Records the client release and model of a session (main session only; empty ones keep what
  // was kept).
  [[nodiscard]] Result<void> record_client(const std::string& session, const std::string& version,
                                           const std::string& model);

  // Counts one compaction of a session and the tokens it freed.
  [[nodiscard]] Result<void> record_compaction(const std::string& session, int64_t freed_tokens);

  // The cached reading of the client's state file at `path`, if any, and its replacement.
  [[nodiscard]] Result<std::optional<ClientStateRow>> client_state(const std::string& path);
  Result<void> put_client_state(const std::string& path, const ClientStateRow& row);

  // The schema version found in the file (for diagnostics and tests).
  [[nodiscard]] Result<int> user_version();

 private:
  MeterStore(sqlite::Handle db, std::string path);
  [[nodiscard]] Result<void> exec(const char* sql);
  Error error(const std::string& what, int rc) const;
  sqlite::Handle db_;
  std::string path_;
};

}  // namespace ctxkit::store
