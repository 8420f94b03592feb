#include "store/meter_store.hpp"

#include <sqlite3.h>
#include <sys/stat.h>

#include "store/sqlite_open.hpp"
#include "store/sqlite_stmt.hpp"
#include "util/fs.hpp"

namespace ctxkit::store {
namespace fs = std::filesystem;

namespace {

using sqlite::Stmt;

// Each migration takes the schema from version i to i + 1.
const char* const kMigrations[] = {
    // 0 -> 1: one row per (session, agent): the last reminder fired, the status line's figure
    // (agent "" only), whether a reading over 200k tokens was seen.
    "CREATE TABLE IF NOT EXISTS meter ("
    "  session_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT '',"
    "  reminder_tier INTEGER, reminder_at_ms INTEGER,"
    "  status_tokens INTEGER, status_window INTEGER, status_at_ms INTEGER,"
    "  large_window INTEGER NOT NULL DEFAULT 0,"
    "  PRIMARY KEY (session_id, agent_id)) WITHOUT ROWID;",
    // 1 -> 2: what the client's own state file (~/.claude.json) says of compaction, kept with
    // the size and time of the file it was read from; per session, the client release and model
    // last seen, and the compactions and the tokens they freed.
    "CREATE TABLE IF NOT EXISTS client_state ("
    "  path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,"
    "  hints TEXT NOT NULL) WITHOUT ROWID;"
    "ALTER TABLE meter ADD COLUMN client_version TEXT;"
    "ALTER TABLE meter ADD COLUMN model TEXT;"
    "ALTER TABLE meter ADD COLUMN compactions INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE meter ADD COLUMN reclaimed_tokens INTEGER NOT NULL DEFAULT 0;",
};
static_assert(std::size(kMigrations) == MeterStore::kSchemaVersion);
const sqlite::Schema kSchema{"meter database", kMigrations, {}};

// Copies the figures a state database of before the meter database kept (tables reminders,
// status_figures, window_facts) into a new meter database, keeping what was written meanwhile.
// Best effort: a state database that is missing, a link, locked or without those tables leaves
// the new one as it is. It is only read, and never waited for: a hook does not wait on a
// database it does not need (the connection's busy timeout, `busy_timeout_ms`, is 0 meanwhile).
void copy_earlier_figures(sqlite3* db, const fs::path& state, int busy_timeout_ms) {
  struct stat st {};
  if (::lstat(state.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  sqlite3_busy_timeout(db, 0);
  struct Restore {
    sqlite3* db;
    int ms;
    ~Restore() { sqlite3_busy_timeout(db, ms); }
  } restore{db, busy_timeout_ms};
  {
    // Attached with the connection's own flags (no link followed) and, since only `main` holds
    // the exclusive lock, in the usual shared mode beside the programs using it.
    Stmt attach(db, "ATTACH DATABASE ?1 AS earlier");
    if (attach.prepare_rc() != SQLITE_OK) return;
    attach.bind(1, util::resolve_above(state, state.parent_path()).string());
    if (attach.step() != SQLITE_DONE) return;
  }
  // A deferred transaction: the write lock is taken on the meter database alone (which this
  // connection holds already), the state database is only read (in WAL mode, beside a writer).
  // ("WHERE true" tells SQLite's parser the ON CONFLICT belongs to the INSERT.)
  const char* copy =
      "BEGIN;"
      "INSERT INTO main.meter(session_id, agent_id, reminder_tier, reminder_at_ms)"
      "  SELECT session_id, agent_id, tier, fired_at_ms FROM earlier.reminders WHERE true"
      "  ON CONFLICT(session_id, agent_id) DO UPDATE SET reminder_tier=excluded.reminder_tier,"
      "  reminder_at_ms=excluded.reminder_at_ms WHERE reminder_tier IS NULL;"
      "INSERT INTO main.meter(session_id, agent_id, status_tokens, status_window, status_at_ms)"
      "  SELECT session_id, '', tokens, window, recorded_at_ms FROM earlier.status_figures"
      "  WHERE true ON CONFLICT(session_id, agent_id) DO UPDATE SET"
      "  status_tokens=excluded.status_tokens, status_window=excluded.status_window,"
      "  status_at_ms=excluded.status_at_ms WHERE status_tokens IS NULL;"
      "INSERT INTO main.meter(session_id, agent_id, large_window)"
      "  SELECT session_id, agent_id, large_window FROM earlier.window_facts WHERE true"
      "  ON CONFLICT(session_id, agent_id) DO UPDATE SET"
      "  large_window=max(large_window, excluded.large_window);"
      "COMMIT;";
  if (sqlite3_exec(db, copy, nullptr, nullptr, nullptr) != SQLITE_OK)
    (void)sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  (void)sqlite3_exec(db, "DETACH DATABASE earlier", nullptr, nullptr, nullptr);
}

}  // namespace

MeterStore::MeterStore(sqlite::Handle db, std::string path)
    : db_(std::move(db)), path_(std::move(path)) {}

Result<MeterStore> MeterStore::open(const fs::path& path, int busy_timeout_ms,
                                    const fs::path& earlier_state) {
  bool created = false;
  auto db =
      sqlite::open_database(path, busy_timeout_ms, kSchema, sqlite::Locking::Exclusive, &created);
  if (!db) return std::unexpected(db.error());
  if (created && !earlier_state.empty())
    copy_earlier_figures(db->get(), earlier_state, busy_timeout_ms);
  return MeterStore(std::move(*db), path.string());
}

Error MeterStore::error(const std::string& what, int rc) const {
  return sqlite::error_of(db_.get(), "meter database", path_, what, rc);
}

Result<void> MeterStore::exec(const char* sql) {
  return sqlite::exec(db_.get(), sql, "meter database", path_);
}

Result<int> MeterStore::user_version() {
  return sqlite::user_version(db_.get(), "meter database", path_);
}

Result<MeterRow> MeterStore::row(const std::string& session, const std::string& agent) {
  Stmt s(db_.get(),
         "SELECT reminder_tier, reminder_at_ms, status_tokens, status_window, status_at_ms, "
         "large_window, client_version, model, compactions, reclaimed_tokens FROM meter "
         "WHERE session_id=?1 AND agent_id=?2");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("reading the meter", s.prepare_rc()));
  s.bind_view(1, session);
  s.bind_view(2, agent);
  MeterRow row;
  int rc = s.step();
  if (rc == SQLITE_DONE) return row;
  if (rc != SQLITE_ROW) return std::unexpected(error("reading the meter", rc));
  if (auto tier = s.col_opt(0))
    row.reminder = core::ReminderState{static_cast<int>(*tier), s.col_opt(1).value_or(0)};
  if (auto tokens = s.col_opt(2))
    row.status = StatusFigure{*tokens, s.col_opt(3).value_or(0), s.col_opt(4).value_or(0)};
  row.large_window = s.col_int(5) != 0;
  row.client_version = s.col_text(6);
  row.model = s.col_text(7);
  row.compactions = s.col_int(8);
  row.reclaimed_tokens = s.col_int(9);
  return row;
}

Result<std::optional<core::ReminderState>> MeterStore::update_reminder(
    const std::string& session, const std::string& agent,
    const std::function<
        std::optional<core::ReminderState>(const std::optional<core::ReminderState>&)>& decide) {
  CTXKIT_TRY(exec("BEGIN IMMEDIATE"));
  auto rollback = [&](Error e) -> Result<std::optional<core::ReminderState>> {
    (void)exec("ROLLBACK");
    return std::unexpected(std::move(e));
  };
  auto current = row(session, agent);
  if (!current) return rollback(current.error());
  std::optional<core::ReminderState> next = decide(current->reminder);
  if (next) {
    Stmt s(db_.get(),
           "INSERT INTO meter(session_id, agent_id, reminder_tier, reminder_at_ms) "
           "VALUES(?1,?2,?3,?4) ON CONFLICT(session_id, agent_id) DO UPDATE SET "
           "reminder_tier=excluded.reminder_tier, reminder_at_ms=excluded.reminder_at_ms");
    if (s.prepare_rc() != SQLITE_OK) return rollback(error("writing reminders", s.prepare_rc()));
    s.bind_view(1, session);
    s.bind_view(2, agent);
    s.bind(3, static_cast<int64_t>(next->tier));
    s.bind(4, next->fired_at_ms);
    if (int rc = s.step(); rc != SQLITE_DONE) return rollback(error("writing reminders", rc));
  }
  if (auto r = exec("COMMIT"); !r) return rollback(r.error());
  return next;
}

Result<void> MeterStore::record_status(const std::string& session, const StatusFigure& f) {
  Stmt s(db_.get(),
         "INSERT INTO meter(session_id, agent_id, status_tokens, status_window, status_at_ms) "
         "VALUES(?1,'',?2,?3,?4) ON CONFLICT(session_id, agent_id) DO UPDATE SET "
         "status_tokens=excluded.status_tokens, status_window=excluded.status_window, "
         "status_at_ms=excluded.status_at_ms "
         "WHERE status_tokens IS NOT excluded.status_tokens "
         "OR status_window IS NOT excluded.status_window");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("writing the status figure", s.prepare_rc()));
  s.bind_view(1, session);
  s.bind(2, f.tokens);
  s.bind(3, f.window);
  s.bind(4, f.recorded_at_ms);
  if (int rc = s.step(); rc != SQLITE_DONE)
    return std::unexpected(error("writing the status figure", rc));
  return {};
}

Result<void> MeterStore::mark_large_window(const std::string& session, const std::string& agent) {
  Stmt s(db_.get(),
         "INSERT INTO meter(session_id, agent_id, large_window) VALUES(?1,?2,1) "
         "ON CONFLICT(session_id, agent_id) DO UPDATE SET large_window=1 WHERE large_window=0");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("writing window facts", s.prepare_rc()));
  s.bind_view(1, session);
  s.bind_view(2, agent);
  if (int rc = s.step(); rc != SQLITE_DONE)
    return std::unexpected(error("writing window facts", rc));
  return {};
}

