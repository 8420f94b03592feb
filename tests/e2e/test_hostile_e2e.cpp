// Hostile and broken input against the built programs: FIFOs, links, loose permissions, a locked
// database, deep JSON, control characters, numbers at the int64 limit. Each program must answer
// with one line and a defined exit code, never hang, never crash, never follow a link out of the
// state directory.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <utility>

#include "e2e/e2e_support.hpp"
#include "store/meter_store.hpp"
#include "store/state_store.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

json post_tool_use(const fs::path& transcript, const std::string& tool_use_id,
                   const std::string& session = "sess-1") {
  return {{"session_id", session},
          {"transcript_path", transcript.string()},
          {"cwd", transcript.parent_path().string()},
          {"hook_event_name", "PostToolUse"},
          {"tool_name", "Bash"},
          {"tool_input", {{"command", "ls"}}},
          {"tool_response", {{"stdout", "x"}}},
          {"tool_use_id", tool_use_id}};
}

json session_start(const fs::path& transcript, const std::string& session = "sess-1") {
  return {{"session_id", session},
          {"transcript_path", transcript.string()},
          {"cwd", transcript.parent_path().string()},
          {"hook_event_name", "SessionStart"},
          {"source", "startup"}};
}

// The programs run under this umask in the tests that check permissions.
struct Umask {
  mode_t old;
  explicit Umask(mode_t m) : old(::umask(m)) {}
  ~Umask() { ::umask(old); }
};

// --- FIFOs -------------------------------------------------------------------------------------

TEST(Hostile, FifoTranscriptDoesNotBlockRemind) {
  TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "t.jsonl").c_str(), 0600), 0);
  util::Env env = tmp.env();
  env.set("CTXKIT_CONTEXT_TRANSCRIPT_WAIT_MS", "0");
  auto r = run_tool("ctx-remind", {}, post_tool_use(tmp / "t.jsonl", "toolu_1").dump(), env);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "ctx-remind: no context reading: reading " + (tmp / "t.jsonl").string() +
                       ": not a regular file\n");
}

TEST(Hostile, FifoTranscriptDoesNotBlockStatus) {
  TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "t.jsonl").c_str(), 0600), 0);
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  json p = {{"session_id", "S"}, {"transcript_path", (tmp / "t.jsonl").string()}};
  auto r = run_tool("ctx-status", {}, p.dump(), env);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Context –\n");
}

TEST(Hostile, FifoTranscriptDoesNotBlockTheSessionEndArchiver) {
  TempDir tmp;
  fs::create_directories(tmp / "home/.claude/projects/-proj");
  fs::path t = tmp / "home/.claude/projects/-proj/sess-1.jsonl";
  ASSERT_EQ(::mkfifo(t.c_str(), 0600), 0);
  json p = {{"session_id", "sess-1"},
            {"transcript_path", t.string()},
            {"cwd", "/proj"},
            {"hook_event_name", "SessionEnd"},
            {"reason", "exit"}};
  auto r = run_tool("ctx-session-hook", {"--foreground"}, p.dump(), tmp.env());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string log = read_file(tmp / "home/.local/state/ctxkit/archive.log");
  EXPECT_NE(log.find("archiving " + t.string() + ": "), std::string::npos) << log;
  EXPECT_NE(log.find("not a regular file"), std::string::npos) << log;
}

// --- one stderr line ---------------------------------------------------------------------------

TEST(Hostile, ATranscriptPathWithANulByteIsNotTruncated) {
  TempDir tmp;
  std::ofstream(tmp / "t") << assistant_line("msg_1", 130000, "toolu_1")
                           << "\n";  // what the truncated path names
  json p = post_tool_use(tmp / "t", "toolu_1");
  p["transcript_path"] = (tmp / "t").string() + std::string("\0x.jsonl", 8);
  util::Env env = tmp.env();
  env.set("CTXKIT_CONTEXT_TRANSCRIPT_WAIT_MS", "0");
  auto r = run_tool("ctx-remind", {}, p.dump(), env);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "") << "a reading from another file";
  EXPECT_EQ(r.err, "ctx-remind: no context reading: opening " + (tmp / "t").string() +
                       "\\x00x.jsonl: the path contains a NUL byte\n");
}

