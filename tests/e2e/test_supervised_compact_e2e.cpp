// [compact] at under a supervisor that is killed (kill -9) between the end of a turn and the
// compaction: the client is hung up with it rather than left behind, nothing of the session is
// lost (the transcript, the pins), the next supervisor says once what the dead one left undone,
// and the session goes on: its next turn past the threshold is compacted with the pins as focus.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "e2e/e2e_support.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;

struct KilledSupervisorRig {
  TempDir tmp;
  fs::path project, bin, log, transcript;
  util::Env env;
  KilledSupervisorRig() {
    project = tmp / "proj";
    bin = tmp / "bin";
    log = tmp / "standin.log";
    transcript = tmp / "t.jsonl";
    fs::create_directories(project);
    fs::create_directories(bin);
    // 120k tokens read: 71 % of the 167k where the client compacts a 200k window.
    std::ofstream(transcript) << assistant_line("msg_1", 120000, "toolu_1") << "\n";
    const std::string b = CTXKIT_BIN_DIR;
    // The stand-in client: the headless /compact and the resumed session after it return at
    // once; an interactive session ends one turn (its Stop hook), kills its supervisor when
    // KILL_SUPERVISOR is set, and waits to be ended.
    std::ofstream(bin / "claude")
        << "#!/bin/sh\n"
        << standin_call_logger(200)
        << "case \" $* \" in *\" -p \"*|*\"ctxkit compacted\"*) exit 0 ;; esac\n"
           "trap 'kill \"$sp\" 2>/dev/null; echo \"hung up\" >> \"$STANDIN_LOG\"; exit 129' HUP\n"
           "trap 'kill \"$sp\" 2>/dev/null; exit 143' TERM\n"
           "printf '{\"session_id\":\"S1\",\"transcript_path\":\"" +
               transcript.string() + "\",\"cwd\":\"" + project.string() +
               "\",\"hook_event_name\":\"Stop\"}' | CLAUDE_CODE_SESSION_ID=S1 " + b +
               "/ctx-session-hook Stop\n"
               "[ -n \"$KILL_SUPERVISOR\" ] && kill -9 \"$CTXKIT_SUPERVISOR_PID\"\n"
               // Not holding the test's pipes: the hang-up may come between the sleep's start and
               // `sp=$!`, and a sleep the trap could not end would keep them open for 20 s.
               "sleep 20 </dev/null >/dev/null 2>&1 & sp=$!\nwait\n"
               "echo 'still running' >> \"$STANDIN_LOG\"\nexit 3\n";
    fs::permissions(bin / "claude", fs::perms::owner_all);
    env = tmp.env();
    env.set("PATH", bin.string() + ":/usr/bin:/bin");
    env.set("STANDIN_LOG", log.string());
    env.set("CLAUDE_PROJECT_DIR", project.string());
    env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");
    env.set("CTXKIT_CONTEXT_TRANSCRIPT_WAIT_MS", "0");
    env.set("CTXKIT_COMPACT_AT", "50");
  }
  std::vector<std::string> calls() const { return standin_calls(log); }
  fs::path archive_log() const { return tmp / "home/.local/state/ctxkit/archive.log"; }
};

TEST(SupervisedCompactAt, ASupervisorKilledBeforeTheCompactionLosesNothingAndTheSessionGoesOn) {
  KilledSupervisorRig r;
  util::Env pin_env = r.env;
  pin_env.set("CLAUDE_CODE_SESSION_ID", "S1");
  ASSERT_EQ(run_tool("ctx-pin", {"add", "the API listens on port 8123"}, "", pin_env, r.project)
                .exit_code,
            0);
  ASSERT_EQ(
      run_tool("ctx-pin", {"add", "deploys happen on friday"}, "", pin_env, r.project).exit_code,
      0);
  const std::string transcript_before = read_file(r.transcript);

  // The turn ends past [compact] at = 50 and the supervisor is killed before it compacts.
  util::Env killing = r.env;
  killing.set("KILL_SUPERVISOR", "1");
  auto killed = run_tool("ctx-rollover", {"--supervise", "--", "claude"}, "", killing, r.project);
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.err;
  // The client went with it, hung up as by a closed terminal, not left running for its 20 s.
  for (int i = 0; i < 200 && read_file(r.log).find("hung up") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_NE(read_file(r.log).find("hung up"), std::string::npos) << read_file(r.log);
  // The Stop hook's trigger asked the dead supervisor for the compaction and could not wake it.
  for (int i = 0; i < 200 && read_file(r.archive_log()).find("not waking") == std::string::npos;
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_NE(read_file(r.archive_log()).find("compact at: not waking the supervisor"),
            std::string::npos)
      << read_file(r.archive_log());
  ASSERT_EQ(r.calls().size(), 1u) << read_file(r.log);  // no /compact was run

  // Nothing lost: the transcript as it was, both pins there.
  EXPECT_EQ(read_file(r.transcript), transcript_before);
  auto pins = run_tool("ctx-pin", {"list"}, "", pin_env, r.project);
  EXPECT_NE(pins.out.find("the API listens on port 8123"), std::string::npos) << pins.out;
  EXPECT_NE(pins.out.find("deploys happen on friday"), std::string::npos) << pins.out;

  // The session goes on under a new supervisor: what the dead one left undone is said once, and
  // the next turn that ends past the threshold is compacted with the pins as its focus.
  auto next = run_tool("ctx-rollover", {"--supervise", "--", "claude", "--resume", "S1"}, "", r.env,
                       r.project);
  ASSERT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(occurrences(next.err, "a supervisor that is gone left /compact of session S1 undone"),
            1u)
      << next.err;
  EXPECT_EQ(line_count(next.err), 3u) << next.err;  // that line, compacting, resuming
  const auto calls = r.calls();
  ASSERT_EQ(calls.size(), 4u) << read_file(r.log);
  EXPECT_EQ(calls[1], "call: [--resume] [S1]");
  // The headless /compact resumes the session itself (the command's own --resume is not given
  // twice), with the pins as its focus.
  EXPECT_TRUE(calls[2].starts_with(
      "call: [-p] [--resume] [S1] [/compact Keep these pinned facts word for word:"))
      << calls[2];
  EXPECT_NE(calls[2].find("the API listens on port 8123"), std::string::npos) << calls[2];
  EXPECT_TRUE(
      calls[3].starts_with("call: [--resume] [S1] [ctxkit compacted this conversation when "
                           "its context reached 71% ([compact] at = 50)"))
      << calls[3];
  // Said once: a third supervisor has nothing to report.
  std::ofstream(r.log, std::ios::trunc).flush();
  auto third = run_tool("ctx-rollover", {"--supervise", "--", "claude", "--resume", "S1"}, "",
                        r.env, r.project);
  EXPECT_EQ(third.err.find("a supervisor that is gone"), std::string::npos) << third.err;
  // The prompt files of the compaction left undone and of those carried out are gone: what is
  // left is named by an action still pending (one the last turn may have asked for, which a
  // supervisor carries out or drops later).
  std::set<std::string> pending;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((r.tmp / "home/.local/state/ctxkit/state.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT prompt_path FROM pending_rollovers", -1, &st, nullptr),
            SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW)
    pending.insert(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  sqlite3_close(db);
  std::error_code ec;
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(r.tmp / "home/.local/state/ctxkit/rollovers", ec)) {
    ++files;
    EXPECT_TRUE(pending.contains(e.path().string()))
        << e.path() << " is named by no pending action";
  }
  EXPECT_LE(files, 1u);
}

}  // namespace
}  // namespace ctxkit::test
