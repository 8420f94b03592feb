#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "store/meter_store.hpp"
#include "store/state_store.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::store {
namespace {
namespace fs = std::filesystem;

// Runs statements on a database with a plain connection of its own.
void sql(const fs::path& db, const char* statements) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(raw, statements, nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);
}

TEST(MeterStore, CreatesAPrivateWalFileWithItsSchemaVersion) {
  test::TempDir tmp;
  auto db = tmp / "state/ctxkit/meter.db";
  {
    auto s = store::MeterStore::open(db, 1000);
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ(*s->user_version(), store::MeterStore::kSchemaVersion);
    // Exclusive locking keeps the WAL index in the connection's memory: no -shm file.
    EXPECT_FALSE(fs::exists(tmp / "state/ctxkit/meter.db-shm"));
  }
  struct stat st {};
  ASSERT_EQ(::stat(db.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(db.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  std::string header = test::read_file(db).substr(0, 20);
  EXPECT_EQ(header[18], 2);  // WAL
  EXPECT_EQ(header[19], 2);
}

TEST(MeterStore, AnEmptyRowForWhatWasNeverRecorded) {
  test::TempDir tmp;
  auto s = store::MeterStore::open(tmp / "meter.db", 1000);
  ASSERT_TRUE(s);
  auto row = s->row("S", "");
  ASSERT_TRUE(row);
  EXPECT_FALSE(row->reminder);
  EXPECT_FALSE(row->status);
  EXPECT_FALSE(row->large_window);
}

TEST(MeterStore, ReminderReadDecideWriteKeyedBySessionAndAgent) {
  test::TempDir tmp;
  auto s = store::MeterStore::open(tmp / "meter.db", 1000);
  ASSERT_TRUE(s);
  auto r = s->update_reminder("S", "", [](const auto& cur) {
    EXPECT_FALSE(cur);
    return std::optional<core::ReminderState>(core::ReminderState{2, 42});
  });
  ASSERT_TRUE(r);
  auto back = s->row("S", "");
  ASSERT_TRUE(back && back->reminder);
  EXPECT_EQ(back->reminder->tier, 2);
  EXPECT_EQ(back->reminder->fired_at_ms, 42);
  EXPECT_FALSE(s->row("S", "agent1")->reminder);  // keyed by agent too
  // Nothing to store leaves the row as it was, and decide sees what is kept.
  r = s->update_reminder("S", "", [](const auto& cur) {
    EXPECT_TRUE(cur && cur->tier == 2);
    return std::optional<core::ReminderState>();
  });
  ASSERT_TRUE(r);
  EXPECT_EQ(s->row("S", "")->reminder->fired_at_ms, 42);
}

TEST(MeterStore, StatusFigureKeepsItsTimeWhileUnchangedAndSharesTheRow) {
  test::TempDir tmp;
  auto s = store::MeterStore::open(tmp / "meter.db", 1000);
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->update_reminder("S", "", [](const auto&) {
    return std::optional<core::ReminderState>(core::ReminderState{1, 7});
  }));
  ASSERT_TRUE(s->record_status("S", {120000, 200000, 5}));
  ASSERT_TRUE(s->record_status("S", {120000, 200000, 9}));  // unchanged figure keeps its time
  auto row = s->row("S", "");
  ASSERT_TRUE(row && row->status);
  EXPECT_EQ(row->status->tokens, 120000);
  EXPECT_EQ(row->status->window, 200000);
  EXPECT_EQ(row->status->recorded_at_ms, 5);
  ASSERT_TRUE(row->reminder);  // the reminder of the same row is kept
  EXPECT_EQ(row->reminder->fired_at_ms, 7);
  ASSERT_TRUE(s->record_status("S", {130000, 200000, 11}));
  EXPECT_EQ(s->row("S", "")->status->recorded_at_ms, 11);
  EXPECT_FALSE(s->row("S", "agent1")->status);  // a subagent has none
}

TEST(MeterStore, LargeWindowIsRememberedPerAgent) {
  test::TempDir tmp;
  auto s = store::MeterStore::open(tmp / "meter.db", 1000);
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->mark_large_window("S", "a1"));
  ASSERT_TRUE(s->mark_large_window("S", "a1"));
  EXPECT_TRUE(s->row("S", "a1")->large_window);
  EXPECT_FALSE(s->row("S", "")->large_window);
}

// While one connection is open the file is held: a second waits out its busy timeout and
// reports Busy; once the first closes, the second opens.
TEST(MeterStore, AnOpenConnectionHoldsTheFile) {
  test::TempDir tmp;
  auto db = tmp / "meter.db";
  {
    auto first = store::MeterStore::open(db, 1000);
    ASSERT_TRUE(first);
    auto second = store::MeterStore::open(db, 30);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().kind, Error::Kind::Busy) << second.error().message;
  }
  EXPECT_TRUE(store::MeterStore::open(db, 30));
}

