#pragma once

// An owned SQLite connection for the two store modules; this header does not include sqlite3.h.

#include <memory>

struct sqlite3;

namespace ctxkit::sqlite {

// Closes a connection (sqlite3_close_v2).
struct Closer {
  void operator()(sqlite3* db) const noexcept;
};

// The connection a store owns; moving it moves the ownership.
using Handle = std::unique_ptr<sqlite3, Closer>;

}  // namespace ctxkit::sqlite