TEST(Hostile, ControlCharactersFromTheInputAreEscapedInTheOneErrorLine) {
  TempDir tmp;
  json p = post_tool_use(tmp / "t.jsonl", "toolu_1");
  p["hook_event_name"] = "Evil\n\x1b[2Jctx-remind: error: forged";
  auto r = run_tool("ctx-remind", {}, p.dump(), tmp.env());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err,
            "ctx-remind: note: ignoring a 'Evil\\n\\x1b[2Jctx-remind: error: forged' payload (this "
            "hook handles PostToolUse)\n");
}

TEST(Hostile, EveryCommandKeepsItsErrorOnOneLine) {
  TempDir tmp;
  const std::string evil = "nope\n\x1b[2Jforged: error: x";
  for (const auto& [program, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"ctx-trim", {evil}},
           {"ctx-rollover", {"--summary-file", (tmp / "s.md").string(), "--session", evil}},
           {"ctx-workflow", {"--worktree", tmp.path().string(), "validate", evil}},
           {"ctx-workflow-mcp",
            {"--worktree", tmp.path().string(), "--workflow-path", evil, "--workflow", "x"}}}) {
    tmp.write("s.md", "### Current Task\nx\n");
    auto r = run_tool(program, args, "", tmp.env());
    EXPECT_NE(r.exit_code, 0) << program;
    EXPECT_EQ(line_count(r.err), 1u) << program << ": " << r.err;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << program << ": " << r.err;
  }
}

TEST(Hostile, ALongEventNameIsCutInTheOneErrorLine) {
  TempDir tmp;
  json p = post_tool_use(tmp / "t.jsonl", "toolu_1");
  p["hook_event_name"] = std::string(5000, 'x') + "\nsecond line";
  auto r = run_tool("ctx-remind", {}, p.dump(), tmp.env());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_LT(r.err.size(), 2100u);
  EXPECT_TRUE(r.err.ends_with("…\n")) << r.err.substr(r.err.size() - 20);
}

TEST(Hostile, SettingsPathWithANewlineStaysOnOneLine) {
  TempDir tmp;
  fs::create_directories(tmp / "d\nx");
  auto r = run_tool("ctx-settings",
                    {"install", "--settings", (tmp / "d\nx").string(), "--bin-dir", "/b"}, "",
                    tmp.env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "ctx-settings: error: reading " + tmp.path().string() +
                       "/d\\nx: not a regular file (nothing written)\n");
}

// --- permissions and links in the state directory ----------------------------------------------

