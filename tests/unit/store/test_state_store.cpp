#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <vector>

#include "store/state_store.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::store {
namespace {
namespace fs = std::filesystem;

TEST(StateStore, CreatesPrivateFileWithSchemaVersionAndWal) {
  test::TempDir tmp;
  auto db = tmp / "state/ctxkit/state.db";
  auto s = store::StateStore::open(db, 1000);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(*s->user_version(), store::StateStore::kSchemaVersion);
  struct stat st {};
  ASSERT_EQ(::stat(db.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(db.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // WAL is recorded in the header (bytes 18/19 = 2).
  std::ifstream in(db, std::ios::binary);
  char header[20];
  in.read(header, 20);
  EXPECT_EQ(header[18], 2);
  EXPECT_EQ(header[19], 2);
}

// A home reached through a link (/home -> /data/home): the links above ctxkit's own folder are
// the user's and the database opens; a link in place of that folder is refused, and nothing is
// created through it.
TEST(StateStore, OpensThroughALinkAboveItsFolderAndRefusesOneInItsPlace) {
  test::TempDir tmp;
  fs::create_directories(tmp / "data/home");
  fs::create_directory_symlink(tmp / "data/home", tmp / "home");
  auto s = store::StateStore::open(tmp / "home/.local/state/ctxkit/state.db", 1000);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(*s->user_version(), store::StateStore::kSchemaVersion);
  EXPECT_TRUE(fs::is_regular_file(tmp / "data/home/.local/state/ctxkit/state.db"));

  fs::create_directories(tmp / "elsewhere");
  fs::create_directory_symlink(tmp / "elsewhere", tmp / "home/.local/state/linked");
  auto linked = store::StateStore::open(tmp / "home/.local/state/linked/state.db", 1000);
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.error().message.find("linked is a symbolic link inside the state directory"),
            std::string::npos)
      << linked.error().message;
  EXPECT_TRUE(fs::is_empty(tmp / "elsewhere"));
}

TEST(StateStore, GarbageFileIsReportedCorruptAndQuarantined) {
  test::TempDir tmp;
  auto db = tmp.write("state.db", std::string(4096, 'z'));
  uint64_t inode = store::file_inode(db);
  auto s = store::StateStore::open(db, 100);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().kind, Error::Kind::Corrupt);
  auto aside = store::quarantine_database(db, inode);
  ASSERT_TRUE(aside);
  EXPECT_TRUE(fs::exists(*aside));
  EXPECT_EQ(test::read_file(*aside), std::string(4096, 'z'));
  EXPECT_TRUE(store::StateStore::open(db, 100));
}

TEST(StateStore, NewerSchemaIsRefusedNotDamaged) {
  test::TempDir tmp;
  auto db = tmp / "state.db";
  {
    auto s = store::StateStore::open(db, 100);
    ASSERT_TRUE(s);
  }
  // Pretend a newer ctxkit wrote it: user_version lives at offset 60 of the header.
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(60);
    const char v[4] = {0, 0, 0, 99};
    f.write(v, 4);
  }
  std::string before = test::read_file(db);
  auto s = store::StateStore::open(db, 100);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "state database " + db.string() +
                                   ": schema version 99 is newer than this ctxkit (" +
                                   std::to_string(store::StateStore::kSchemaVersion) + ")");
  EXPECT_EQ(test::read_file(db), before);
}

TEST(StateStore, ManyProcessesCreatingAFreshDatabaseAtOnce) {
  test::TempDir tmp;
  auto db = tmp / "fresh/state.db";
  const auto codes = test::exit_codes_of_children(16, [&](int i) {
    auto s = store::StateStore::open(db, 5000);
    if (!s) return 1;
    store::SessionRecord seen;
    seen.session_id = seen.line_id = "S" + std::to_string(i);
    return s->record_session_seen(seen) ? 0 : 2;
  });
  EXPECT_EQ(codes, std::vector<int>(16, 0));
  auto s = store::StateStore::open(db, 1000);
  ASSERT_TRUE(s);
  for (int i = 0; i < 16; ++i) EXPECT_TRUE(s->session("S" + std::to_string(i)).value().has_value());
}

}  // namespace
}  // namespace ctxkit::store