TEST(MeterStore, ManyProcessesAtOnceEachWriteTheirRow) {
  test::TempDir tmp;
  auto db = tmp / "fresh/meter.db";
  const auto codes = test::exit_codes_of_children(16, [&](int i) {
    auto s = store::MeterStore::open(db, 10000);
    if (!s) return 1;
    auto r = s->update_reminder("S", std::to_string(i), [](const auto&) {
      return std::optional<core::ReminderState>(core::ReminderState{1, 1});
    });
    return r ? 0 : 2;
  });
  EXPECT_EQ(codes, std::vector<int>(16, 0));
  auto s = store::MeterStore::open(db, 1000);
  ASSERT_TRUE(s);
  for (int i = 0; i < 16; ++i) EXPECT_TRUE(s->row("S", std::to_string(i))->reminder);
}

// An upgrade: the state database of before kept these figures in three tables; a new meter
// database starts with them.
TEST(MeterStore, ANewMeterDatabaseStartsWithTheFiguresTheStateDatabaseKept) {
  test::TempDir tmp;
  auto state = tmp / "state.db";
  ASSERT_TRUE(store::StateStore::open(state, 1000));
  sql(state,
      "INSERT INTO reminders VALUES('S', '', 2, 500), ('S', 'a1', 1, 600);"
      "INSERT INTO status_figures VALUES('S', 150000, 200000, 700);"
      "INSERT INTO window_facts VALUES('T', '', 1);");
  {
    auto s = store::MeterStore::open(tmp / "meter.db", 1000, state);
    ASSERT_TRUE(s);
    auto main = s->row("S", "");
    ASSERT_TRUE(main && main->reminder && main->status);
    EXPECT_EQ(main->reminder->tier, 2);
    EXPECT_EQ(main->reminder->fired_at_ms, 500);
    EXPECT_EQ(main->status->tokens, 150000);
    EXPECT_EQ(main->status->recorded_at_ms, 700);
    EXPECT_EQ(s->row("S", "a1")->reminder->fired_at_ms, 600);
    EXPECT_TRUE(s->row("T", "")->large_window);
  }
  // Only a new meter database copies: what the state database holds is not read again.
  sql(state, "UPDATE reminders SET tier = 3");
  auto s = store::MeterStore::open(tmp / "meter.db", 1000, state);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->row("S", "")->reminder->tier, 2);
}

// The same upgrade in a home reached through a link: both databases open, the figures are copied.
TEST(MeterStore, TheEarlierFiguresAreCopiedInAHomeReachedThroughALink) {
  test::TempDir tmp;
  fs::create_directories(tmp / "data/home");
  fs::create_directory_symlink(tmp / "data/home", tmp / "home");
  const fs::path dir = tmp / "home/.local/state/ctxkit";
  ASSERT_TRUE(store::StateStore::open(dir / "state.db", 1000));
  sql(dir / "state.db", "INSERT INTO reminders VALUES('S', '', 2, 500);");
  auto s = store::MeterStore::open(dir / "meter.db", 1000, dir / "state.db");
  ASSERT_TRUE(s) << s.error().message;
  auto main = s->row("S", "");
  ASSERT_TRUE(main && main->reminder);
  EXPECT_EQ(main->reminder->tier, 2);
}

