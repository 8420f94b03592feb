#include "store/state_store.hpp"

#include <fmt/core.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "store/pin_views.hpp"
#include "store/sqlite_open.hpp"
#include "store/sqlite_stmt.hpp"
#include "util/time.hpp"

namespace ctxkit::store {
namespace fs = std::filesystem;

namespace {

using sqlite::Stmt;

// Each migration takes the schema from version i to i + 1.
const char* const kMigrations[] = {
    // 0 -> 1: reminders, status-line figures, per-session facts. Since the meter database
    // (meter_store.hpp) holds them, these three are only read once, when it is created.
    "CREATE TABLE IF NOT EXISTS reminders ("
    "  session_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT '',"
    "  tier INTEGER NOT NULL, fired_at_ms INTEGER NOT NULL,"
    "  PRIMARY KEY (session_id, agent_id)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS status_figures ("
    "  session_id TEXT PRIMARY KEY, tokens INTEGER NOT NULL, window INTEGER NOT NULL,"
    "  recorded_at_ms INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS window_facts ("
    "  session_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT '',"
    "  large_window INTEGER NOT NULL DEFAULT 0,"
    "  PRIMARY KEY (session_id, agent_id)) WITHOUT ROWID;",
    // 1 -> 2: session lineage.
    "CREATE TABLE IF NOT EXISTS sessions ("
    "  session_id TEXT PRIMARY KEY, parent_id TEXT, line_id TEXT NOT NULL, number INTEGER NOT NULL,"
    "  project TEXT, transcript TEXT, cwd TEXT, started_at TEXT, ended_at TEXT, end_reason TEXT,"
    "  context_at_end INTEGER, tokens_saved INTEGER, summary TEXT) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS sessions_parent ON sessions(parent_id);"
    "CREATE INDEX IF NOT EXISTS sessions_line ON sessions(line_id);",
    // 2 -> 3: rollovers waiting for a supervisor.
    "CREATE TABLE IF NOT EXISTS pending_rollovers ("
    "  supervisor TEXT PRIMARY KEY, session_id TEXT NOT NULL, new_session_id TEXT NOT NULL,"
    "  prompt_path TEXT NOT NULL, cwd TEXT NOT NULL, ready INTEGER NOT NULL DEFAULT 0, "
    "created_at_ms INTEGER NOT NULL)"
    "  WITHOUT ROWID;",
    // 3 -> 4: the event log (runner runs and workflow context actions), runs, and the workflow
    // context actions a supervisor carries out (a pending "rollover" gains its kind and focus).
    "CREATE TABLE IF NOT EXISTS events ("
    "  id INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, source TEXT NOT NULL, scope TEXT NOT NULL,"
    "  kind TEXT NOT NULL, data TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS events_scope ON events(source, scope, id);"
    "CREATE TABLE IF NOT EXISTS runs ("
    "  run_id TEXT PRIMARY KEY, project TEXT NOT NULL, folder TEXT NOT NULL, mode TEXT NOT NULL,"
    "  status TEXT NOT NULL, started_at_ms INTEGER NOT NULL, ended_at_ms INTEGER, totals TEXT NOT "
    "NULL DEFAULT '{}')"
    "  WITHOUT ROWID;",
    // 4 -> 5: pins (facts kept across compactions, of a line of work or a project) and what each
    // compaction kept of them.
    "CREATE TABLE IF NOT EXISTS pins ("
    "  id INTEGER PRIMARY KEY, scope_kind TEXT NOT NULL, scope TEXT NOT NULL, text TEXT NOT NULL,"
    "  created_at_ms INTEGER NOT NULL, session_id TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX IF NOT EXISTS pins_scope ON pins(scope_kind, scope, id);"
    "CREATE TABLE IF NOT EXISTS pin_checks ("
    "  id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, line_id TEXT NOT NULL,"
    "  at_ms INTEGER NOT NULL, trigger TEXT NOT NULL, total INTEGER NOT NULL,"
    "  kept INTEGER NOT NULL, detail TEXT NOT NULL DEFAULT '[]',"
    "  restored INTEGER NOT NULL DEFAULT 0, restored_at_ms INTEGER);"
    "CREATE INDEX IF NOT EXISTS pin_checks_session ON pin_checks(session_id, id);"
    "CREATE INDEX IF NOT EXISTS pin_checks_line ON pin_checks(line_id, id);",
};
static_assert(std::size(kMigrations) == StateStore::kSchemaVersion);

const sqlite::AddedColumn kAddedColumns[] = {
    {4, "pending_rollovers", "action", "TEXT NOT NULL DEFAULT 'rollover'"},
    {4, "pending_rollovers", "focus", "TEXT NOT NULL DEFAULT ''"},
};
const sqlite::Schema kSchema{"state database", kMigrations, kAddedColumns};

}  // namespace

uint64_t file_inode(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_ino);
}

