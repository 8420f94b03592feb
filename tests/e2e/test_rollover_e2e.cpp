#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "e2e/e2e_support.hpp"
#include "store/state_store.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kSid = RecordedSession::kId;

// A session, a summary, and a stand-in `claude` on PATH that records its argv and cwd.
struct Rig : RecordedSession {
  fs::path bin, log, summary, caller;
  explicit Rig(size_t output_chars = 20000) : RecordedSession(output_chars) {
    bin = tmp / "bin";
    fs::create_directories(bin);
    log = tmp / "standin.log";
    std::ofstream(bin / "claude")
        << "#!/bin/sh\n{ printf 'cwd=%s\\n' \"$(pwd)\"; for a in \"$@\"; do printf 'arg=%s\\n' "
           "\"$a\"; done; } >> \"$STANDIN_LOG\"\nexit 0\n";
    fs::permissions(bin / "claude", fs::perms::owner_all);
    summary = tmp.write("summary.md",
                        "### Current Task\nWire the flux-capacitor.\n\n### Immediate Next "
                        "Steps\n1. Run the tests.\n");
    caller = tmp / "caller";
    fs::create_directories(caller);
    env.set("PATH", bin.string() + ":/usr/bin:/bin");
    env.set("STANDIN_LOG", log.string());
    env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW",
            "200000");  // the client compacts at 167k: the session stood at 90 % of it
  }
  std::string standin() const { return fs::exists(log) ? read_file(log) : std::string(); }
  std::string arg_after(const std::string& flag) const {
    std::string l = standin();
    auto p = l.find("arg=" + flag + "\narg=");
    if (p == std::string::npos) return "";
    auto start = p + flag.size() + 9;
    return l.substr(start, l.find('\n', start) - start);
  }
};

