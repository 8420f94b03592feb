#pragma once

// A prepared SQLite statement that finalizes itself, and the error kind of a result code; shared
// by the store modules, the only ones that include sqlite3.h.

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace ctxkit::store::sqlite {

// How an SQLite result code is reported: a damaged file, a busy one, one that cannot be opened
// or written, or anything else.
inline Error::Kind error_kind(int rc) {
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Error::Kind::Corrupt;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Error::Kind::Busy;
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
      return Error::Kind::ReadOnly;
    default:
      return Error::Kind::Generic;
  }
}

class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) {
    rc_ = sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr);
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  // The result of preparing; the other calls are only valid when it is SQLITE_OK.
  int prepare_rc() const { return rc_; }
  void bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
  // Binds text without copying it: `v` must stay valid until the statement is stepped and reset.
  void bind_view(int i, std::string_view v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
  }
  void bind(int i, const std::optional<int64_t>& v) {
    if (v)
      sqlite3_bind_int64(s_, i, *v);
    else
      sqlite3_bind_null(s_, i);
  }
  int step() { return sqlite3_step(s_); }
  void reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  int64_t col_int(int i) { return sqlite3_column_int64(s_, i); }
  double col_double(int i) { return sqlite3_column_double(s_, i); }
  std::string col_text(int i) {
    const unsigned char* t = sqlite3_column_text(s_, i);
    return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
  }
  std::optional<int64_t> col_opt(int i) {
    if (sqlite3_column_type(s_, i) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_int64(s_, i);
  }

 private:
  sqlite3_stmt* s_ = nullptr;
  int rc_ = SQLITE_OK;
};

}  // namespace ctxkit::store::sqlite
