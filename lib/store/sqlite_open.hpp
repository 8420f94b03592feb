#pragma once

// Opening one of ctxkit's own SQLite databases: created private, never through a link, in WAL
// mode with a busy timeout, its schema brought to this build's version by numbered migrations.
// Shared by the state and meter databases; this header does not include sqlite3.h.

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "store/sqlite_handle.hpp"
#include "util/error.hpp"

namespace ctxkit::store::sqlite {

// A column added to an existing table by the migration to `version` (ALTER TABLE has no
// IF NOT EXISTS: it is added only when missing).
struct AddedColumn {
  int version;
  const char *table, *column, *declaration;
};

struct Schema {
  std::string_view owner;                   // how errors name it: "state database"
  std::span<const char* const> migrations;  // migrations[i] takes version i to i + 1
  std::span<const AddedColumn> added_columns;
  int version() const { return static_cast<int>(migrations.size()); }
};

// How the connection locks the file. Shared: the usual WAL mode, readers beside one writer,
// with the -shm index file. Exclusive: the connection holds the file's lock from its first read
// to its close and keeps the WAL index in its own memory (no -shm file); others wait through the
// busy timeout. For short-lived programs whose whole use of a database takes well under a
// millisecond: the shared index is rebuilt by every first connection, which cost them more
// than their queries.
enum class Locking { Shared, Exclusive };

// The error of a failed call on `db` ("<owner> <path>: <what>: <SQLite's message>"), with the
// kind of the code.
Error error_of(sqlite3* db, std::string_view owner, std::string_view path, std::string_view what,
               int rc);

// The schema version recorded in the file (PRAGMA user_version).
[[nodiscard]] Result<int> user_version(sqlite3* db, std::string_view owner, std::string_view path);

// Opens the database at `path`, creating it and its folder private (0600 / 0700) and refusing a
// link, FIFO or another user's file in its place; migrates it to `schema`'s version inside one
// transaction (many processes may do this at once). A file of a newer schema is refused
// (Kind::Invalid); a damaged one fails with Kind::Corrupt, a locked one with Kind::Busy.
// `created`, when given, is set when the file was found without a schema (version 0).
[[nodiscard]] Result<Handle> open_database(const std::filesystem::path& path, int busy_timeout_ms,
                                           const Schema& schema, Locking locking,
                                           bool* created = nullptr);

}  // namespace ctxkit::store::sqlite