Result<fs::path> quarantine_database(const fs::path& path, uint64_t inode) {
  if (inode == 0 || file_inode(path) != inode) return fs::path();  // already replaced
  fs::path aside = path;
  aside += fmt::format(".corrupt-{}", util::format_compact_utc(util::now_ms()));
  if (::rename(path.c_str(), aside.c_str()) != 0) {
    return fail(fmt::format("moving corrupt {} aside: {}", path.string(), std::strerror(errno)));
  }
  for (const char* suffix : {"-wal", "-shm"}) {
    fs::path side = path;
    side += suffix;
    fs::path side_aside = aside;
    side_aside += suffix;
    ::rename(side.c_str(), side_aside.c_str());
  }
  return aside;
}

StateStore::StateStore(sqlite::Handle db, std::string path)
    : db_(std::move(db)), path_(std::move(path)) {}
Error StateStore::error(const std::string& what, int rc) const {
  return sqlite::error_of(db_.get(), "state database", path_, what, rc);
}

Result<void> StateStore::exec(const char* sql) {
  return sqlite::exec(db_.get(), sql, "state database", path_);
}

Result<int> StateStore::user_version() {
  return sqlite::user_version(db_.get(), "state database", path_);
}

Result<StateStore> StateStore::open(const fs::path& path, int busy_timeout_ms) {
  auto db = sqlite::open_database(path, busy_timeout_ms, kSchema, sqlite::Locking::Shared);
  if (!db) return std::unexpected(db.error());
  return StateStore(std::move(*db), path.string());
}

}  // namespace ctxkit::store

namespace ctxkit::store {

namespace {
const char* kSessionColumns =
    "session_id, parent_id, line_id, number, project, transcript, cwd, started_at, ended_at, "
    "end_reason, "
    "context_at_end, tokens_saved, summary";

SessionRecord read_session(Stmt& s) {
  SessionRecord r;
  r.session_id = s.col_text(0);
  r.parent_id = s.col_text(1);
  r.line_id = s.col_text(2);
  r.number = s.col_int(3);
  r.project = s.col_text(4);
  r.transcript = s.col_text(5);
  r.cwd = s.col_text(6);
  r.started_at = s.col_text(7);
  r.ended_at = s.col_text(8);
  r.end_reason = s.col_text(9);
  r.context_at_end = s.col_opt(10);
  r.tokens_saved = s.col_opt(11);
  r.summary = s.col_text(12);
  return r;
}
}  // namespace

Result<std::optional<SessionRecord>> StateStore::session(const std::string& id) {
  Stmt s(db_.get(),
         fmt::format("SELECT {} FROM sessions WHERE session_id=?1", kSessionColumns).c_str());
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("reading sessions", s.prepare_rc()));
  s.bind(1, id);
  int rc = s.step();
  if (rc == SQLITE_DONE) return std::optional<SessionRecord>();
  if (rc != SQLITE_ROW) return std::unexpected(error("reading sessions", rc));
  return std::optional<SessionRecord>(read_session(s));
}

Result<std::vector<SessionRecord>> StateStore::children(const std::string& id) {
  Stmt s(db_.get(),
         fmt::format("SELECT {} FROM sessions WHERE parent_id=?1 ORDER BY started_at, session_id",
                     kSessionColumns)
             .c_str());
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("reading sessions", s.prepare_rc()));
  s.bind(1, id);
  std::vector<SessionRecord> out;
  while (true) {
    int rc = s.step();
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return std::unexpected(error("reading sessions", rc));
    out.push_back(read_session(s));
  }
  return out;
}

