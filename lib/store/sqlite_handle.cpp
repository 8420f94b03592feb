#include "store/sqlite_handle.hpp"

#include <sqlite3.h>

#include <mutex>

namespace ctxkit::sqlite {

void Closer::operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }

void configure_once() {
  static std::once_flag once;
  // SQLITE_MISUSE when SQLite was initialized already: then it keeps its defaults.
  std::call_once(once, [] { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

}  // namespace ctxkit::sqlite