namespace ctxkit::store {
namespace {

// A database that another process holds locked while it is still to be set up: the open gives up
// with Busy after about the busy timeout, not after fifty of them.
TEST(StateStore, ALockedFreshDatabaseIsBusyWithinTheBusyTimeout) {
  test::TempDir tmp;
  auto db = tmp / "state.db";
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &holder), SQLITE_OK);
  // A reader in the middle of a transaction: the schema version can be read, the switch to WAL
  // cannot be made.
  ASSERT_EQ(sqlite3_exec(holder, "CREATE TABLE held(a); BEGIN; SELECT * FROM held;", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  auto t0 = std::chrono::steady_clock::now();
  auto s = store::StateStore::open(db, 100);
  auto waited = std::chrono::steady_clock::now() - t0;
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().kind, Error::Kind::Busy) << s.error().message;
  EXPECT_LT(waited, std::chrono::seconds(2));
}

TEST(StateStore, DerivationsFormALineOfWork) {
  test::TempDir tmp;
  auto s = store::StateStore::open(tmp / "state.db", 1000);
  ASSERT_TRUE(s);
  store::SessionRecord a, b, c;
  a.session_id = "A";
  a.project = "-p";
  a.transcript = "/p/A.jsonl";
  a.cwd = "/p";
  b.session_id = "B";
  b.transcript = "/p/B.jsonl";
  b.started_at = "t1";
  c.session_id = "C";
  c.started_at = "t2";
  auto child = s->record_derivation(a, b, "trim", 71, 4000, "t1");
  ASSERT_TRUE(child) << child.error().message;
  EXPECT_EQ(child->parent_id, "A");
  EXPECT_EQ(child->line_id, "A");
  EXPECT_EQ(child->number, 2);
  auto grandchild = s->record_derivation(*child, c, "rollover", 88, std::nullopt, "t2");
  ASSERT_TRUE(grandchild);
  EXPECT_EQ(grandchild->number, 3);
  EXPECT_EQ(grandchild->line_id, "A");
  auto pa = s->session("A");
  ASSERT_TRUE(pa && *pa);
  EXPECT_EQ((*pa)->end_reason, "trim");
  EXPECT_EQ((*pa)->context_at_end, 71);
  EXPECT_EQ((*pa)->tokens_saved, 4000);
  EXPECT_EQ((*pa)->number, 1);
  auto pb = s->session("B");
  EXPECT_EQ((*pb)->end_reason, "rollover");
  EXPECT_FALSE((*pb)->tokens_saved);
  EXPECT_EQ(s->children("A")->size(), 1u);
}

// The tables of a database, from sqlite_master.
std::vector<std::string> table_names(const std::filesystem::path& db) {
  std::vector<std::string> out;
  sqlite3* raw = nullptr;
  if (sqlite3_open(db.c_str(), &raw) != SQLITE_OK) return out;
  sqlite3_exec(
      raw, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
      [](void* v, int, char** cols, char**) {
        static_cast<std::vector<std::string>*>(v)->push_back(cols[0]);
        return 0;
      },
      &out, nullptr);
  sqlite3_close(raw);
  return out;
}

// The first column of the first row `sql` gives, as text ("" when none).
std::string first_text(const std::filesystem::path& db, const char* sql) {
  std::string out;
  sqlite3* raw = nullptr;
  if (sqlite3_open(db.c_str(), &raw) != SQLITE_OK) return out;
  sqlite3_exec(
      raw, sql,
      [](void* v, int, char** cols, char**) {
        if (cols[0]) *static_cast<std::string*>(v) = cols[0];
        return 1;
      },
      &out, nullptr);
  sqlite3_close(raw);
  return out;
}

// A version-1 file: what versions 2 (sessions), 3 (pending rollovers), 4 (events, runs) and 5
// (pins) added
// is dropped and user_version set back to 1; opening it adds them all again and keeps the data
// of version 1.
TEST(StateStore, VersionOneDatabaseIsMigrated) {
  test::TempDir tmp;
  auto db = tmp / "state.db";
  {
    auto s = store::StateStore::open(db, 1000);
    ASSERT_TRUE(s);
  }
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw,
                           "INSERT INTO reminders VALUES('S', '', 2, 5); DROP TABLE sessions; DROP "
                           "TABLE pending_rollovers; DROP TABLE events; "
                           "DROP TABLE runs; DROP TABLE pins; DROP TABLE pin_checks; "
                           "PRAGMA user_version=1;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(raw);
    sqlite3_close(raw);
  }
  ASSERT_EQ(table_names(db),
            (std::vector<std::string>{"reminders", "status_figures", "window_facts"}));
  auto s = store::StateStore::open(db, 1000);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(*s->user_version(), store::StateStore::kSchemaVersion);
  EXPECT_EQ(first_text(db, "SELECT tier || '@' || fired_at_ms FROM reminders"), "2@5");  // kept
  EXPECT_EQ(table_names(db), (std::vector<std::string>{"events", "pending_rollovers", "pin_checks",
                                                       "pins", "reminders", "runs", "sessions",
                                                       "status_figures", "window_facts"}));
  // Each added table is usable: lineage (2), a pending rollover with its kind (3, 4), events (4).
  store::SessionRecord a;
  a.session_id = a.line_id = "A";
  store::SessionRecord b;
  b.session_id = "B";
  auto child = s->record_derivation(a, b, "rollover", 80, std::nullopt, "2026-11-21T12:00:00Z");
  ASSERT_TRUE(child) << child.error().message;
  EXPECT_EQ(child->number, 2);
  ASSERT_TRUE(
      s->put_pending_rollover({"sup", "A", "B", "/p", "/c", false, "compact", "the tests"}));
  auto p = s->pending_rollover("sup");
  ASSERT_TRUE(p && *p);
  EXPECT_EQ((*p)->focus, "the tests");
  ASSERT_TRUE(s->append_event({1, "run", "R", "run_started", "{}"}));
  EXPECT_EQ(s->events("run", "R")->size(), 1u);
}

