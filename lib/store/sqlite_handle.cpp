#include "store/sqlite_handle.hpp"

#include <fmt/core.h>
#include <sqlite3.h>

#include <mutex>
#include <string>

#include "store/sqlite_stmt.hpp"

namespace ctxkit::store::sqlite {

void Closer::operator()(sqlite3* db) const noexcept {
  sqlite3_close_v2(db);
}

void configure_once() {
  static std::once_flag once;
  // SQLITE_MISUSE when SQLite was initialized already: then it keeps its defaults.
  std::call_once(once, [] {
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    // No bulk page-cache allocation per connection: a hook reads a few pages, and the bulk
    // block (zero-filled, then faulted in) cost more than the reads.
    (void)sqlite3_config(SQLITE_CONFIG_PAGECACHE, nullptr, 0, 0);
  });
}

Result<void> exec(sqlite3* db, const char* sql, std::string_view owner, std::string_view path) {
  char* msg = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &msg);
  if (rc != SQLITE_OK) {
    std::string m = msg ? msg : sqlite3_errstr(rc);
    sqlite3_free(msg);
    return fail(fmt::format("{} {}: {}", owner, path, m), error_kind(rc));
  }
  return {};
}

}  // namespace ctxkit::store::sqlite