TEST(Hostile, StateDirectoryIsPrivateUnderUmask000) {
  TempDir tmp;
  fs::path t = tmp / "t.jsonl";
  std::ofstream(t) << assistant_line("msg_1", 130000, "toolu_1") << "\n";
  Umask u(0);  // inherited by the program
  auto r = run_tool("ctx-remind", {}, post_tool_use(t, "toolu_1").dump(), tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(mode_of(tmp / "home/.local/state"), 0700u);  // a missing parent is made private too
  EXPECT_EQ(mode_of(tmp / "home/.local/state/ctxkit"), 0700u);
  EXPECT_EQ(mode_of(tmp / "home/.local/state/ctxkit/meter.db"), 0600u);
}

TEST(Hostile, AGroupWritableStateDirectoryOfOursIsTightened) {
  TempDir tmp;
  fs::path state = tmp / "home/.local/state/ctxkit";
  fs::create_directories(state);
  ::chmod(state.c_str(), 0777);
  fs::path t = tmp / "t.jsonl";
  std::ofstream(t) << assistant_line("msg_1", 130000, "toolu_1") << "\n";
  auto r = run_tool("ctx-remind", {}, post_tool_use(t, "toolu_1").dump(), tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(mode_of(state), 0700u);
}

TEST(Hostile, AStateDirectoryOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  TempDir tmp;
  fs::path state = tmp / "home/.local/state/ctxkit";
  fs::create_directories(state);
  ASSERT_EQ(::chown(state.c_str(), 65534, 65534), 0);
  ::chmod(state.c_str(), 0777);
  fs::path t = tmp / "t.jsonl";
  std::ofstream(t) << assistant_line("msg_1", 130000, "toolu_1") << "\n";
  auto r = run_tool("ctx-remind", {}, post_tool_use(t, "toolu_1").dump(), tmp.env());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(fs::exists(state / "meter.db"));
  EXPECT_EQ(line_count(r.err), 1u);
  EXPECT_NE(r.err.find("belongs to another user (uid 65534)"), std::string::npos) << r.err;
}

TEST(Hostile, AStateDatabaseLinkIsNotFollowed) {
  TempDir tmp;
  fs::path state = tmp / "home/.local/state/ctxkit";
  fs::create_directories(state);
  fs::path victim = tmp.write("victim", "");  // an empty file SQLite would happily fill
  fs::create_symlink(victim, state / "state.db");
  fs::path t = tmp / "t.jsonl";
  std::ofstream(t) << assistant_line("msg_1", 130000, "toolu_1") << "\n";
  // As the client runs it (the session recorded after the hook's output, detached: the reason it
  // could not be is left in the archive's log), and in the hook's own process (on stderr).
  auto r = run_tool("ctx-session-hook", {}, session_start(t).dump(), tmp.env());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  std::string log;
  for (int i = 0; i < 200 && log.find("a symbolic link (refused)") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    log = read_file(state / "archive.log");
  }
  EXPECT_NE(log.find("a symbolic link (refused)"), std::string::npos) << log;
  EXPECT_EQ(read_file(victim), "");
  EXPECT_TRUE(fs::is_symlink(state / "state.db"));
  auto here = run_tool("ctx-session-hook", {"--foreground"}, session_start(t).dump(), tmp.env());
  EXPECT_EQ(here.exit_code, 0);
  EXPECT_NE(here.err.find("a symbolic link (refused)"), std::string::npos) << here.err;
  EXPECT_EQ(read_file(victim), "");
  EXPECT_TRUE(fs::is_symlink(state / "state.db"));
}

// ctx-remind's own database refuses a link; creating it reads a state database of before the
// meter database, which is not followed through a link either.
TEST(Hostile, AMeterDatabaseLinkIsNotFollowedNorAStateDatabaseLinkReadFrom) {
  TempDir tmp;
  fs::path state = tmp / "home/.local/state/ctxkit";
  fs::create_directories(state);
  fs::path victim = tmp.write("victim", "");
  fs::create_symlink(victim, state / "meter.db");
  fs::path t = tmp / "t.jsonl";
  std::ofstream(t) << assistant_line("msg_1", 130000, "toolu_1") << "\n";
  auto r = run_tool("ctx-remind", {}, post_tool_use(t, "toolu_1").dump(), tmp.env());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(read_file(victim), "");
  EXPECT_TRUE(fs::is_symlink(state / "meter.db"));
  EXPECT_NE(r.err.find("a symbolic link (refused)"), std::string::npos) << r.err;

  fs::remove(state / "meter.db");
  fs::create_symlink(victim, state / "state.db");
  r = run_tool("ctx-remind", {}, post_tool_use(t, "toolu_1").dump(), tmp.env());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(read_file(victim), "");
  EXPECT_TRUE(fs::is_regular_file(state / "meter.db"));
}

TEST(Hostile, AnArchiveLogLinkIsNotFollowed) {
  TempDir tmp;
  fs::path state = tmp / "home/.local/state/ctxkit";
  fs::create_directories(state);
  fs::path victim = tmp.write("victim", "do not touch\n");
  fs::create_symlink(victim, state / "archive.log");
  fs::create_directories(tmp / "home/.claude/projects/-proj");
  fs::path t = tmp / "home/.claude/projects/-proj/sess-1.jsonl";
  ASSERT_EQ(::mkfifo(t.c_str(), 0600), 0);  // archiving fails, so the archiver writes its log
  json p = {{"session_id", "sess-1"},
            {"transcript_path", t.string()},
            {"cwd", "/proj"},
            {"hook_event_name", "SessionEnd"},
            {"reason", "exit"}};
  auto r = run_tool("ctx-session-hook", {"--foreground"}, p.dump(), tmp.env());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(read_file(victim), "do not touch\n");
}

// --- a locked database that is not migrated yet ------------------------------------------------

TEST(Hostile, LockedUnmigratedMeterDatabaseGivesSilence) {
  TempDir tmp;
  fs::path state = tmp / "home/.local/state/ctxkit";
  fs::create_directories(state);
  fs::path db = state / "meter.db";
  fs::path t = tmp / "t.jsonl";
  std::ofstream(t) << assistant_line("msg_1", 130000, "toolu_1") << "\n";
  if (::access("/usr/bin/sqlite3", X_OK) != 0) GTEST_SKIP() << "needs the sqlite3 shell";
  // Another process holds an exclusive transaction on a fresh (version 0) database until the
  // test lets it go (the release file; 30 s at most).
  const fs::path release = tmp / "release";
  const std::string hold = ".shell i=0; while [ ! -e '" + release.string() +
                           "' ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i+1)); done";
  util::SpawnSpec holder_spec;
  holder_spec.argv = {"sh", "-c",
                      "exec sqlite3 \"$0\" 'BEGIN EXCLUSIVE; CREATE TABLE x(a); SELECT 1;' \"$1\" "
                      "'COMMIT;' >/dev/null 2>&1",
                      db.string(), hold};
  auto holder = util::Child::spawn(holder_spec);
  ASSERT_TRUE(holder) << holder.error().message;
  for (int i = 0; i < 1500 && !fs::exists(state / "meter.db-journal"); ++i) ::usleep(20000);
  ASSERT_TRUE(fs::exists(state / "meter.db-journal"));
  util::Env env = tmp.env();
  env.set("CTXKIT_STATE_BUSY_TIMEOUT_MS", "50");
  auto r = run_tool("ctx-remind", {}, post_tool_use(t, "toolu_1").dump(), env);
  std::ofstream(release) << "";
  EXPECT_TRUE(holder->wait_for(std::chrono::seconds(30))) << "the lock holder did not end";
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "") << "a locked database must give silence, not an unlimited reminder";
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("locked"), std::string::npos) << r.err;
}