// A database of schema 3 (before events, runs and the pending action's kind) gains them.
TEST(StateStore, VersionThreeDatabaseGainsEventsRunsAndActionColumns) {
  test::TempDir tmp;
  auto db = tmp / "state.db";
  {
    auto s = store::StateStore::open(db, 1000);
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->put_pending_rollover({"sup", "S1", "S2", "/p", "/c", false, "rollover", ""}));
  }
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw,
                           "ALTER TABLE pending_rollovers DROP COLUMN action; ALTER TABLE "
                           "pending_rollovers DROP COLUMN focus;"
                           "DROP TABLE events; DROP TABLE runs; PRAGMA user_version=3;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(raw);
    sqlite3_close(raw);
  }
  auto s = store::StateStore::open(db, 1000);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(*s->user_version(), store::StateStore::kSchemaVersion);
  auto p = s->pending_rollover("sup");
  ASSERT_TRUE(p && *p);
  EXPECT_EQ((*p)->new_session_id, "S2");  // kept
  ASSERT_TRUE(s->append_event({1, "run", "R", "run_started", "{}"}));
  auto rows = s->events("run", "R");
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().kind, "run_started");
  ASSERT_TRUE(s->put_run(
      {"R", "/proj", "/proj/.ctxkit/runs/R", "hybrid", "running", 5, std::nullopt, "{}"}));
  auto run = s->run("R");
  ASSERT_TRUE(run && *run);
  EXPECT_EQ((*run)->mode, "hybrid");
  EXPECT_FALSE((*run)->ended_at_ms);
}

// A database of schema 4 (before pins), with a lineage in it, gains the pins and their checks and
// keeps the lineage; pins added then follow the line.
TEST(StateStore, VersionFourDatabaseGainsPinsAndKeepsItsLineage) {
  test::TempDir tmp;
  auto db = tmp / "state.db";
  {
    auto s = store::StateStore::open(db, 1000);
    ASSERT_TRUE(s);
    store::SessionRecord a;
    a.session_id = a.line_id = "A";
    store::SessionRecord b;
    b.session_id = "B";
    ASSERT_TRUE(s->record_derivation(a, b, "trim", 80, 1000, "2026-11-21T12:00:00Z"));
  }
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "DROP TABLE pins; DROP TABLE pin_checks; PRAGMA user_version=4;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(raw);
    sqlite3_close(raw);
  }
  ASSERT_EQ(first_text(db, "SELECT count(*) FROM sqlite_master WHERE name='pins'"), "0");
  auto s = store::StateStore::open(db, 1000);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(*s->user_version(), 5);
  EXPECT_EQ(*s->line_of("B"), "A");  // the lineage is kept
  EXPECT_EQ(*s->line_of("never-seen"), "never-seen");
  ASSERT_TRUE(s->add_pin({0, "line", "A", "port 8123", 1, "A"}, 100));
  auto pins = s->pins(*s->line_of("B"), "", 100);
  ASSERT_TRUE(pins);
  ASSERT_EQ(pins->size(), 1u);
  EXPECT_EQ(pins->front().text, "port 8123");
}