TEST(Rollover, OutsideClaudeCodeStartsTheNewSessionInTheCallersDirectory) {
  Rig r;
  auto res = run_tool("ctx-rollover", {"--summary-file", r.summary.string(), "--session", kSid}, "",
                      r.env, r.caller);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  std::string log = r.standin();
  EXPECT_NE(log.find("cwd=" + r.caller.string() + "\n"), std::string::npos) << log;
  std::string id = r.arg_after("--session-id");
  ASSERT_EQ(id.size(), 36u) << log;
  EXPECT_NE(log.find("arg=## Session Continuation"), std::string::npos);
  EXPECT_NE(log.find("This is session #2 in this line of work. The previous session rolled over at "
                     "90% context"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("Wire the flux-capacitor."), std::string::npos);
  EXPECT_NE(log.find("/ctx-search \"what you need to find\""), std::string::npos);
  EXPECT_NE(log.find("Parent session: " + kSid), std::string::npos);
  EXPECT_EQ(log.find("arg=-p\n"), std::string::npos);
  // The lineage is recorded; the transcript Claude Code owns is untouched.
  auto lineage = json::parse(run_tool("ctx-lineage", {id, "--json"}, "", r.env).out);
  ASSERT_EQ(lineage.size(), 2u);
  EXPECT_EQ(lineage[0]["session_id"], kSid);
  EXPECT_EQ(lineage[0]["end_reason"], "rollover");
  EXPECT_EQ(lineage[0]["context_at_end"], 90);
  EXPECT_EQ(lineage[0]["started_at"], "2026-11-21T12:55:27.282Z");  // from the transcript
  EXPECT_EQ(lineage[1]["session_id"], id);
  EXPECT_EQ(lineage[1]["parent_id"], kSid);
  EXPECT_EQ(read_file(r.transcript), r.original);
}

TEST(Rollover, PrintModeBinaryAndExtraArguments) {
  Rig r;
  fs::copy_file(r.bin / "claude", r.bin / "other-claude");
  r.env.set("CTXKIT_ROLLOVER_CLAUDE_ARGS", "--model,opus");
  auto res = run_tool("ctx-rollover",
                      {"--summary-file", r.summary.string(), "--session", kSid, "--print",
                       "--claude-bin", "other-claude"},
                      "", r.env, r.caller);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  std::string log = r.standin();
  EXPECT_NE(log.find("arg=--model\narg=opus\narg=-p\narg=--session-id\n"), std::string::npos)
      << log;
}

TEST(Rollover, InsideClaudeCodeItPreparesAndPrintsTheOneCommand) {
  Rig r;
  r.env.set("CLAUDECODE", "1");
  r.env.set("CLAUDE_CODE_SESSION_ID", kSid);
  auto res = run_tool("ctx-rollover", {"--summary-file", r.summary.string()}, "", r.env, r.caller);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(r.standin(), "");  // no second client under the agent
  const std::string prefix = "  cd " + r.caller.string() + " && claude --session-id ";
  auto pos = res.out.find(prefix);
  ASSERT_NE(pos, std::string::npos) << res.out;
  std::string id = res.out.substr(pos + prefix.size(), 36);
  fs::path prompt = r.state() / "rollovers" / (id + ".md");
  EXPECT_NE(res.out.find("\"$(cat " + prompt.string() + ")\""), std::string::npos) << res.out;
  EXPECT_NE(read_file(prompt).find("Wire the flux-capacitor."), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat(prompt.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(Rollover, SupervisorEndsTheClientAfterTheTurnAndStartsTheNewSession) {
  Rig r;
  // The first client does what the agent and the client do: the skill runs ctx-rollover, then
  // the turn ends (Stop hook), then it waits to be ended. The second records its arguments.
  std::string script =
      "#!/bin/sh\n"
      "case \" $* \" in *\" --session-id \"*)\n"
      "  { printf 'second cwd=%s\\n' \"$(pwd)\"; for a in \"$@\"; do printf 'arg=%s\\n' \"$a\"; "
      "done; } >> \"$STANDIN_LOG\"; exit 7 ;;\n"
      "esac\n"
      "trap 'echo \"first got TERM\" >> \"$STANDIN_LOG\"; exit 143' TERM\n"
      "printf 'first %s\\n' \"$*\" >> \"$STANDIN_LOG\"\n"
      "CLAUDECODE=1 CLAUDE_CODE_SESSION_ID=" +
      kSid + " " CTXKIT_BIN_DIR "/ctx-rollover --summary-file " + r.summary.string() +
      " >/dev/null\n"
      "printf '{\"session_id\":\"" +
      kSid + "\",\"transcript_path\":\"" + r.transcript.string() +
      "\",\"cwd\":\"/\",\"hook_event_name\":\"Stop\"}' | " CTXKIT_BIN_DIR
      "/ctx-session-hook Stop\n"
      "while :; do sleep 0.1; done\n";  // waits in the foreground: nothing outlives it
  std::ofstream(r.bin / "claude") << script;
  auto start = std::chrono::steady_clock::now();
  auto res =
      run_tool("ctx-rollover", {"--supervise", "--", "claude", "--model", "opus", "first prompt"},
               "", r.env, r.caller);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(res.exit_code, 7) << res.err;  // the last child's status
  EXPECT_LT(took, std::chrono::seconds(20));
  std::string log = r.standin();
  EXPECT_NE(log.find("first --model opus first prompt\n"), std::string::npos) << log;
  EXPECT_NE(log.find("first got TERM\n"), std::string::npos) << log;
  // The new session starts in the session's directory (the recorded one does not exist on this
  // machine, so where the client ran).
  EXPECT_NE(log.find("second cwd=" + r.caller.string() + "\n"), std::string::npos) << log;
  EXPECT_NE(log.find("arg=--model\narg=opus\narg=--session-id\narg="), std::string::npos) << log;
  EXPECT_EQ(log.find("arg=first prompt"), std::string::npos);
  EXPECT_NE(log.find("arg=## Session Continuation"), std::string::npos);
}

TEST(Rollover, SupervisorForwardsAnInterruptAndExitsWithTheChildsStatus) {
  Rig r;
  // The client says when its trap is set; only then is the supervisor interrupted, and only the
  // supervisor: the client hears of it through the supervisor or not at all.
  const fs::path ready = r.tmp / "client-ready";
  std::ofstream(r.bin / "claude")
      << "#!/bin/sh\ntrap 'echo got INT >> \"$STANDIN_LOG\"; exit 130' INT\ntouch '"
      << ready.string() << "'\nwhile :; do sleep 0.1; done\n";
  r.env.set("PATH", r.bin.string() + ":/usr/bin:/bin");
  util::SpawnSpec spec;
  spec.argv = {CTXKIT_BIN_DIR "/ctx-rollover", "--supervise", "--", "claude"};
  spec.env = r.env.vars();
  spec.cwd = r.caller;
  auto child = util::Child::spawn(spec);
  ASSERT_TRUE(child) << child.error().message;
  for (int i = 0; i < 1500 && !fs::exists(ready); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fs::exists(ready)) << "the client never started";
  ASSERT_TRUE(child->signal(SIGINT));
  auto st = child->wait_for(std::chrono::seconds(30));
  if (!st) child->terminate(std::chrono::seconds(2));
  ASSERT_TRUE(st) << "the supervisor did not end after SIGINT";
  EXPECT_EQ(st->code, 130);
  EXPECT_EQ(r.standin(), "got INT\n");
}

TEST(Rollover, LineageAcrossTrimRolloverRollover) {
  Rig r;
  auto t = json::parse(run_tool("ctx-trim", {kSid, "--json"}, "", r.env).out);
  std::string trimmed = t["session_id"];
  auto first =
      run_tool("ctx-rollover", {"--summary-file", r.summary.string(), "--session", trimmed}, "",
               r.env, r.caller);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::string second_id = r.arg_after("--session-id");
  // The client would now write the new session's transcript.
  fs::copy_file(r.dir / (trimmed + ".jsonl"), r.dir / (second_id + ".jsonl"));
  fs::remove(r.log);
  auto second =
      run_tool("ctx-rollover", {"--summary-file", r.summary.string(), "--session", second_id}, "",
               r.env, r.caller);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  std::string third_id = r.arg_after("--session-id");
  EXPECT_NE(r.standin().find("This is session #4 in this line of work."), std::string::npos);
  auto chain = json::parse(run_tool("ctx-lineage", {second_id, "--json"}, "", r.env).out);
  ASSERT_EQ(chain.size(), 4u) << chain.dump();
  EXPECT_EQ(chain[0]["session_id"], kSid);
  EXPECT_EQ(chain[0]["end_reason"], "trim");
  EXPECT_EQ(chain[1]["session_id"], trimmed);
  EXPECT_EQ(chain[1]["end_reason"], "rollover");
  EXPECT_EQ(chain[2]["session_id"], second_id);
  EXPECT_EQ(chain[2]["end_reason"], "rollover");
  EXPECT_TRUE(chain[2]["current"].get<bool>());
  EXPECT_EQ(chain[3]["session_id"], third_id);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(chain[i]["number"], i + 1);
  auto text = run_tool("ctx-lineage", {second_id}, "", r.env);
  EXPECT_NE(text.out.find("* #3 " + second_id), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("#1 " + kSid), std::string::npos);
}

TEST(Search, FindsWhatOnlyAToolOutputSaidAndShowsTheUntrimmedOriginal) {
  Rig r;
  auto t = run_tool("ctx-trim", {kSid}, "",
                    r.env);  // archives the original; a detached indexer indexes it
  ASSERT_EQ(t.exit_code, 0) << t.err;
  ASSERT_EQ(t.err, "");
  for (int i = 0; i < 600 && run_tool("ctx-search", {"output line 500 of"}, "", r.env)
                                 .out.starts_with("The search index is");
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto hits = json::parse(run_tool("ctx-search", {"output line 500 of", "--json"}, "", r.env).out);
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0]["session_id"], kSid);
  EXPECT_EQ(hits[0]["role"], "tool_result");
  std::string where = kSid + ":" + std::to_string(hits[0]["line"].get<int>());
  auto show = run_tool("ctx-search", {"--show", where}, "", r.env);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("output line 500 of a long command"), std::string::npos);
  EXPECT_EQ(show.out.find("[...truncated"), std::string::npos);
  auto text = run_tool("ctx-search", {"flux-capacitor"}, "", r.env);
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_EQ(text.out, "No matches.\n");
  auto odd = run_tool("ctx-search", {"engine.c:42", "AND", "(", "\"", "*"}, "", r.env);
  EXPECT_EQ(odd.exit_code, 0) << odd.err;  // FTS5 syntax is never the user's syntax
}

TEST(SessionHook, SessionEndArchivesInTheBackgroundAndStartRecordsTheSession) {
  Rig r(0);
  json start = {{"session_id", kSid},
                {"transcript_path", r.transcript.string()},
                {"cwd", "/"},
                {"hook_event_name", "SessionStart"},
                {"source", "startup"}};
  auto s = run_tool("ctx-session-hook", {"SessionStart"}, start.dump(), r.env);
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out, "");
  // Recorded once the hook's output is over, in the background: within moments.
  json lineage;
  for (int i = 0; i < 200; ++i) {
    lineage = json::parse(run_tool("ctx-lineage", {kSid, "--json"}, "", r.env).out, nullptr, false);
    if (lineage.is_array() && !lineage.empty() && lineage[0].value("number", 0) == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(lineage.is_array() && !lineage.empty()) << lineage.dump();
  EXPECT_EQ(lineage[0]["number"], 1);
  json end = {{"session_id", kSid},
              {"transcript_path", r.transcript.string()},
              {"cwd", "/"},
              {"hook_event_name", "SessionEnd"},
              {"reason", "other"}};
  auto e = run_tool("ctx-session-hook", {"SessionEnd"}, end.dump(), r.env);
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(e.out, "");
  bool found = false;
  for (int i = 0; i < 200 && !found; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto hits = run_tool("ctx-search", {"kitchen-sink", "--json"}, "", r.env);
    found = hits.exit_code == 0 && hits.out.starts_with("[{");
  }
  EXPECT_TRUE(found) << "the ended session was not archived and indexed";
  EXPECT_EQ(read_file(r.state() / "archive/-proj" / (kSid + ".jsonl")), r.original);
}

// What the session hook starts after each turn and at a session's end, by hand: `ctx-search
// --archive` archives and indexes the transcript before it returns; bad use is one line.
TEST(SessionHook, CtxSearchArchiveArchivesAndIndexesBeforeItReturns) {
  Rig r(0);
  auto a = run_tool("ctx-search", {"--archive", r.transcript.string()}, "", r.env);
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, "");
  auto hits = run_tool("ctx-search", {"kitchen-sink", "--json"}, "", r.env);
  EXPECT_EQ(hits.exit_code, 0) << hits.err;
  EXPECT_TRUE(hits.out.starts_with("[{")) << hits.out;
  EXPECT_EQ(read_file(r.state() / "archive/-proj" / (kSid + ".jsonl")), r.original);
  auto ended = run_tool("ctx-search", {"--archive", r.transcript.string(), "--ended"}, "", r.env);
  EXPECT_EQ(ended.exit_code, 0) << ended.err;

  auto lone = run_tool("ctx-search", {"--ended"}, "", r.env);
  EXPECT_NE(lone.exit_code, 0);
  EXPECT_EQ(lone.err, "ctx-search: error: --ended goes with --archive TRANSCRIPT\n");
  auto both = run_tool("ctx-search", {"--archive", r.transcript.string(), "words"}, "", r.env);
  EXPECT_NE(both.exit_code, 0);
  EXPECT_EQ(both.err, "ctx-search: error: --archive takes no words, --show or --json\n");
  auto missing = run_tool("ctx-search", {"--archive", (r.tmp / "none.jsonl").string()}, "", r.env);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_EQ(line_count(missing.err), 1u) << missing.err;
}

TEST(Rollover, BadInputIsOneLineAndRecordsNothing) {
  Rig r;
  auto expect_nothing_recorded = [&] {
    EXPECT_EQ(r.standin(), "");
    auto l = run_tool("ctx-lineage", {kSid}, "", r.env);
    EXPECT_EQ(l.exit_code, 1);
    EXPECT_FALSE(fs::exists(r.state() / "rollovers") && !fs::is_empty(r.state() / "rollovers"));
  };
  fs::path empty = r.tmp.write("empty.md", "\n \n");
  auto res = run_tool("ctx-rollover", {"--summary-file", empty.string(), "--session", kSid}, "",
                      r.env, r.caller);
  EXPECT_EQ(res.exit_code, 1);
  EXPECT_EQ(res.err, "ctx-rollover: error: summary file " + empty.string() + " is empty\n");
  res =
      run_tool("ctx-rollover", {"--summary-file", (r.tmp / "none.md").string(), "--session", kSid},
               "", r.env, r.caller);
  EXPECT_EQ(res.err, "ctx-rollover: error: summary file " + (r.tmp / "none.md").string() +
                         " does not exist\n");
  res = run_tool("ctx-rollover", {"--session", kSid}, "", r.env, r.caller);
  EXPECT_EQ(res.err,
            "ctx-rollover: error: --summary-file is required (write the handoff summary to a file "
            "first)\n");
  res = run_tool(
      "ctx-rollover",
      {"--summary-file", r.summary.string(), "--session", "01234567-89ab-cdef-0123-456789abcdef"},
      "", r.env, r.caller);
  EXPECT_EQ(res.exit_code, 1);
  EXPECT_EQ(line_count(res.err), 1u);
  res = run_tool(
      "ctx-rollover",
      {"--summary-file", r.summary.string(), "--session", kSid, "--claude-bin", "no-such-claude"},
      "", r.env, r.caller);
  EXPECT_EQ(res.exit_code, 1);
  EXPECT_EQ(res.err,
            "ctx-rollover: error: no-such-claude not found in PATH (set rollover.claude_bin or "
            "pass --claude-bin)\n");
  util::Env blocked = r.env;
  r.tmp.write("blocker", "a file where the state directory should be");
  blocked.set("CTXKIT_STATE_DIR", (r.tmp / "blocker/ctxkit").string());
  res = run_tool("ctx-rollover", {"--summary-file", r.summary.string(), "--session", kSid}, "",
                 blocked, r.caller);
  EXPECT_EQ(res.exit_code, 1);
  EXPECT_EQ(line_count(res.err), 1u) << res.err;
  EXPECT_TRUE(res.err.starts_with("ctx-rollover: error: state directory: ")) << res.err;
  expect_nothing_recorded();
  auto s = run_tool("ctx-search", {"anything"}, "", r.env);
  EXPECT_EQ(s.exit_code, 0);  // nothing archived yet is not an error
  EXPECT_EQ(s.out, "Nothing is archived yet.\n");
  // Bad input is reported as such, archive or not.
  s = run_tool("ctx-search", {}, "", r.env);
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_EQ(s.err,
            "ctx-search: error: nothing to search for (give some words, or --show SESSION:LINE)\n");
  s = run_tool("ctx-search", {"x", "--since", "yesterday"}, "", r.env);
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_EQ(s.err,
            "ctx-search: error: --since 'yesterday' is not a date or time "
            "(YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM])\n");
  s = run_tool("ctx-search", {"--show", "nope"}, "", r.env);
  EXPECT_EQ(s.err,
            "ctx-search: error: no archived output 'nope' (--show takes SESSION:LINE, or the "
            "HANDLE a capped output names)\n");
}

TEST(Rollover, AFileThatIsNotATranscriptIsRefusedAndNothingIsRecorded) {
  Rig r;
  fs::path passwd = r.tmp.write(
      "passwd",
      "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n");
  auto res =
      run_tool("ctx-rollover", {"--summary-file", r.summary.string(), "--session", passwd.string()},
               "", r.env, r.caller);
  EXPECT_EQ(res.exit_code, 1);
  EXPECT_EQ(res.err,
            "ctx-rollover: error: " + passwd.string() +
                " is not a Claude Code transcript (no session lines in its first 2 lines)\n");
  EXPECT_EQ(r.standin(), "");
  EXPECT_FALSE(fs::exists(r.state() / "archive"));
  EXPECT_EQ(run_tool("ctx-lineage", {"passwd"}, "", r.env).exit_code, 1);
}

TEST(Rollover, TheSessionsCwdIsDecodedForTheCommandAndTheLineage) {
  Rig r;
  // The session ran in a directory whose name needs escaping in JSON.
  const fs::path odd = r.tmp / "we \"quoted\" \\ it";
  fs::create_directories(odd);
  std::string text = read_file(r.transcript);
  std::string escaped = json(odd.string()).dump();
  for (size_t p = 0; (p = text.find("\"cwd\":\"", p)) != std::string::npos;) {
    size_t end = text.find('"', p + 7);
    text.replace(p + 6, end + 1 - (p + 6), escaped);
    p += 6 + escaped.size();
  }
  std::ofstream(r.transcript, std::ios::binary | std::ios::trunc) << text;
  r.env.set("CLAUDECODE", "1");
  auto res = run_tool("ctx-rollover", {"--summary-file", r.summary.string(), "--session", kSid}, "",
                      r.env, r.caller);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const std::string prefix =
      "  cd '" + r.tmp.path().string() + "/we \"quoted\" \\ it' && claude --session-id ";
  EXPECT_NE(res.out.find(prefix), std::string::npos) << res.out;
  {
    auto store = store::StateStore::open(r.state() / "state.db", 1000);
    ASSERT_TRUE(store);
    auto parent = store->session(kSid);
    ASSERT_TRUE(parent && *parent);
    EXPECT_EQ((*parent)->cwd, odd.string());
  }
  // ctx-trim reads the same head: its resume command goes to the same place.
  auto trim = run_tool("ctx-trim", {kSid}, "", r.env);
  ASSERT_EQ(trim.exit_code, 0) << trim.err;
  EXPECT_NE(
      trim.out.find("cd '" + r.tmp.path().string() + "/we \"quoted\" \\ it' && claude --resume "),
      std::string::npos)
      << trim.out;
  auto store = store::StateStore::open(r.state() / "state.db", 1000);
  ASSERT_TRUE(store);
  auto kids = store->children(kSid);
  ASSERT_TRUE(kids);
  ASSERT_EQ(kids->size(), 2u);  // the rollover's and the trim's
  for (const auto& k : *kids) EXPECT_EQ(k.cwd, odd.string()) << k.session_id;
}

TEST(Rollover, ASummaryThatCannotPassWholeIsRefusedBeforeAnythingIsRecorded) {
  Rig r;
  fs::path nul = r.tmp.write("nul.md", std::string("### Task\nkeep this\0and this too\n", 32));
  auto res = run_tool("ctx-rollover", {"--summary-file", nul.string(), "--session", kSid}, "",
                      r.env, r.caller);
  EXPECT_EQ(res.exit_code, 1);
  EXPECT_EQ(res.err, "ctx-rollover: error: summary file " + nul.string() +
                         " contains a NUL byte (it must be text)\n");
  std::string big;
  while (big.size() < 140000) big += "word ";
  fs::path large = r.tmp.write("large.md", big);
  for (bool supervised : {false, true}) {
    util::Env env = r.env;
    if (supervised) {
      env.set("CLAUDECODE", "1");
      env.set("CTXKIT_SUPERVISOR", "tok");
    }
    res = run_tool("ctx-rollover", {"--summary-file", large.string(), "--session", kSid}, "", env,
                   r.caller);
    EXPECT_EQ(res.exit_code, 1);
    EXPECT_EQ(line_count(res.err), 1u) << res.err;
    EXPECT_TRUE(res.err.starts_with("ctx-rollover: error: the continuation prompt would be "))
        << res.err;
    EXPECT_NE(res.err.find(" bytes one program argument can hold: shorten the summary " +
                           large.string() + "\n"),
              std::string::npos)
        << res.err;
  }
  EXPECT_EQ(r.standin(), "");
  EXPECT_FALSE(fs::exists(r.state() / "archive"));
  EXPECT_TRUE(!fs::exists(r.state() / "rollovers") || fs::is_empty(r.state() / "rollovers"));
  EXPECT_EQ(run_tool("ctx-lineage", {kSid}, "", r.env).exit_code, 1);
}

TEST(Rollover, SupervisorLeavesTheClientRunningWhenTheNewSessionCannotStart) {
  Rig r;
  // The client prepares a rollover, then its prompt file is replaced by one too long for an
  // argument; the supervisor must notice before ending the client, not after.
  std::string script =
      "#!/bin/sh\n"
      "case \" $* \" in *\" --session-id \"*) echo second >> \"$STANDIN_LOG\"; exit 7 ;; esac\n"
      "trap 'echo \"first got TERM\" >> \"$STANDIN_LOG\"; exit 143' TERM\n"
      "CLAUDECODE=1 CLAUDE_CODE_SESSION_ID=" +
      kSid + " " CTXKIT_BIN_DIR "/ctx-rollover --summary-file " + r.summary.string() +
      " >/dev/null\n"
      "for f in " +
      (r.state() / "rollovers").string() +
      "/*.md; do head -c 200000 /dev/zero | tr '\\0' x > \"$f\"; done\n"
      "printf '{\"session_id\":\"" +
      kSid + "\",\"transcript_path\":\"" + r.transcript.string() +
      "\",\"cwd\":\"/\",\"hook_event_name\":\"Stop\"}' | " CTXKIT_BIN_DIR
      "/ctx-session-hook Stop\n"
      // Goes on until the supervisor has said it cannot start the new session
      // (30 s at most); a supervisor that ended it instead meets the trap.
      "i=0; while ! grep -q 'cannot start' \"$SUPERVISOR_ERR\" 2>/dev/null && [ $i -lt 1500 ]; do "
      "sleep 0.02; i=$((i+1)); done\n"
      "echo 'first still running' >> \"$STANDIN_LOG\"\nexit 3\n";
  std::ofstream(r.bin / "claude") << script;
  const fs::path err_file = r.tmp / "supervisor.err";
  r.env.set("SUPERVISOR_ERR", err_file.string());
  util::ProcessSpec spec;
  spec.argv = {"sh", "-c", "exec \"$0\" --supervise -- claude 2> \"$SUPERVISOR_ERR\"",
               CTXKIT_BIN_DIR "/ctx-rollover"};
  spec.cwd = r.caller;
  spec.env = std::map<std::string, std::string>(r.env.vars().begin(), r.env.vars().end());
  spec.timeout = std::chrono::seconds(60);
  auto out = util::run_process(spec);
  ASSERT_TRUE(out);
  util::ProcessResult res = *out;
  res.err = read_file(err_file);
  EXPECT_EQ(res.exit_code, 3) << res.err;
  EXPECT_EQ(r.standin(), "first still running\n");
  EXPECT_NE(res.err.find("ctx-rollover: error: the rollover to session "), std::string::npos)
      << res.err;
  EXPECT_NE(res.err.find(" cannot start, the current session goes on: starting claude: argument 3 "
                         "is 200000 bytes"),
            std::string::npos)
      << res.err;
}

TEST(SessionHook, StopSignalsOnlyAVerifiedSupervisor) {
  Rig r(0);
  // A pending rollover for the token, as ctx-rollover records it under a supervisor.
  util::Env inside = r.env;
  inside.set("CLAUDECODE", "1");
  inside.set("CTXKIT_SUPERVISOR", "tok");
  ASSERT_EQ(run_tool("ctx-rollover", {"--summary-file", r.summary.string(), "--session", kSid}, "",
                     inside, r.caller)
                .exit_code,
            0);
  // A process that is no supervisor: SIGUSR1 would end it.
  auto victim = util::Child::spawn({{"sleep", "30"}, std::nullopt, std::nullopt, std::nullopt});
  ASSERT_TRUE(victim);
  json stop = {{"session_id", kSid},
               {"transcript_path", r.transcript.string()},
               {"cwd", "/"},
               {"hook_event_name", "Stop"}};
  util::Env hook = inside;
  hook.set("CTXKIT_SUPERVISOR_PID", std::to_string(victim->pid()));
  auto res = run_tool("ctx-session-hook", {"Stop"}, stop.dump(), hook);
  EXPECT_EQ(res.exit_code, 0);
  EXPECT_EQ(res.err, "ctx-session-hook: note: not waking the supervisor: process " +
                         std::to_string(victim->pid()) + " is not a recorded ctxkit supervisor\n");
  EXPECT_EQ(victim->wait_for(std::chrono::milliseconds(300)), std::nullopt)
      << "the hook signalled a process that is not ours";
  victim->terminate(std::chrono::seconds(2));
  // 0 would signal the hook's whole process group; run it in a group of its own so that a
  // regression ends only itself (exit 128 + SIGUSR1) and not this test.
  for (std::string bad : {"0", "abc", "12abc"}) {
    util::ProcessSpec spec;
    spec.argv = {"setsid", "-w", CTXKIT_BIN_DIR "/ctx-session-hook", "Stop"};
    hook.set("CTXKIT_SUPERVISOR_PID", bad);
    spec.env = std::map<std::string, std::string>(hook.vars().begin(), hook.vars().end());
    spec.stdin_data = stop.dump();
    spec.timeout = std::chrono::seconds(30);
    auto out = util::run_process(spec);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->exit_code, 0) << bad << ": " << out->err;
    EXPECT_EQ(out->err,
              "ctx-session-hook: note: not waking the supervisor: CTXKIT_SUPERVISOR_PID '" + bad +
                  "' is not a process id\n");
  }
}

// ctx-rollover archives and indexes the session it hands over: 100,000 nested tool results must
// neither overflow the stack of the head reader nor that of the indexer's text extraction.
TEST(Rollover, DeeplyNestedContentDoesNotCrashIt) {
  Rig r;
  std::string deep;
  for (int i = 0; i < 100000; ++i)
    deep += "{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":[";
  deep += "{\"type\":\"text\",\"text\":\"x\"}";
  for (int i = 0; i < 100000; ++i) deep += "]}";
  std::ofstream(r.transcript, std::ios::app)
      << "{\"type\":\"user\",\"uuid\":\"deep\",\"sessionId\":\"" << kSid
      << "\",\"message\":{\"role\":\"user\",\"content\":[" << deep << "]}}\n";
  auto res = run_tool("ctx-rollover", {"--summary-file", r.summary.string(), "--session", kSid}, "",
                      r.env, r.caller);
  EXPECT_EQ(res.exit_code, 0) << res.err;
  EXPECT_FALSE(r.arg_after("--session-id").empty());
}

}  // namespace
}  // namespace ctxkit::test