Result<SessionRecord> StateStore::record_derivation(const SessionRecord& parent_in,
                                                    const SessionRecord& child_in,
                                                    const std::string& end_reason,
                                                    std::optional<int64_t> context_at_end,
                                                    std::optional<int64_t> tokens_saved,
                                                    const std::string& ended_at) {
  // A session joins a line (and the parent may be recorded): its pins may change.
  const PinViews views{std::filesystem::path(path_)};
  const auto change = views.change();
  CTXKIT_TRY(exec("BEGIN IMMEDIATE"));
  auto rollback = [&](Error e) -> Result<SessionRecord> {
    (void)exec("ROLLBACK");
    return std::unexpected(std::move(e));
  };
  auto existing = session(parent_in.session_id);
  if (!existing) return rollback(existing.error());
  SessionRecord parent = existing->value_or(parent_in);
  if (parent.line_id.empty()) parent.line_id = parent.session_id;
  if (parent.project.empty()) parent.project = parent_in.project;
  if (parent.transcript.empty()) parent.transcript = parent_in.transcript;
  if (parent.cwd.empty()) parent.cwd = parent_in.cwd;
  {
    Stmt s(db_.get(),
           "INSERT INTO sessions(session_id, parent_id, line_id, number, project, transcript, cwd, "
           "started_at, ended_at, "
           "end_reason, context_at_end, tokens_saved, summary) "
           "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13) "
           "ON CONFLICT(session_id) DO UPDATE SET ended_at=excluded.ended_at, "
           "end_reason=excluded.end_reason, "
           "context_at_end=excluded.context_at_end, tokens_saved=excluded.tokens_saved, "
           "project=coalesce(sessions.project, excluded.project), "
           "transcript=coalesce(sessions.transcript, excluded.transcript), "
           "cwd=coalesce(sessions.cwd, excluded.cwd)");
    if (s.prepare_rc() != SQLITE_OK) return rollback(error("writing sessions", s.prepare_rc()));
    s.bind(1, parent.session_id);
    s.bind(2, parent.parent_id);
    s.bind(3, parent.line_id);
    s.bind(4, parent.number);
    s.bind(5, parent.project);
    s.bind(6, parent.transcript);
    s.bind(7, parent.cwd);
    s.bind(8, parent.started_at);
    s.bind(9, ended_at);
    s.bind(10, end_reason);
    s.bind(11, context_at_end);
    s.bind(12, tokens_saved);
    s.bind(13, parent.summary);
    if (int rc = s.step(); rc != SQLITE_DONE) return rollback(error("writing sessions", rc));
  }
  SessionRecord child = child_in;
  child.parent_id = parent.session_id;
  child.line_id = parent.line_id;
  child.number = parent.number + 1;
  {
    Stmt s(db_.get(),
           "INSERT INTO sessions(session_id, parent_id, line_id, number, project, transcript, cwd, "
           "started_at, summary) "
           "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9) ON CONFLICT(session_id) DO UPDATE SET "
           "parent_id=excluded.parent_id, "
           "line_id=excluded.line_id, number=excluded.number, summary=excluded.summary");
    if (s.prepare_rc() != SQLITE_OK) return rollback(error("writing sessions", s.prepare_rc()));
    s.bind(1, child.session_id);
    s.bind(2, child.parent_id);
    s.bind(3, child.line_id);
    s.bind(4, child.number);
    s.bind(5, child.project);
    s.bind(6, child.transcript);
    s.bind(7, child.cwd);
    s.bind(8, child.started_at);
    s.bind(9, child.summary);
    if (int rc = s.step(); rc != SQLITE_DONE) return rollback(error("writing sessions", rc));
  }
  if (auto r = exec("COMMIT"); !r) return rollback(r.error());
  return child;
}

}  // namespace ctxkit::store