// Runs `sql` on `db` with the sqlite3 shell in a process that keeps its transaction open until
// `release` exists (30 s at most); returns once the transaction holds its locks (the shell
// touches `release`.held then).
std::optional<util::Child> hold_database(const fs::path& db, const std::string& sql,
                                         const fs::path& release) {
  const fs::path held = release.string() + ".held";
  const std::string wait = ".shell touch '" + held.string() + "'; i=0; while [ ! -e '" +
                           release.string() +
                           "' ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i+1)); done";
  util::SpawnSpec spec;
  spec.argv = {"sh",        "-c", "exec sqlite3 \"$0\" \"$1\" \"$2\" 'COMMIT;' >/dev/null 2>&1",
               db.string(), sql,  wait};
  auto child = util::Child::spawn(spec);
  EXPECT_TRUE(child) << child.error().message;
  if (!child) return std::nullopt;
  for (int i = 0; i < 1500 && !fs::exists(held); ++i) ::usleep(20000);
  EXPECT_TRUE(fs::exists(held)) << "the lock holder did not start";
  return std::move(*child);
}

// ctx-remind on `t` while another process holds `state.db`, with a busy timeout of a minute:
// whether it answered within 30 s while the lock was held (the hang guard), and its result.
std::pair<bool, util::ProcessResult> remind_beside_a_held_state_database(const TempDir& tmp,
                                                                         const fs::path& t,
                                                                         const std::string& sql) {
  const fs::path release = tmp / "release";
  auto holder = hold_database(tmp / "home/.local/state/ctxkit/state.db", sql, release);
  util::Env env = tmp.env();
  env.set("CTXKIT_STATE_BUSY_TIMEOUT_MS", "60000");
  auto run = std::async(std::launch::async, [&] {
    return run_tool("ctx-remind", {}, post_tool_use(t, "toolu_1").dump(), env);
  });
  const bool answered = run.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  std::ofstream(release) << "";
  auto r = run.get();
  if (holder) {
    EXPECT_TRUE(holder->wait_for(std::chrono::seconds(30))) << "the holder did not end";
  }
  return {answered, r};
}