TEST(StateStorePins, LineAndProjectPinsTogetherOldestFirst) {
  test::TempDir tmp;
  auto s = store::StateStore::open(tmp / "state.db", 1000);
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->add_pin({0, "line", "L1", "one", 1, "S"}, 100));
  ASSERT_TRUE(s->add_pin({0, "project", "-p", "two", 2, "S"}, 100));
  ASSERT_TRUE(s->add_pin({0, "line", "L2", "other line", 3, "S"}, 100));
  ASSERT_TRUE(s->add_pin({0, "project", "-q", "other project", 4, "S"}, 100));
  auto pins = s->pins("L1", "-p", 100);
  ASSERT_TRUE(pins);
  ASSERT_EQ(pins->size(), 2u);
  EXPECT_EQ((*pins)[0].text, "one");
  EXPECT_EQ((*pins)[1].text, "two");
  EXPECT_EQ(*s->count_pins("L1", "-p"), 2);
  // An empty scope matches nothing (not the pins whose scope is "").
  EXPECT_EQ(*s->count_pins("", ""), 0);
}

TEST(StateStorePins, TheSameTextTwiceIsOnePinAndAFullScopeRefusesMore) {
  test::TempDir tmp;
  auto s = store::StateStore::open(tmp / "state.db", 1000);
  ASSERT_TRUE(s);
  bool existed = true;
  auto first = s->add_pin({0, "line", "L", "same", 1, ""}, 2, &existed);
  ASSERT_TRUE(first);
  EXPECT_FALSE(existed);
  auto again = s->add_pin({0, "line", "L", "same", 2, ""}, 2, &existed);
  ASSERT_TRUE(again);
  EXPECT_TRUE(existed);
  EXPECT_EQ(*again, *first);
  ASSERT_TRUE(s->add_pin({0, "line", "L", "second", 3, ""}, 2));
  auto third = s->add_pin({0, "line", "L", "third", 4, ""}, 2);
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().kind, Error::Kind::Invalid);
  EXPECT_EQ(third.error().message,
            "the line of work already holds 2 pins, the most it keeps: remove one first (ctx-pin "
            "rm ID)");
  // Another scope is not full.
  EXPECT_TRUE(s->add_pin({0, "project", "-p", "third", 4, ""}, 2));
}

TEST(StateStorePins, RemovesOnlyWithinItsScope) {
  test::TempDir tmp;
  auto s = store::StateStore::open(tmp / "state.db", 1000);
  ASSERT_TRUE(s);
  auto id = s->add_pin({0, "line", "L", "fact", 1, ""}, 100);
  ASSERT_TRUE(id);
  EXPECT_FALSE(*s->remove_pin(*id, "other", "-p"));
  EXPECT_TRUE(*s->remove_pin(*id, "L", ""));
  EXPECT_FALSE(*s->remove_pin(*id, "L", ""));
}

TEST(StateStorePins, ChecksAreListedByLine) {
  test::TempDir tmp;
  auto s = store::StateStore::open(tmp / "state.db", 1000);
  ASSERT_TRUE(s);
  store::PinCheckRow c;
  c.session_id = "S";
  c.line_id = "L";
  c.at_ms = 5;
  c.trigger = "manual";
  c.total = 5;
  c.kept = 3;
  c.detail = R"([{"id":1,"text":"a","kept":false}])";
  c.restored = 2;
  auto id = s->add_pin_check(c);
  ASSERT_TRUE(id);
  auto last = s->last_pin_check("S");
  ASSERT_TRUE(last && *last);
  EXPECT_EQ((*last)->kept, 3);
  EXPECT_FALSE((*last)->restored_at_ms);
  auto line = s->pin_checks_of_line("L");
  ASSERT_TRUE(line);
  ASSERT_EQ(line->size(), 1u);
  EXPECT_EQ(line->front().restored, 2);
  EXPECT_EQ(line->front().id, *id);
  EXPECT_FALSE(*s->last_pin_check("T"));
}

}  // namespace
}  // namespace ctxkit::store

namespace ctxkit::store {
namespace {

TEST(StateStore, EventsBetweenTwoTimesOldestFirstUpToALimit) {
  test::TempDir tmp;
  auto s = StateStore::open(tmp / "state.db", 1000);
  ASSERT_TRUE(s);
  for (int64_t t : {50, 10, 30, 20, 40})
    ASSERT_TRUE(s->append_event({t, t % 20 ? "run" : "workflow", "x", "k", std::to_string(t)}));
  auto rows = s->events_between(20, 40, 100);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].at_ms, 20);
  EXPECT_EQ((*rows)[0].source, "workflow");
  EXPECT_EQ((*rows)[1].at_ms, 30);
  EXPECT_EQ((*rows)[2].data, "40");
  rows = s->events_between(0, 100, 2);
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].at_ms, 20);
}

}  // namespace
}  // namespace ctxkit::store