namespace ctxkit::store {

Result<void> StateStore::record_session_seen(const SessionRecord& r) {
  // Recorded once: a session known already changes nothing (and takes no lock).
  if (auto known = session(r.session_id); known && known->has_value()) return {};
  // The record decides the session's pins from now on (before it, its hook's folder did).
  const PinViews views{std::filesystem::path(path_)};
  const auto change = views.change();
  Stmt s(db_.get(),
         "INSERT INTO sessions(session_id, line_id, number, project, transcript, cwd, started_at) "
         "VALUES(?1,?1,1,?2,?3,?4,?5) ON CONFLICT(session_id) DO NOTHING");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("writing sessions", s.prepare_rc()));
  s.bind(1, r.session_id);
  s.bind(2, r.project);
  s.bind(3, r.transcript);
  s.bind(4, r.cwd);
  s.bind(5, r.started_at);
  if (int rc = s.step(); rc != SQLITE_DONE) return std::unexpected(error("writing sessions", rc));
  return {};
}

Result<void> StateStore::put_pending_rollover(const PendingRollover& p) {
  Stmt s(db_.get(),
         "INSERT INTO pending_rollovers(supervisor, session_id, new_session_id, prompt_path, cwd, "
         "ready, created_at_ms, action, focus) "
         "VALUES(?1,?2,?3,?4,?5,0,?6,?7,?8) ON CONFLICT(supervisor) DO UPDATE SET "
         "session_id=excluded.session_id, "
         "new_session_id=excluded.new_session_id, prompt_path=excluded.prompt_path, "
         "cwd=excluded.cwd, ready=0, "
         "created_at_ms=excluded.created_at_ms, action=excluded.action, focus=excluded.focus");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("writing pending rollovers", s.prepare_rc()));
  s.bind(1, p.supervisor);
  s.bind(2, p.session_id);
  s.bind(3, p.new_session_id);
  s.bind(4, p.prompt_path);
  s.bind(5, p.cwd);
  s.bind(6, util::now_ms());
  s.bind(7, p.action.empty() ? std::string("rollover") : p.action);
  s.bind(8, p.focus);
  if (int rc = s.step(); rc != SQLITE_DONE)
    return std::unexpected(error("writing pending rollovers", rc));
  return {};
}

Result<std::optional<PendingRollover>> StateStore::pending_rollover(const std::string& supervisor) {
  Stmt s(db_.get(),
         "SELECT supervisor, session_id, new_session_id, prompt_path, cwd, ready, action, focus "
         "FROM pending_rollovers WHERE supervisor=?1");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("reading pending rollovers", s.prepare_rc()));
  s.bind(1, supervisor);
  int rc = s.step();
  if (rc == SQLITE_DONE) return std::optional<PendingRollover>();
  if (rc != SQLITE_ROW) return std::unexpected(error("reading pending rollovers", rc));
  return std::optional<PendingRollover>(
      PendingRollover{s.col_text(0), s.col_text(1), s.col_text(2), s.col_text(3), s.col_text(4),
                      s.col_int(5) != 0, s.col_text(6), s.col_text(7)});
}

Result<bool> StateStore::mark_rollover_ready(const std::string& supervisor,
                                             const std::string& session_id) {
  // A rollover belongs to the session that prepared it; a workflow action to whichever session of
  // this supervised client ends its turn (the MCP server knows only the id it was started with).
  Stmt s(db_.get(),
         "UPDATE pending_rollovers SET ready=1, session_id=CASE WHEN action='rollover' THEN "
         "session_id ELSE ?2 END, "
         "new_session_id=CASE WHEN action='compact' THEN ?2 ELSE new_session_id END "
         "WHERE supervisor=?1 AND (session_id=?2 OR action<>'rollover')");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("writing pending rollovers", s.prepare_rc()));
  s.bind(1, supervisor);
  s.bind(2, session_id);
  if (int rc = s.step(); rc != SQLITE_DONE)
    return std::unexpected(error("writing pending rollovers", rc));
  return sqlite3_changes(db_.get()) > 0;
}

Result<void> StateStore::clear_pending_rollover(const std::string& supervisor) {
  Stmt s(db_.get(), "DELETE FROM pending_rollovers WHERE supervisor=?1");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("writing pending rollovers", s.prepare_rc()));
  s.bind(1, supervisor);
  if (int rc = s.step(); rc != SQLITE_DONE)
    return std::unexpected(error("writing pending rollovers", rc));
  return {};
}

