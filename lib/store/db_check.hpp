#pragma once

#include <filesystem>
#include <string>

#include "store/sqlite_handle.hpp"
#include "util/error.hpp"

namespace ctxkit::store {

// What a read-only look at a database found.
struct DatabaseCheck {
  std::string integrity;  // "ok", or the first problem PRAGMA integrity_check names
  int user_version = 0;   // the schema version (PRAGMA user_version)
};

// Opens `path` read-only without creating anything (no database, and no -wal/-shm file when
// there is no write-ahead log: then the file is opened as immutable), and runs
// `PRAGMA integrity_check` and `PRAGMA user_version`. A missing file is an error of kind NotFound,
// a file that is not a database (or too damaged to read) one of kind Corrupt.
[[nodiscard]] Result<DatabaseCheck> check_database(const std::filesystem::path& path,
                                                   int busy_timeout_ms = 1000);

// Opens `path` read-only as check_database does; the connection for a store module's own
// read-only queries.
[[nodiscard]] Result<sqlite::Handle> open_read_only(const std::filesystem::path& path,
                                                    int busy_timeout_ms);

}  // namespace ctxkit::store