Result<void> MeterStore::record_client(const std::string& session, const std::string& version,
                                       const std::string& model) {
  Stmt s(
      db_.get(),
      "INSERT INTO meter(session_id, agent_id, client_version, model) VALUES(?1,'',?2,?3) "
      "ON CONFLICT(session_id, agent_id) DO UPDATE SET "
      "client_version=coalesce(nullif(excluded.client_version, ''), client_version), "
      "model=coalesce(nullif(excluded.model, ''), model) "
      "WHERE client_version IS NOT coalesce(nullif(excluded.client_version, ''), client_version) "
      "OR model IS NOT coalesce(nullif(excluded.model, ''), model)");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("writing the client release", s.prepare_rc()));
  s.bind_view(1, session);
  s.bind_view(2, version);
  s.bind_view(3, model);
  if (int rc = s.step(); rc != SQLITE_DONE)
    return std::unexpected(error("writing the client release", rc));
  return {};
}

Result<void> MeterStore::record_compaction(const std::string& session, int64_t freed_tokens) {
  Stmt s(db_.get(),
         "INSERT INTO meter(session_id, agent_id, compactions, reclaimed_tokens) "
         "VALUES(?1,'',1,?2) ON CONFLICT(session_id, agent_id) DO UPDATE SET "
         "compactions=compactions+1, reclaimed_tokens=reclaimed_tokens+excluded.reclaimed_tokens");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("writing a compaction", s.prepare_rc()));
  s.bind_view(1, session);
  s.bind(2, std::max<int64_t>(freed_tokens, 0));
  if (int rc = s.step(); rc != SQLITE_DONE)
    return std::unexpected(error("writing a compaction", rc));
  return {};
}

