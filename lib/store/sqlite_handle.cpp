#include "store/sqlite_handle.hpp"

#include <sqlite3.h>

namespace ctxkit::sqlite {

void Closer::operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }

}  // namespace ctxkit::sqlite
