#pragma once

// An owned SQLite connection for the two store modules; this header does not include sqlite3.h.

#include <memory>
#include <string_view>

#include "util/error.hpp"

struct sqlite3;

namespace ctxkit::store::sqlite {

// Closes a connection (sqlite3_close_v2).
struct Closer {
  void operator()(sqlite3* db) const noexcept;
};

// The connection a store owns; moving it moves the ownership.
using Handle = std::unique_ptr<sqlite3, Closer>;

// Process-wide settings, applied once before the first connection opens: SQLite's memory
// statistics are turned off, since keeping them takes one global mutex around every allocation
// and the search index's shards are written and read by several threads at once.
void configure_once();

// Runs `sql` (statements without results) on `db`. The error reads "<owner> <path>: <SQLite's
// message>" (e.g. "state database /x/state.db: database is locked"), with the kind of the code.
[[nodiscard]] Result<void> exec(sqlite3* db, const char* sql, std::string_view owner,
                                std::string_view path);

}  // namespace ctxkit::store::sqlite