Result<std::optional<ClientStateRow>> MeterStore::client_state(const std::string& path) {
  Stmt s(db_.get(), "SELECT size, mtime_ns, hints FROM client_state WHERE path=?1");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("reading the client's state", s.prepare_rc()));
  s.bind_view(1, path);
  int rc = s.step();
  if (rc == SQLITE_DONE) return std::optional<ClientStateRow>();
  if (rc != SQLITE_ROW) return std::unexpected(error("reading the client's state", rc));
  return std::optional<ClientStateRow>(ClientStateRow{s.col_int(0), s.col_int(1), s.col_text(2)});
}

Result<void> MeterStore::put_client_state(const std::string& path, const ClientStateRow& row) {
  Stmt s(db_.get(),
         "INSERT INTO client_state(path, size, mtime_ns, hints) VALUES(?1,?2,?3,?4) "
         "ON CONFLICT(path) DO UPDATE SET size=excluded.size, mtime_ns=excluded.mtime_ns, "
         "hints=excluded.hints");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("writing the client's state", s.prepare_rc()));
  s.bind_view(1, path);
  s.bind(2, row.size);
  s.bind(3, row.mtime_ns);
  s.bind_view(4, row.hints);
  if (int rc = s.step(); rc != SQLITE_DONE)
    return std::unexpected(error("writing the client's state", rc));
  return {};
}

}  // namespace ctxkit::store
