#include "store/sqlite_open.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "store/sqlite_stmt.hpp"
#include "util/fs.hpp"

namespace ctxkit::store::sqlite {
namespace fs = std::filesystem;

Error error_of(sqlite3* db, std::string_view owner, std::string_view path, std::string_view what,
               int rc) {
  const char* msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return Error{fmt::format("{} {}: {}: {}", owner, path, what, msg), error_kind(rc)};
}

Result<int> user_version(sqlite3* db, std::string_view owner, std::string_view path) {
  Stmt s(db, "PRAGMA user_version");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error_of(db, owner, path, "reading the schema version", s.prepare_rc()));
  int rc = s.step();
  if (rc != SQLITE_ROW)
    return std::unexpected(error_of(db, owner, path, "reading the schema version", rc));
  return static_cast<int>(s.col_int(0));
}

namespace {

// WAL must be set outside a transaction; it persists in the file. Concurrent creators may see
// SQLITE_BUSY here (the busy handler does not cover this switch), so retry briefly, for the busy
// timeout in all.
Result<void> enter_wal(sqlite3* db, int busy_timeout_ms, std::string_view owner,
                       std::string_view path) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(busy_timeout_ms, 0));
  for (int attempt = 0;; ++attempt) {
    auto r = exec(db, "PRAGMA journal_mode=WAL", owner, path);
    if (r) return {};
    auto left = deadline - std::chrono::steady_clock::now();
    if (r.error().kind != Error::Kind::Busy || left <= std::chrono::steady_clock::duration::zero())
      return r;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(2 + std::min(attempt, 20)), left));
  }
}

