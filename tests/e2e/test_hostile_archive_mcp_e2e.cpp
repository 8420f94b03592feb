// Hostile and broken input against ctx-archive-mcp: what a client, another process or a crash
// can hand it on stdin and in the archive's folder. The server answers each message (or says in
// one line why not) and goes on; it never hangs, crashes or follows a link.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <thread>

#include "archive/indexer.hpp"
#include "core/config.hpp"
#include "e2e/e2e_support.hpp"
#include "e2e/mcp_client.hpp"
#include "util/process.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

const std::string kSid = RecordedSession::kId;

std::string tool_result_line(const std::string& text) {
  return json{{"type", "user"},
              {"sessionId", kSid},
              {"uuid", "u-unique"},
              {"timestamp", "2026-11-21T13:00:00.000Z"},
              {"cwd", "/home/me/proj"},
              {"message",
               {{"role", "user"},
                {"content",
                 json::array(
                     {{{"type", "tool_result"}, {"tool_use_id", "toolu_x"}, {"content", text}}})}}}}
             .dump() +
         "\n";
}

void end_session(const RecordedSession& s) {
  json payload{{"session_id", kSid},
               {"transcript_path", s.transcript.string()},
               {"cwd", "/home/me/proj"},
               {"hook_event_name", "SessionEnd"},
               {"reason", "exit"}};
  auto r = run_tool("ctx-session-hook", {"SessionEnd", "--foreground"}, payload.dump(), s.env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// A session whose tool result holds `marker`, archived and indexed.
struct Archived {
  RecordedSession s;
  explicit Archived(const std::string& marker = "WALRUS_PLUM_7310") {
    std::ofstream(s.transcript, std::ios::app)
        << tool_result_line("build failed: " + marker + " in module loader");
    end_session(s);
  }
  fs::path archive() const { return s.state() / "archive"; }
};

struct Server {
  TempDir logs;
  McpClient client;
  explicit Server(const util::Env& env)
      : client({bin_dir() + "/ctx-archive-mcp"}, env, logs / "stderr") {
    client.initialize();
  }
  std::string err() const {
    std::ifstream in(logs / "stderr");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // archive_search's answer (text parsed), failing the test on a tool error.
  json search(const json& args) {
    json r = client.call("archive_search", args);
    EXPECT_FALSE(r.is_null());
    EXPECT_FALSE(r.value("isError", true)) << r.dump();
    return r.is_null() || r.value("isError", true) ? json() : McpClient::text_json(r);
  }
  std::string tool_error(const std::string& tool, const json& args) {
    json r = client.call(tool, args);
    EXPECT_TRUE(r.value("isError", false)) << r.dump();
    return r.is_null() ? std::string() : r["content"][0]["text"].get<std::string>();
  }
  // The server still answers.
  bool alive() {
    json r = client.request("ping");
    return r.is_object() && r.contains("result");
  }
};

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

TEST(HostileArchiveMcp, BrokenMessagesAreAnsweredOneByOneAndTheServerGoesOn) {
  Archived a;
  Server server(a.s.env);
  // 100,000-deep JSON.
  server.client.write_raw(std::string(100000, '[') + "\n");
  auto deep = server.client.read_line();
  ASSERT_TRUE(deep);
  EXPECT_EQ(json::parse(*deep)["error"]["code"], -32700) << *deep;
  // NUL bytes inside a message.
  server.client.write_raw(std::string("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"") + '\0' +
                          "}\n");
  auto nul = server.client.read_line();
  ASSERT_TRUE(nul);
  EXPECT_TRUE(json::parse(*nul).contains("error")) << *nul;
  // Control characters, raw (invalid JSON) and escaped (a valid query).
  server.client.write_raw(
      "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\",\"x\":\"\x01\x1b[2J\"}\n");
  auto ctl = server.client.read_line();
  ASSERT_TRUE(ctl);
  EXPECT_TRUE(json::parse(*ctl).contains("error")) << *ctl;
  json q = server.search({{"query", std::string("WALRUS_PLUM_7310 \x01\x1b[2J\x7f")}});
  EXPECT_TRUE(q.contains("hits")) << q.dump();
  // Unknown methods, wrong types of params.
  EXPECT_EQ(server.client.request("no/such/method")["error"]["code"], -32601);
  for (const json& params : {json::array({1, 2}), json{{"name", 5}},
                             json{{"name", "archive_search"}, {"arguments", json::array()}}}) {
    json r = server.client.request("tools/call", params);
    EXPECT_TRUE(r.contains("error") || r["result"].value("isError", false)) << r.dump();
  }
  json as_string =
      server.client.request("tools/call", {{"name", "archive_search"}, {"arguments", "WALRUS"}});
  EXPECT_TRUE(as_string.contains("error") || as_string["result"].value("isError", false))
      << as_string.dump();
  EXPECT_EQ(server.tool_error("archive_search", {{"query", json::array({"a"})}}),
            "query must be a string");
  EXPECT_EQ(server.tool_error("archive_show", {{"session", 42}, {"line", 1}}),
            "session must be a string");
  EXPECT_TRUE(server.alive());
  EXPECT_EQ(server.search({{"query", "WALRUS_PLUM_7310"}})["hits"].size(), 1u);
}

TEST(HostileArchiveMcp, AHugeLineIsRefusedWithoutBeingHeld) {
  Archived a;
  Server server(a.s.env);
  std::string huge = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"pad\":\"" +
                     std::string(17u << 20, 'x') + "\"}\n";
  std::thread writer([&] { server.client.write_raw(huge); });
  auto answer = server.client.read_line(30s);
  writer.join();
  ASSERT_TRUE(answer);
  EXPECT_TRUE(json::parse(*answer).contains("error")) << answer->substr(0, 200);
  EXPECT_TRUE(server.alive());
}

TEST(HostileArchiveMcp, ALastLineWithoutNewlineIsAnsweredBeforeTheServerEnds) {
  Archived a;
  Server server(a.s.env);
  server.client.write_raw(
      json{{"jsonrpc", "2.0"},
           {"id", 99},
           {"method", "tools/call"},
           {"params", {{"name", "archive_search"}, {"arguments", {{"query", "WALRUS_PLUM_7310"}}}}}}
          .dump());
  server.client.close_input();
  auto answer = server.client.read_line();
  ASSERT_TRUE(answer);
  json r = json::parse(*answer);
  EXPECT_EQ(r["id"], 99);
  EXPECT_EQ(McpClient::text_json(r["result"])["hits"].size(), 1u) << *answer;
  EXPECT_EQ(server.client.wait(), 0);
}

TEST(HostileArchiveMcp, QueriesInFts5SyntaxAreWordsNotOperators) {
  Archived a("NEAR_STAR_4411");
  Server server(a.s.env);
  for (const char* q :
       {"\"NEAR(", "*", "-", "NEAR(", "\"", "\"\"", "^", "body:", "a OR b", "NOT", "AND", "(", ")",
        "+", "x*", "{body}: y", "NEAR_STAR_4411 *", "* NEAR_STAR_4411 -", "- NEAR_STAR_4411"}) {
    json r = server.client.call("archive_search", {{"query", q}});
    ASSERT_TRUE(r.is_object()) << q;
    EXPECT_FALSE(r.value("isError", false)) << q << ": " << r.dump();
  }
  // Punctuation beside a word leaves the word to find.
  EXPECT_EQ(server.search({{"query", "* NEAR_STAR_4411 -"}})["hits"].size(), 1u);
  EXPECT_EQ(server.search({{"query", "\"NEAR_STAR_4411\""}})["hits"].size(), 1u);
  EXPECT_TRUE(server.alive());
}

// A NUL would end FTS5's reading of the quoted word: it separates words, as a space does. What
// goes wrong with a query is said without the index's path.
TEST(HostileArchiveMcp, AQueryWithANulIsSearched) {
  Archived a;
  Server server(a.s.env);
  json r = server.client.call("archive_search",
                              {{"query", std::string("WALRUS_PLUM_7310\0module", 23)}});
  ASSERT_TRUE(r.is_object());
  EXPECT_FALSE(r.value("isError", false)) << r.dump();
  EXPECT_EQ(r.dump().find(a.archive().string()), std::string::npos) << r.dump();
  EXPECT_EQ(McpClient::text_json(r)["hits"].size(), 1u) << r.dump();
  EXPECT_EQ(server.tool_error("archive_search", {{"query", std::string("\0\x01", 2)}}),
            "query is empty: give the words to find");
}

// An archived transcript replaced by a FIFO: no call blocks on it, and the server still ends on
// SIGTERM.
TEST(HostileArchiveMcp, ATranscriptReplacedByAFifoBlocksNoCall) {
  Archived a;
  const fs::path archived = a.archive() / "-proj" / (kSid + ".jsonl");
  ASSERT_TRUE(fs::is_regular_file(archived));
  Server server(a.s.env);
  EXPECT_EQ(server.search({{"query", "WALRUS_PLUM_7310"}})["hits"].size(), 1u);
  fs::remove(archived);
  ASSERT_EQ(::mkfifo(archived.c_str(), 0600), 0);
  json r = server.client.call("archive_search", {{"query", "WALRUS_PLUM_7310"}});
  ASSERT_TRUE(r.is_object()) << "no answer";
  EXPECT_FALSE(r.value("isError", false)) << r.dump();
  json shown = server.client.call("archive_show", {{"session", kSid + ":1"}});
  ASSERT_TRUE(shown.is_object()) << "no answer";
  EXPECT_TRUE(shown.value("isError", false)) << shown.dump();
  server.client.kill(SIGTERM);
  EXPECT_EQ(server.client.wait(), 0);
}

// A call held up (here by another process's lock on the index) does not keep SIGTERM from ending
// the server: it ends at once, by that signal.
TEST(HostileArchiveMcp, SigtermDuringACallEndsTheServer) {
  Archived a;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((a.archive() / "index.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(
                db, "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; DELETE FROM messages WHERE 0;",
                nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  TempDir logs;
  McpClient client({bin_dir() + "/ctx-archive-mcp", "--verbose"}, a.s.env, logs / "stderr");
  client.initialize();
  client.send({{"jsonrpc", "2.0"},
               {"id", 77},
               {"method", "tools/call"},
               {"params", {{"name", "archive_search"}, {"arguments", {{"query", "WALRUS"}}}}}});
  // The server logs the call before it handles it.
  bool in_call = false;
  for (int i = 0; i < 1000 && !in_call; ++i) {
    in_call = fs::exists(logs / "stderr") &&
              read_file(logs / "stderr").find("<- tools/call id=77") != std::string::npos;
    if (!in_call) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(in_call);
  client.kill(SIGTERM);
  EXPECT_EQ(client.wait(), 128 + SIGTERM);
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
}

// A word said ten thousand times, or one word of thousands of tokens: each is a phrase FTS5 walks
// the messages of, so the query is refused in one line instead of keeping the server busy.
TEST(HostileArchiveMcp, AQueryOfEndlessWordsIsRefusedAtOnce) {
  RecordedSession s;
  std::string lines;
  for (int i = 0; i < 300; ++i)
    lines += tool_result_line("the common words of line " + std::to_string(i) + " are the same");
  std::ofstream(s.transcript, std::ios::app) << lines;
  end_session(s);
  Server server(s.env);
  std::string many;
  for (int i = 0; i < 10000; ++i) many += "the ";
  std::string dotted;
  for (int i = 0; i < 20000; ++i) dotted += "a.";
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(server.tool_error("archive_search", {{"query", many}}),
            "the query is 40000 bytes long; give at most 2048");
  EXPECT_EQ(server.tool_error("archive_search", {{"query", dotted}}),
            "the query is 40000 bytes long; give at most 2048");
  std::string words;
  for (int i = 0; i < 65; ++i) words += "w ";
  EXPECT_EQ(server.tool_error("archive_search", {{"query", words}}),
            "the query has 65 words; give at most 64");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  // 64 words are searched.
  std::string most;
  for (int i = 0; i < 32; ++i) most += "the common ";
  EXPECT_FALSE(server.search({{"query", most}})["hits"].empty());
}

TEST(HostileArchiveMcp, AbsurdNumbersAreToolErrors) {
  Archived a;
  Server server(a.s.env);
  EXPECT_EQ(server.tool_error("archive_search", {{"query", "x"}, {"limit", 1000000000000000000LL}}),
            "limit must be from 1 to 50");
  EXPECT_EQ(server.tool_error("archive_search", {{"query", "x"}, {"limit", -1}}),
            "limit must be from 1 to 50");
  EXPECT_EQ(server.tool_error("archive_search", {{"query", "x"}, {"limit", 1e300}}),
            "limit must be an integer");
  EXPECT_EQ(server.tool_error("archive_search", {{"query", "x"}, {"limit", -1e19}}),
            "limit must be an integer");
  EXPECT_EQ(server.search({{"query", "WALRUS_PLUM_7310"}, {"limit", 10.0}})["hits"].size(), 1u);
  EXPECT_EQ(server.tool_error("archive_search", {{"query", "x"}, {"limit", 2.5}}),
            "limit must be an integer");
  EXPECT_EQ(server.tool_error("archive_search", {{"query", "x"}, {"limit", "10"}}),
            "limit must be an integer");
  EXPECT_EQ(server.tool_error("archive_show", {{"session", kSid}, {"line", -5}}),
            "line must be from 1 to 9223372036854775807");
  EXPECT_EQ(server.tool_error("archive_show", {{"session", kSid}, {"line", 0}}),
            "line must be from 1 to 9223372036854775807");
  EXPECT_EQ(server.tool_error("archive_show", {{"session", kSid + ":-5"}}),
            "session '" + kSid + ":-5' is not SESSION or SESSION:LINE");
  EXPECT_EQ(server.tool_error("archive_show", {{"session", kSid}, {"line", 1e30}}),
            "line must be an integer");
  EXPECT_EQ(server.tool_error("archive_show", {{"session", kSid}, {"line", 9223372036854775807LL}}),
            "session " + kSid + " has no line 9223372036854775807");
  EXPECT_EQ(server.tool_error("archive_show", {{"session", kSid}, {"line", 1}, {"before", -1}}),
            "before must be from 0 to 20");
  EXPECT_EQ(server.tool_error("archive_show", {{"session", kSid + ":99999999999999999999"}}),
            "session '" + kSid + ":99999999999999999999' is not SESSION or SESSION:LINE");
  EXPECT_TRUE(server.alive());
}

// Another process holds the index's database locked (exclusive locking mode, a write
// transaction open): a search answers within the busy timeout, with what it can or one line why.
TEST(HostileArchiveMcp, ALockedIndexIsAnsweredWithinBoundedTime) {
  Archived a;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((a.archive() / "index.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(
                db, "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; DELETE FROM messages WHERE 0;",
                nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  Server server(a.s.env);
  const auto t0 = std::chrono::steady_clock::now();
  json r = server.client.call("archive_search", {{"query", "WALRUS_PLUM_7310"}});
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(r.is_object());
  EXPECT_LT(took, 9s);
  if (r.value("isError", false)) {
    const std::string text = r["content"][0]["text"];
    EXPECT_EQ(text.find('\n'), std::string::npos) << text;
    EXPECT_NE(text.find("locked"), std::string::npos) << text;
  }
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  // Once the lock is gone, the same server answers again.
  std::this_thread::sleep_for(1100ms);
  EXPECT_EQ(server.search({{"query", "WALRUS_PLUM_7310"}})["hits"].size(), 1u);
}

TEST(HostileArchiveMcp, AMissingIndexIsRebuiltFromTheArchive) {
  Archived a;
  for (const auto& e : fs::directory_iterator(a.archive()))
    if (e.path().filename().string().starts_with("index")) fs::remove(e.path());
  Server server(a.s.env);
  EXPECT_EQ(server.search({{"query", "WALRUS_PLUM_7310"}})["hits"].size(), 1u);
}

TEST(HostileArchiveMcp, ACorruptIndexIsMovedAsideAndRebuilt) {
  Archived a;
  for (const auto& e : fs::directory_iterator(a.archive()))
    if (e.path().filename().string().starts_with("index")) fs::remove(e.path());
  std::ofstream(a.archive() / "index.db") << std::string(8192, 'Z');
  Server server(a.s.env);
  json r = server.search({{"query", "WALRUS_PLUM_7310"}});
  EXPECT_EQ(r["hits"].size(), 1u) << r.dump();
  bool aside = false;
  for (const auto& e : fs::directory_iterator(a.archive()))
    aside = aside || e.path().filename().string().starts_with("index.db.corrupt-");
  EXPECT_TRUE(aside);
}

// What a folder holds: each entry's name and size, recursively.
std::map<std::string, uintmax_t> listing(const fs::path& dir) {
  std::map<std::string, uintmax_t> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out[e.path().string()] = e.is_regular_file() ? e.file_size() : 0;
  return out;
}

TEST(HostileArchiveMcp, AnArchiveFolderThatIsALinkIsNotFollowed) {
  Archived a;
  TempDir elsewhere;
  fs::rename(a.archive(), elsewhere / "archive");
  fs::create_directory_symlink(elsewhere / "archive", a.archive());
  const auto before = listing(elsewhere / "archive");
  Server server(a.s.env);
  json r = server.client.call("archive_search", {{"query", "WALRUS_PLUM_7310"}});
  ASSERT_TRUE(r.is_object());
  EXPECT_TRUE(r.value("isError", false)) << r.dump();
  const std::string text = r["content"][0]["text"];
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  EXPECT_TRUE(server.alive());
  // Nothing was written through the link.
  EXPECT_EQ(listing(elsewhere / "archive"), before);
}

TEST(HostileArchiveMcp, UnderUmaskZeroTheIndexIsStillPrivate) {
  RecordedSession s;
  std::ofstream(s.transcript, std::ios::app) << tool_result_line("umask probe OTTER_MINT_2290");
  {
    const mode_t old = ::umask(0);
    end_session(s);
    // No index yet: the server builds it under umask 0.
    for (const auto& e : fs::directory_iterator(s.state() / "archive"))
      if (e.path().filename().string().starts_with("index")) fs::remove(e.path());
    Server server(s.env);
    ::umask(old);
    EXPECT_EQ(server.search({{"query", "OTTER_MINT_2290"}})["hits"].size(), 1u);
  }
  EXPECT_EQ(mode_of(s.state() / "archive"), 0700u);
  for (const auto& e : fs::recursive_directory_iterator(s.state() / "archive")) {
    if (e.is_symlink()) continue;
    EXPECT_EQ(mode_of(e.path()), e.is_directory() ? 0700u : 0600u) << e.path();
  }
}

// An indexer killed (SIGKILL) in the middle of a write: the next search still answers, from a
// consistent index, and finishes the indexing.
TEST(HostileArchiveMcp, AnIndexerKilledMidWriteLeavesAnIndexThatAnswers) {
  RecordedSession s(20000);
  std::string lines;
  for (int i = 0; i < 20000; ++i)
    lines += tool_result_line("bulk line " + std::to_string(i) + " " + std::string(200, 'q'));
  lines += tool_result_line("the last one holds HERON_SAGE_6621");
  std::ofstream(s.transcript, std::ios::app) << lines;
  json payload{{"session_id", kSid},
               {"transcript_path", s.transcript.string()},
               {"cwd", "/home/me/proj"},
               {"hook_event_name", "SessionEnd"},
               {"reason", "exit"}};
  // Killed at growing delays until one got as far as the archived copy of the whole transcript,
  // so that the last kill lands in the indexing (or just after it) on a machine of any speed: the
  // search below indexes what is archived, it does not archive (a slow, instrumented build once
  // had all three kills of fixed delays land before the copy).
  const fs::path archived =
      s.state() / "archive" / s.transcript.parent_path().filename() / (s.id + ".jsonl");
  const auto whole = fs::file_size(s.transcript);
  int killed = 0;
  for (int delay_ms = 30; delay_ms <= 60000; delay_ms *= 2) {
    util::ProcessSpec spec;
    spec.argv = {bin_dir() + "/ctx-session-hook", "SessionEnd", "--foreground"};
    spec.env = std::map<std::string, std::string>(s.env.vars().begin(), s.env.vars().end());
    spec.stdin_data = payload.dump();
    spec.timeout = std::chrono::milliseconds(delay_ms);  // SIGKILL when it is reached
    auto run = util::run_process(spec);
    ASSERT_TRUE(run);
    killed += run->timed_out ? 1 : 0;
    std::error_code ec;
    if (fs::file_size(archived, ec) == whole && !ec) break;
  }
  ASSERT_EQ(fs::file_size(archived), whole);
  EXPECT_GE(killed, 1);
  // The hook's archiver dies with it by a signal the kernel sends when the hook is gone: on a busy
  // machine it may still hold the index's lock a moment after the hook was reaped, and a search
  // then answers from the index as far as it got, rightly. Wait for it to be gone.
  {
    const core::Config cfg = core::load_config(s.env, {});
    auto lock = archive::IndexLock::acquire(cfg.locations(s.env), /*wait=*/true);
    ASSERT_TRUE(lock && *lock);
  }
  Server server(s.env);
  json r = server.search({{"query", "HERON_SAGE_6621"}});
  EXPECT_EQ(r["hits"].size(), 1u) << r.dump();
  json again = server.search({{"query", "bulk line 19999"}});
  EXPECT_FALSE(again["hits"].empty()) << again.dump();
}

// The archiver a hook runs with --foreground is part of that hook's run: killed with it, it
// leaves no archiver behind (one that went on used to hold the index's lock while the test above
// searched, which then found the index still being built). Here the archiver waits for the
// session's archive lock, held by the test, when the hook is killed.
TEST(HostileArchiveMcp, AForegroundArchiverDiesWithItsHook) {
  RecordedSession s;
  const fs::path dir = s.state() / "archive" / s.transcript.parent_path().filename();
  fs::create_directories(dir);
  fs::permissions(s.state(), fs::perms::owner_all);
  fs::permissions(s.state() / "archive", fs::perms::owner_all);
  fs::permissions(dir, fs::perms::owner_all);
  const fs::path lock_path = dir / ("." + s.transcript.stem().string() + ".lock");
  const int held = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  json payload{{"session_id", kSid},
               {"transcript_path", s.transcript.string()},
               {"cwd", "/home/me/proj"},
               {"hook_event_name", "SessionEnd"},
               {"reason", "exit"}};
  const std::string marker = "--archive=" + s.transcript.string();
  auto archivers = [&] {
    int n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
      std::ifstream f(e.path() / "cmdline", std::ios::binary);
      std::string cmd(4096, '\0');
      f.read(cmd.data(), static_cast<std::streamsize>(cmd.size()));
      cmd.resize(static_cast<size_t>(f.gcount()));
      if (cmd.find(marker) != std::string::npos) ++n;
    }
    return n;
  };
  util::ProcessSpec spec;
  spec.argv = {bin_dir() + "/ctx-session-hook", "SessionEnd", "--foreground"};
  spec.env = std::map<std::string, std::string>(s.env.vars().begin(), s.env.vars().end());
  spec.stdin_data = payload.dump();
  spec.timeout = 400ms;  // SIGKILL when it is reached
  auto r = util::run_process(spec);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->timed_out) << r->err;
  // A killed process leaves its command line as it goes.
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (archivers() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(archivers(), 0);
  ::close(held);
}

// The --verbose log names methods from the input: each stays one line of text, with no terminal
// escape and no line of its own.
TEST(HostileArchiveMcp, TheVerboseLogEscapesWhatTheInputNames) {
  TempDir tmp;
  const std::string in =
      json{{"jsonrpc", "2.0"}, {"method", "x\x1b[2J\nctx-archive-mcp: forged"}}.dump() + "\n";
  auto r = run_tool("ctx-archive-mcp", {"--verbose"}, in, tmp.env());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ctx-archive-mcp: <- notification x\\x1b[2J\\nctx-archive-mcp: forged\n"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace ctxkit::test
