#include "store/db_check.hpp"

#include <fmt/core.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <cctype>

#include "store/sqlite_stmt.hpp"

namespace ctxkit::store {
namespace fs = std::filesystem;

namespace {

// A file: URI for `path` (RFC 3986: everything but unreserved characters and '/' escaped).
std::string file_uri(const fs::path& path) {
  std::string uri = "file:";
  for (char ch : path.string()) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~')
      uri += ch;
    else
      uri += fmt::format("%{:02X}", c);
  }
  return uri;
}
}  // namespace

Result<sqlite::Handle> open_read_only(const fs::path& path, int busy_timeout_ms) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return fail(fmt::format("{}: no such file", path.string()), Error::Kind::NotFound);
  if (!S_ISREG(st.st_mode))
    return fail(fmt::format("{}: not a regular file", path.string()), Error::Kind::Invalid);
  // Without a write-ahead log (or with an empty one, kept between runs) the file holds
  // everything: read it as immutable, so that SQLite creates no -shm or -wal beside it. With one,
  // a plain read-only connection reads the log too.
  fs::path wal = path;
  wal += "-wal";
  std::error_code ec;
  const auto wal_size = fs::file_size(wal, ec);
  const bool has_log = !ec && wal_size > 0;
  std::string uri = file_uri(path) + (has_log ? "?mode=ro" : "?mode=ro&immutable=1");
  sqlite::configure_once();
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(uri.c_str(), &raw,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  sqlite::Handle db(raw);
  if (rc != SQLITE_OK)
    return fail(
        fmt::format("{}: {}", path.string(), raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)),
        sqlite::error_kind(rc));
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  return db;
}

Result<DatabaseCheck> check_database(const fs::path& path, int busy_timeout_ms) {
  auto db = open_read_only(path, busy_timeout_ms);
  if (!db) return std::unexpected(db.error());
  auto problem = [&](const char* what, int rc) {
    return fail(fmt::format("{}: {}: {}", path.string(), what, sqlite3_errmsg(db->get())),
                sqlite::error_kind(rc));
  };
  DatabaseCheck check;
  {
    sqlite::Stmt v(db->get(), "PRAGMA user_version");
    if (v.prepare_rc() != SQLITE_OK) return problem("reading the schema version", v.prepare_rc());
    int rc = v.step();
    if (rc != SQLITE_ROW) return problem("reading the schema version", rc);
    check.user_version = static_cast<int>(v.col_int(0));
  }
  sqlite::Stmt s(db->get(), "PRAGMA integrity_check");
  if (s.prepare_rc() != SQLITE_OK) return problem("checking integrity", s.prepare_rc());
  int rc = s.step();
  if (rc != SQLITE_ROW) return problem("checking integrity", rc);
  check.integrity = s.col_text(0);
  return check;
}

}  // namespace ctxkit::store