Result<void> StateStore::append_event(const EventRow& e) {
  Stmt s(db_.get(), "INSERT INTO events(at_ms, source, scope, kind, data) VALUES(?1,?2,?3,?4,?5)");
  if (s.prepare_rc() != SQLITE_OK) return std::unexpected(error("writing events", s.prepare_rc()));
  s.bind(1, e.at_ms);
  s.bind(2, e.source);
  s.bind(3, e.scope);
  s.bind(4, e.kind);
  s.bind(5, e.data);
  if (int rc = s.step(); rc != SQLITE_DONE) return std::unexpected(error("writing events", rc));
  return {};
}

Result<std::vector<EventRow>> StateStore::events(const std::string& source,
                                                 const std::string& scope) {
  Stmt s(db_.get(),
         "SELECT at_ms, source, scope, kind, data FROM events WHERE source=?1 AND scope=?2 ORDER "
         "BY id");
  if (s.prepare_rc() != SQLITE_OK) return std::unexpected(error("reading events", s.prepare_rc()));
  s.bind(1, source);
  s.bind(2, scope);
  std::vector<EventRow> out;
  while (true) {
    int rc = s.step();
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return std::unexpected(error("reading events", rc));
    out.push_back(
        EventRow{s.col_int(0), s.col_text(1), s.col_text(2), s.col_text(3), s.col_text(4)});
  }
  return out;
}

Result<std::vector<EventRow>> StateStore::events_between(int64_t from_ms, int64_t to_ms,
                                                         size_t limit) {
  Stmt s(db_.get(),
         "SELECT at_ms, source, scope, kind, data FROM events WHERE at_ms>=?1 AND at_ms<=?2 ORDER "
         "BY at_ms, id LIMIT ?3");
  if (s.prepare_rc() != SQLITE_OK) return std::unexpected(error("reading events", s.prepare_rc()));
  s.bind(1, from_ms);
  s.bind(2, to_ms);
  s.bind(3, static_cast<int64_t>(std::min<size_t>(limit, INT64_MAX)));
  std::vector<EventRow> out;
  while (true) {
    int rc = s.step();
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return std::unexpected(error("reading events", rc));
    out.push_back(
        EventRow{s.col_int(0), s.col_text(1), s.col_text(2), s.col_text(3), s.col_text(4)});
  }
  return out;
}

Result<void> StateStore::put_run(const RunRow& r) {
  Stmt s(db_.get(),
         "INSERT INTO runs(run_id, project, folder, mode, status, started_at_ms, ended_at_ms, "
         "totals) VALUES(?1,?2,?3,?4,?5,?6,?7,?8) "
         "ON CONFLICT(run_id) DO UPDATE SET project=excluded.project, folder=excluded.folder, "
         "mode=excluded.mode, "
         "status=excluded.status, started_at_ms=excluded.started_at_ms, "
         "ended_at_ms=excluded.ended_at_ms, totals=excluded.totals");
  if (s.prepare_rc() != SQLITE_OK) return std::unexpected(error("writing runs", s.prepare_rc()));
  s.bind(1, r.run_id);
  s.bind(2, r.project);
  s.bind(3, r.folder);
  s.bind(4, r.mode);
  s.bind(5, r.status);
  s.bind(6, r.started_at_ms);
  s.bind(7, r.ended_at_ms);
  s.bind(8, r.totals);
  if (int rc = s.step(); rc != SQLITE_DONE) return std::unexpected(error("writing runs", rc));
  return {};
}

Result<std::optional<RunRow>> StateStore::run(const std::string& run_id) {
  Stmt s(db_.get(),
         "SELECT run_id, project, folder, mode, status, started_at_ms, ended_at_ms, totals FROM "
         "runs WHERE run_id=?1");
  if (s.prepare_rc() != SQLITE_OK) return std::unexpected(error("reading runs", s.prepare_rc()));
  s.bind(1, run_id);
  int rc = s.step();
  if (rc == SQLITE_DONE) return std::optional<RunRow>();
  if (rc != SQLITE_ROW) return std::unexpected(error("reading runs", rc));
  return std::optional<RunRow>(RunRow{s.col_text(0), s.col_text(1), s.col_text(2), s.col_text(3),
                                      s.col_text(4), s.col_int(5), s.col_opt(6), s.col_text(7)});
}

}  // namespace ctxkit::store