// A meter database is made beside a state database that another process is writing (a session
// hook recording lineage): its earlier figures are read beside the writer, without waiting for
// it, and the reminder's rate limit they hold is kept.
TEST(Hostile, AMeterDatabaseIsMadeWithoutWaitingForAStateDatabaseBeingWritten) {
  if (::access("/usr/bin/sqlite3", X_OK) != 0) GTEST_SKIP() << "needs the sqlite3 shell";
  TempDir tmp;
  const fs::path state = tmp / "home/.local/state/ctxkit";
  fs::path t = tmp / "t.jsonl";
  std::ofstream(t) << assistant_line("msg_1", 130000, "toolu_1") << "\n";
  // The reminder a ctxkit of before the meter database fired, kept in its state database.
  auto first = run_tool("ctx-remind", {}, post_tool_use(t, "toolu_1").dump(), tmp.env());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_NE(first.out, "");
  std::optional<core::ReminderState> fired;
  {
    auto meter = store::MeterStore::open(state / "meter.db", 1000);
    ASSERT_TRUE(meter);
    auto row = meter->row("sess-1", "");
    ASSERT_TRUE(row && row->reminder);
    fired = row->reminder;
  }
  for (const char* f : {"meter.db", "meter.db-wal", "meter.db-shm"}) fs::remove(state / f);
  ASSERT_TRUE(store::StateStore::open(state / "state.db", 1000));
  util::ProcessSpec put;
  put.argv = {"sqlite3", (state / "state.db").string(),
              fmt::format("INSERT INTO reminders VALUES('sess-1', '', {}, {})", fired->tier,
                          fired->fired_at_ms)};
  auto done = util::run_process(put);
  ASSERT_TRUE(done && done->exit_code == 0) << (done ? done->err : done.error().message);

  auto [answered, r] = remind_beside_a_held_state_database(
      tmp, t,
      "BEGIN IMMEDIATE; INSERT INTO events(at_ms, source, scope, kind, data) "
      "VALUES(1, 'test', '', 'held', '{}');");
  EXPECT_TRUE(answered) << "ctx-remind waited for the state database's writer";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "") << "the reminder fired before was forgotten";
  auto meter = store::MeterStore::open(state / "meter.db", 1000);
  ASSERT_TRUE(meter);
  auto row = meter->row("sess-1", "");
  ASSERT_TRUE(row && row->reminder);
  EXPECT_EQ(row->reminder->tier, fired->tier);
}