TEST(MeterStore, WithoutAnEarlierStateDatabaseItStartsEmpty) {
  test::TempDir tmp;
  auto s = store::MeterStore::open(tmp / "meter.db", 1000, tmp / "absent/state.db");
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->row("S", "")->reminder);
  EXPECT_FALSE(fs::exists(tmp / "absent"));
  // A state database of today (no such tables) is read without complaint.
  ASSERT_TRUE(store::StateStore::open(tmp / "state2.db", 1000));
  sql(tmp / "state2.db", "DROP TABLE reminders; DROP TABLE status_figures;");
  auto t = store::MeterStore::open(tmp / "meter2.db", 1000, tmp / "state2.db");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_FALSE(t->row("S", "")->reminder);
}

TEST(MeterStore, NewerSchemaIsRefused) {
  test::TempDir tmp;
  auto db = tmp / "meter.db";
  ASSERT_TRUE(store::MeterStore::open(db, 100));
  sql(db, "PRAGMA user_version=7");
  auto s = store::MeterStore::open(db, 100);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().kind, Error::Kind::Invalid);
  EXPECT_EQ(s.error().message,
            "meter database " + db.string() + ": schema version 7 is newer than this ctxkit (2)");
}

// Schema 2: a meter database of schema 1 (a ctxkit of before) keeps its rows and gains the client
// release, the compactions and the client-state cache.
TEST(MeterStore, ASchemaOneDatabaseMigratesKeepingItsRows) {
  test::TempDir tmp;
  const fs::path db = tmp / "meter.db";
  sql(db,
      "CREATE TABLE meter (session_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT '',"
      " reminder_tier INTEGER, reminder_at_ms INTEGER, status_tokens INTEGER,"
      " status_window INTEGER, status_at_ms INTEGER, large_window INTEGER NOT NULL DEFAULT 0,"
      " PRIMARY KEY (session_id, agent_id)) WITHOUT ROWID;"
      "INSERT INTO meter(session_id, agent_id, reminder_tier, reminder_at_ms, large_window)"
      " VALUES('S', '', 2, 77, 1); PRAGMA user_version = 1;");
  auto s = store::MeterStore::open(db, 1000);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(*s->user_version(), 2);
  auto row = s->row("S", "");
  ASSERT_TRUE(row);
  ASSERT_TRUE(row->reminder);
  EXPECT_EQ(row->reminder->tier, 2);
  EXPECT_TRUE(row->large_window);
  EXPECT_EQ(row->compactions, 0);
  EXPECT_EQ(row->client_version, "");
}

TEST(MeterStore, CompactionsAddUpAndTheClientIsKept) {
  test::TempDir tmp;
  auto s = store::MeterStore::open(tmp / "meter.db", 1000);
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->record_compaction("S", 150000));
  ASSERT_TRUE(s->record_compaction("S", 62000));
  ASSERT_TRUE(s->record_compaction("S", -5));  // a boundary without figures frees nothing
  ASSERT_TRUE(s->record_client("S", "2.1.332", "claude-sonnet-4-6"));
  ASSERT_TRUE(s->record_client("S", "", ""));  // empty ones keep what was kept
  auto row = s->row("S", "");
  ASSERT_TRUE(row);
  EXPECT_EQ(row->compactions, 3);
  EXPECT_EQ(row->reclaimed_tokens, 212000);
  EXPECT_EQ(row->client_version, "2.1.332");
  EXPECT_EQ(row->model, "claude-sonnet-4-6");
}

TEST(MeterStore, TheClientStateCacheIsKeptPerFile) {
  test::TempDir tmp;
  auto s = store::MeterStore::open(tmp / "meter.db", 1000);
  ASSERT_TRUE(s);
  auto none = s->client_state("/h/.claude.json");
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  ASSERT_TRUE(s->put_client_state("/h/.claude.json", {5'000'000, 42, R"({"models":{}})"}));
  ASSERT_TRUE(s->put_client_state("/h/.claude.json", {5'000'001, 43, "{}"}));
  auto got = s->client_state("/h/.claude.json");
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->size, 5'000'001);
  EXPECT_EQ((*got)->mtime_ns, 43);
  EXPECT_EQ((*got)->hints, "{}");
}

}  // namespace
}  // namespace ctxkit::store