Result<void> add_column(sqlite3* db, const AddedColumn& c, std::string_view owner,
                        std::string_view path) {
  Stmt has(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name=?2");
  has.bind_view(1, c.table);
  has.bind_view(2, c.column);
  const int found = has.step();
  if (found == SQLITE_ROW) return {};
  if (found != SQLITE_DONE) return std::unexpected(error_of(db, owner, path, "migrating", found));
  return exec(
      db, fmt::format("ALTER TABLE {} ADD COLUMN {} {}", c.table, c.column, c.declaration).c_str(),
      owner, path);
}

// Runs the migrations from the version found (read again under the write lock: another process
// may have migrated meanwhile) to the schema's, in one transaction.
Result<void> migrate(sqlite3* db, const Schema& schema, std::string_view path) {
  const auto owner = schema.owner;
  if (auto r = exec(db, "BEGIN IMMEDIATE", owner, path); !r) return r;
  auto rollback = [&](Error e) -> Result<void> {
    (void)exec(db, "ROLLBACK", owner, path);
    return std::unexpected(std::move(e));
  };
  auto cur = user_version(db, owner, path);
  if (!cur) return rollback(cur.error());
  for (int i = *cur; i < schema.version(); ++i) {
    if (auto r = exec(db, schema.migrations[static_cast<size_t>(i)], owner, path); !r)
      return rollback(r.error());
    for (const auto& c : schema.added_columns) {
      if (c.version != i + 1) continue;
      if (auto r = add_column(db, c, owner, path); !r) return rollback(r.error());
    }
  }
  if (*cur < schema.version()) {
    auto set =
        exec(db, fmt::format("PRAGMA user_version={}", schema.version()).c_str(), owner, path);
    if (!set) return rollback(set.error());
  }
  if (auto r = exec(db, "COMMIT", owner, path); !r) return rollback(r.error());
  return {};
}

// A pseudo-random number per call, seeded from the process and the clock.
uint64_t jitter() {
  static uint64_t state =
      static_cast<uint64_t>(::getpid()) * uint64_t{0x9E3779B97F4A7C15} ^
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

// One attempt at opening `path` (created private beforehand) and bringing it to the schema.
Result<Handle> open_once(const fs::path& path, int busy_timeout_ms, const Schema& schema,
                         Locking locking, bool* created) {
  const auto owner = schema.owner;
  sqlite3* raw = nullptr;
  // No link followed in ctxkit's own folder; the folders above it are the user's.
  int rc = sqlite3_open_v2(
      util::resolve_above(path, path.parent_path()).c_str(), &raw,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
      nullptr);
  Handle db(raw);
  const std::string shown = path.string();
  if (rc != SQLITE_OK) return std::unexpected(error_of(raw, owner, shown, "opening", rc));
  // An exclusive connection takes the file's lock in two steps (shared, then exclusive) and
  // SQLite's busy handler would wait between them still holding the first, while the others do
  // the same: it does not wait here; its caller closes it and tries again.
  sqlite3_busy_timeout(raw, locking == Locking::Exclusive ? 0 : busy_timeout_ms);
  sqlite3_extended_result_codes(raw, 0);
  // Before the first read: only then does SQLite keep the WAL index in the connection's memory.
  // Only `main`: a database attached later is used in the usual shared way.
  if (locking == Locking::Exclusive) {
    CTXKIT_TRY(exec(raw, "PRAGMA main.locking_mode=EXCLUSIVE", owner, shown));
  }
  // The write-ahead log (and, shared, its index) stay beside the database between runs (emptied
  // when the last connection closes, see journal_size_limit below): every hook run otherwise
  // created, extended and deleted them, a third of the time a hook spent in the database.
  int persist = 1;
  (void)sqlite3_file_control(raw, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
  if (sqlite3_db_readonly(raw, "main") == 1)
    return fail(fmt::format("{} {}: opened read-only", owner, shown), Error::Kind::ReadOnly);
  auto v = user_version(raw, owner, shown);
  if (!v) return std::unexpected(v.error());
  if (*v > schema.version()) {
    return fail(fmt::format("{} {}: schema version {} is newer than this ctxkit ({})", owner, shown,
                            *v, schema.version()),
                Error::Kind::Invalid);
  }
  if (created) *created = *v == 0;
  if (*v < schema.version()) {
    // An exclusive connection keeps what it locked until it closes: its caller retries whole.
    const int wal_wait = locking == Locking::Exclusive ? 0 : busy_timeout_ms;
    CTXKIT_TRY(enter_wal(raw, wal_wait, owner, shown));
    CTXKIT_TRY(migrate(raw, schema, shown));
  }
  if (auto r =
          exec(raw, "PRAGMA synchronous=NORMAL; PRAGMA journal_size_limit=4194304", owner, shown);
      !r)
    return std::unexpected(r.error());
  // Held now: what waits later is for other files (an attached one).
  if (locking == Locking::Exclusive) sqlite3_busy_timeout(raw, busy_timeout_ms);
  return db;
}

}  // namespace

Result<Handle> open_database(const fs::path& path, int busy_timeout_ms, const Schema& schema,
                             Locking locking, bool* created) {
  const auto owner = schema.owner;
  fs::path dir = path.parent_path();
  if (!dir.empty()) {
    // The state directory: 0700, ours, tightened when too open (util::make_private_dirs).
    if (auto r = util::make_private_dirs(dir); !r) {
      return fail(
          fmt::format("state directory: {}", r.error().message),
          r.error().kind == Error::Kind::ReadOnly ? Error::Kind::ReadOnly : Error::Kind::Generic);
    }
  }
  // Create the file private before SQLite does (SQLite gives -wal/-shm the same mode); a link, a
  // FIFO or another user's file in its place is refused, and SQLite is told not to follow links
  // (in the database's folder and below: util::resolve_above).
  auto fd = util::open_private_file(path, O_RDWR);
  if (!fd) return fail(fmt::format("{}: {}", owner, fd.error().message), fd.error().kind);
  ::close(*fd);
  configure_once();
  if (locking == Locking::Shared) return open_once(path, busy_timeout_ms, schema, locking, created);
  // An exclusive connection that finds the file held may hold a lock of its own meanwhile (the
  // shared lock of its first read, before the file is in WAL mode), which SQLite does not wait
  // on: such an attempt is closed, letting its locks go, and made again after a short pause,
  // within the busy timeout in all.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(busy_timeout_ms, 0));
  for (int attempt = 0;; ++attempt) {
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    auto db = open_once(path, static_cast<int>(std::max<int64_t>(left_ms.count(), 0)), schema,
                        locking, created);
    if (db || db.error().kind != Error::Kind::Busy) return db;
    auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return db;
    // Jittered, so that processes started together do not meet again at each attempt.
    const auto pause = std::chrono::microseconds(
        200 +
        static_cast<int64_t>(jitter() % static_cast<uint64_t>(400 + 200 * std::min(attempt, 20))));
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, left));
  }
}

}  // namespace ctxkit::store::sqlite
