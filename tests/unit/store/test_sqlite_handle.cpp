#include <gtest/gtest.h>
#include <sqlite3.h>

#include "store/sqlite_handle.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::store {
namespace {

sqlite::Handle open_db(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  return sqlite::Handle(db);
}

TEST(SqliteExec, RunsStatementsAndNamesTheDatabaseInItsError) {
  test::TempDir tmp;
  const std::string path = (tmp / "t.db").string();
  auto db = open_db(path);
  ASSERT_TRUE(sqlite::exec(db.get(), "CREATE TABLE t(x); INSERT INTO t VALUES (1);",
                           "state database", path));
  auto bad = sqlite::exec(db.get(), "NOT SQL", "state database", path);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "state database " + path + ": near \"NOT\": syntax error");
  EXPECT_EQ(bad.error().kind, Error::Kind::Generic);
}

TEST(SqliteExec, ALockedDatabaseIsBusy) {
  test::TempDir tmp;
  const std::string path = (tmp / "t.db").string();
  auto holder = open_db(path), other = open_db(path);
  ASSERT_TRUE(
      sqlite::exec(holder.get(), "CREATE TABLE t(x); BEGIN EXCLUSIVE;", "search index", path));
  auto r = sqlite::exec(other.get(), "BEGIN IMMEDIATE", "search index", path);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, Error::Kind::Busy);
  EXPECT_EQ(r.error().message.rfind("search index " + path + ": ", 0), 0u) << r.error().message;
}

}  // namespace
}  // namespace ctxkit::store