// A state database that cannot even be read (another process holds it exclusively) is not
// waited for either: the meter database is made without its figures and the reminder is given.
TEST(Hostile, AMeterDatabaseIsMadeWithoutWaitingForAStateDatabaseHeldExclusively) {
  if (::access("/usr/bin/sqlite3", X_OK) != 0) GTEST_SKIP() << "needs the sqlite3 shell";
  TempDir tmp;
  const fs::path state = tmp / "home/.local/state/ctxkit";
  fs::path t = tmp / "t.jsonl";
  std::ofstream(t) << assistant_line("msg_1", 130000, "toolu_1") << "\n";
  fs::create_directories(state);
  auto [answered, r] = remind_beside_a_held_state_database(
      tmp, t, "BEGIN EXCLUSIVE; CREATE TABLE reminders(a); SELECT 1;");
  EXPECT_TRUE(answered) << "ctx-remind waited for the state database's holder";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("Context at "), std::string::npos) << r.out;
  auto meter = store::MeterStore::open(state / "meter.db", 1000);
  ASSERT_TRUE(meter);
  auto row = meter->row("sess-1", "");
  ASSERT_TRUE(row && row->reminder);
}

// --- ctx-settings ------------------------------------------------------------------------------

TEST(Hostile, SettingsThatIsADirectoryLeavesNoBackup) {
  TempDir tmp;
  fs::create_directories(tmp / "home/.claude/settings.json");
  auto r = run_tool(
      "ctx-settings",
      {"install", "--settings", (tmp / "home/.claude/settings.json").string(), "--bin-dir", "/b"},
      "", tmp.env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "ctx-settings: error: reading " + (tmp / "home/.claude/settings.json").string() +
                       ": not a regular file (nothing written)\n");
  for (const auto& e : fs::directory_iterator(tmp / "home/.claude"))
    EXPECT_EQ(e.path().filename(), "settings.json") << "left behind: " << e.path();
}

TEST(Hostile, SettingsThatIsAFifoDoesNotHang) {
  TempDir tmp;
  fs::create_directories(tmp / "home/.claude");
  fs::path s = tmp / "home/.claude/settings.json";
  ASSERT_EQ(::mkfifo(s.c_str(), 0600), 0);
  auto r = run_tool("ctx-settings", {"install", "--settings", s.string(), "--bin-dir", "/b"}, "",
                    tmp.env());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "ctx-settings: error: reading " + s.string() +
                       ": not a regular file (nothing written)\n");
}

TEST(Hostile, DeeplyNestedSettingsAreRefusedNotACrash) {
  TempDir tmp;
  std::string deep = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  fs::path s = tmp.write("home/.claude/settings.json", deep);
  auto r = run_tool("ctx-settings", {"install", "--settings", s.string(), "--bin-dir", "/b"}, "",
                    tmp.env());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "ctx-settings: error: " + s.string() +
                       ": nested deeper than 256 levels (nothing written)\n");
  EXPECT_EQ(read_file(s), deep);
}

// --- numbers at the int64 limit ----------------------------------------------------------------

// A usage no window can hold is no reading: one stderr line, the placeholder, nothing recorded.
TEST(Hostile, StatusLineCountsNoWindowCanHoldAreNoReading) {
  TempDir tmp;
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  json p = json::parse(
      R"({"session_id":"S","context_window":{"context_window_size":200000,"current_usage":)"
      R"({"input_tokens":9223372036854775807,"cache_creation_input_tokens":9223372036854775807,)"
      R"("cache_read_input_tokens":1e300}}})");
  p["transcript_path"] = (tmp / "t.jsonl").string();
  auto r = run_tool("ctx-status", {}, p.dump(), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Context –\n");
  EXPECT_EQ(r.err,
            "ctx-status: status-line input: a context usage of 9223372036854775807 tokens cannot "
            "be a real reading\n");
  auto store = store::MeterStore::open(tmp / "home/.local/state/ctxkit/meter.db", 1000);
  ASSERT_TRUE(store);
  auto row = store->row("S", "");
  ASSERT_TRUE(row);
  EXPECT_FALSE(row->status);
}

TEST(Hostile, NegativeStatusLineCountsCountZero) {
  TempDir tmp;
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  auto r = run_tool(
      "ctx-status", {},
      R"({"session_id":"S","context_window":{"context_window_size":-5,"current_usage":)"
      R"({"input_tokens":-9223372036854775808,"cache_creation_input_tokens":0,"cache_read_input_tokens":-1}}})",
      env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Context 0% of window · 0 of 200k\n");
}

// The same in the transcript: the count is held at the limit (no overflow), and no window holds
// it, so it is no reading: no reminder, one stderr line, nothing recorded.
TEST(Hostile, TranscriptUsageNoWindowCanHoldIsNoReadingInRemind) {
  TempDir tmp;
  fs::path t = tmp / "t.jsonl";
  std::string line = assistant_line("msg_1", 1, "toolu_1");
  auto pos = line.find("\"cache_read_input_tokens\":1");
  line.replace(pos, std::string("\"cache_read_input_tokens\":1").size(),
               "\"cache_read_input_tokens\":18446744073709551615");
  std::ofstream(t) << line << "\n";
  auto r = run_tool("ctx-remind", {}, post_tool_use(t, "toolu_1").dump(), tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "ctx-remind: no context reading: a context usage of 9223372036854775807 tokens "
            "in " +
                t.string() + " cannot be a real reading\n");
  auto store = store::MeterStore::open(tmp / "home/.local/state/ctxkit/meter.db", 1000);
  ASSERT_TRUE(store);
  auto row = store->row("sess-1", "");
  ASSERT_TRUE(row);
  EXPECT_FALSE(row->reminder);
  EXPECT_FALSE(row->large_window);
}

// ctx-trim and the detached indexer make the archive: every folder under the state directory is
// private and the index cannot be swapped for a link, whatever the umask.
TEST(Hostile, TrimUnderUmaskZeroKeepsTheArchivePrivate) {
  RecordedSession r;
  {
    Umask u(0);
    auto t = run_tool("ctx-trim", {RecordedSession::kId}, "", r.env);
    ASSERT_EQ(t.exit_code, 0) << t.err;
    auto s = run_tool("ctx-search", {"anything"}, "", r.env);  // finishes the indexing itself
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  const fs::path state = r.state();
  size_t dirs = 0;
  for (auto it = fs::recursive_directory_iterator(state); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->is_symlink()) ADD_FAILURE() << it->path() << " is a link";
    if (it->is_directory()) {
      ++dirs;
      EXPECT_EQ(mode_of(it->path()), 0700u) << it->path();
    } else if (it->is_regular_file()) {
      EXPECT_EQ(mode_of(it->path()) & 0077, 0u) << it->path();
    }
  }
  EXPECT_GE(dirs, 2u);  // archive/ and the project's folder at least
  EXPECT_EQ(mode_of(state), 0700u);
}

TEST(Hostile, AnIndexThatIsALinkIsNotOpened) {
  RecordedSession r;
  fs::create_directories(r.state() / "archive");
  ::chmod(r.state().c_str(), 0700);
  ::chmod((r.state() / "archive").c_str(), 0700);
  const fs::path elsewhere = r.tmp / "elsewhere.db";
  fs::create_symlink(elsewhere, r.state() / "archive/index.db");
  ASSERT_EQ(run_tool("ctx-trim", {RecordedSession::kId}, "", r.env).exit_code, 0);
  ASSERT_TRUE(
      fs::exists(r.state() / "archive/-proj" /
                 (std::string(RecordedSession::kId) + ".jsonl")));  // there is something to index
  auto s = run_tool("ctx-search", {"anything"}, "", r.env);
  // ctx-search went to open the index and refused the link, in one line.
  EXPECT_EQ(s.exit_code, 1) << s.out << s.err;
  EXPECT_EQ(line_count(s.err), 1u) << s.err;
  EXPECT_NE(s.err.find((r.state() / "archive/index.db").string()), std::string::npos) << s.err;
  EXPECT_FALSE(fs::exists(elsewhere)) << "the index was written through the link";
  EXPECT_TRUE(fs::is_symlink(r.state() / "archive/index.db"));
}

}  // namespace
}  // namespace ctxkit::test
