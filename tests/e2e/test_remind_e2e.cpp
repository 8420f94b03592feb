#include <gtest/gtest.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>

#include "e2e/e2e_support.hpp"
#include "store/meter_store.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string payload(const fs::path& transcript, const std::string& tool_use_id,
                    const std::string& session = "sess-1", const std::string& agent_id = "") {
  json p = {{"session_id", session},
            {"transcript_path", transcript.string()},
            {"cwd", transcript.parent_path().string()},
            {"hook_event_name", "PostToolUse"},
            {"tool_name", "Bash"},
            {"tool_input", {{"command", "ls"}}},
            {"tool_response", {{"stdout", "x"}}},
            {"tool_use_id", tool_use_id}};
  if (!agent_id.empty()) p["agent_id"] = agent_id;
  return p.dump();
}

std::string context_of(const util::ProcessResult& r) {
  if (r.out.empty()) return "";
  auto j = json::parse(r.out);
  return j["hookSpecificOutput"]["additionalContext"].get<std::string>();
}

// The figure counts against where this client compacts this model (share/client-rules.json):
// claude-sonnet-4-6 compacts at 167,000 of its 200,000 with no setting, so 145,000 tokens are
// 86 % and urgent, before the client compacts (counted against the whole window they were 72 %,
// and the urgent reminder came at 170,000, after the compaction). A reactive model's figure is of
// the window.
TEST(Remind, EachModelCountsAgainstWhereTheClientCompactsIt) {
  for (const auto& [model, version, want] :
       {std::tuple{"claude-sonnet-4-6", "2.1.332", "Context at 86% (145k of 167k usable tokens)"},
        std::tuple{"claude-sonnet-4-6", "2.1.197", "Context at 86% (145k of 167k usable tokens)"},
        std::tuple{"claude-sonnet-4-5", "2.1.332", "Context at 72% (145k of 200k tokens)"}}) {
    TempDir tmp;
    json line = json::parse(assistant_line("msg_1", 144995, "toolu_1"));
    line["message"]["model"] = model;
    line["version"] = version;
    std::ofstream(tmp / "t.jsonl") << line.dump() << "\n";
    util::Env env = tmp.env();
    auto r = run_tool("ctx-remind", {}, payload(tmp / "t.jsonl", "toolu_1", "S"), env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(context_of(r).starts_with(want)) << model << " " << version << ": " << r.out;
  }
}

class RecordedReplay : public ::testing::TestWithParam<std::string> {};

// Every PostToolUse of the recorded runs, replayed as the client does it: the assistant line with
// the tool_use reaches the disk only after the hook has started. The reminder states that call's
// exact figure, for the main session and for the subagent (from its own file).
TEST_P(RecordedReplay, EachToolCallGetsItsOwnFigureDespiteTheLag) {
  fs::path base = fixture_path(GetParam(), "basic");
  std::ifstream hooks(base / "hooks.jsonl");
  std::string l;
  int checked = 0, subagent_checked = 0;
  while (std::getline(hooks, l)) {
    json h = json::parse(l);
    if (h["event"] != "PostToolUse") continue;
    json p = json::parse(h["stdin_raw"].get<std::string>());
    std::string sid = p["session_id"];
    bool sub = p.contains("agent_id");
    fs::path src = base / "transcripts" / (sid + ".jsonl");
    if (sub)
      src = base / "transcripts" / sid / "subagents" /
            ("agent-" + p["agent_id"].get<std::string>() + ".jsonl");
    auto lines = file_lines(src);
    size_t idx = 0;
    int64_t expected = usage_of_tool_use(lines, p["tool_use_id"], idx);
    ASSERT_GT(expected, 0);

    TempDir tmp;
    fs::path main_t = tmp / ("home/.claude/projects/-proj/" + sid + ".jsonl");
    fs::path target =
        sub ? tmp / ("home/.claude/projects/-proj/" + sid + "/subagents/" + src.filename().string())
            : main_t;
    fs::create_directories(target.parent_path());
    {
      // The main file as it was when the hook ran (per the recorder), or at least up to the tool
      // call; the lagging line itself is held back.
      auto main_lines = file_lines(base / "transcripts" / (sid + ".jsonl"));
      std::ofstream(main_t) << first_lines(
          main_lines, sub ? h["transcript_at_hook"]["lines"].get<size_t>() : idx);
      if (sub) std::ofstream(target) << first_lines(lines, idx);
    }
    p["transcript_path"] = main_t.string();
    p["cwd"] = (tmp / "proj").string();
    util::Env env = tmp.env();
    env.set("CTXKIT_CONTEXT_WARN_THRESHOLD", "1");
    env.set("CTXKIT_CONTEXT_RECOMMEND_THRESHOLD", "2");
    env.set("CTXKIT_CONTEXT_URGENT_THRESHOLD", "3");
    env.set("CTXKIT_CONTEXT_CHECK_INTERVAL_SECONDS", "0");
    env.set("CTXKIT_CONTEXT_TRANSCRIPT_WAIT_MS", "3000");
    env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");  // the client compacts at 167k
    // The lagging line is appended once the hook has read the file without it (10 s at most).
    const int watch = ::inotify_init1(IN_CLOEXEC);
    ASSERT_GE(watch, 0);
    ASSERT_GE(::inotify_add_watch(watch, target.c_str(), IN_ACCESS | IN_CLOSE_NOWRITE), 0);
    auto fut = std::async(std::launch::async,
                          [&] { return run_tool("ctx-remind", {"PostToolUse"}, p.dump(), env); });
    pollfd pfd{watch, POLLIN, 0};
    EXPECT_EQ(::poll(&pfd, 1, 10000), 1) << "the hook never read " << target;
    ::close(watch);
    {
      std::ofstream out(target, std::ios::app);
      out << lines[idx] << "\n";
    }
    auto r = fut.get();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string want = "Context at " + std::to_string(expected * 100 / 167000) + "% ";
    EXPECT_TRUE(context_of(r).starts_with(want)) << context_of(r) << " wanted " << want;
    if (sub) {
      EXPECT_NE(context_of(r).find("in this subagent"), std::string::npos);
      ++subagent_checked;
    }
    ++checked;
  }
  EXPECT_GE(checked, 8);
  EXPECT_EQ(subagent_checked, 1);
}

// Every recorded version and model.
INSTANTIATE_TEST_SUITE_P(EveryVersion, RecordedReplay, ::testing::ValuesIn(fixture_sets("basic")),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           return fixture_set_name(p.param);
                         });

TEST(Remind, TiersFireOnceThenRepeatAfterIntervalAndRearmAfterCompaction) {
  TempDir tmp;
  fs::path t = tmp / "t.jsonl";
  util::Env env = tmp.env();
  env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");  // the client compacts at 167k
  env.set("CTXKIT_CONTEXT_TRANSCRIPT_WAIT_MS", "0");
  int n = 0;
  auto step = [&](int64_t cache_read) {
    std::string id = "toolu_" + std::to_string(++n);
    std::ofstream(t, std::ios::app)
        << assistant_line("msg_" + std::to_string(n), cache_read, id) << "\n";
    return context_of(run_tool("ctx-remind", {}, payload(t, id), env));
  };
  EXPECT_EQ(step(80000), "");                                // 47%
  EXPECT_TRUE(step(101000).starts_with("Context at 60% "));  // warn
  EXPECT_EQ(step(102000), "");                               // warn again, within the interval
  EXPECT_TRUE(step(126000).starts_with("Context at 75% "));  // recommend at once
  EXPECT_TRUE(step(142000).starts_with("Context at 85% "));  // urgent at once
  EXPECT_EQ(step(143000), "");
  // Compaction: a boundary and a small response re-arm the lower tiers.
  std::ofstream(t, std::ios::app)
      << R"({"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":143100,"postTokens":900}})"
      << "\n";
  EXPECT_EQ(step(20000), "");
  EXPECT_TRUE(step(101000).starts_with("Context at 60% "));
  // The same tier repeats after the interval.
  env.set("CTXKIT_CONTEXT_CHECK_INTERVAL_SECONDS", "0");
  EXPECT_TRUE(step(103000).starts_with("Context at 61% "));
}

// [compact] at without a supervisor: the reminder names the command the user types and the pins
// the compaction keeps, from N on (below the warn tier too), rate-limited like the tiers; under a
// supervisor (which carries the compaction out) it is not given.
TEST(Remind, CompactAtWithoutASupervisorNamesTheCommandAndThePins) {
  TempDir tmp;
  fs::path t = tmp / "proj" / "t.jsonl";
  fs::create_directories(t.parent_path());
  util::Env env = tmp.env();
  env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");  // the client compacts at 167k
  env.set("CTXKIT_CONTEXT_TRANSCRIPT_WAIT_MS", "0");
  env.set("CTXKIT_COMPACT_AT", "40");
  util::Env pin_env = env;
  pin_env.set("CLAUDE_CODE_SESSION_ID", "sess-1");
  pin_env.set("CLAUDE_PROJECT_DIR", t.parent_path().string());
  ASSERT_EQ(run_tool("ctx-pin", {"add", "the API listens on port 8123"}, "", pin_env).exit_code, 0);
  int n = 0;
  auto step = [&](int64_t cache_read, const util::Env& e) {
    std::string id = "toolu_" + std::to_string(++n);
    std::ofstream(t, std::ios::app)
        << assistant_line("msg_" + std::to_string(n), cache_read, id) << "\n";
    return run_tool("ctx-remind", {}, payload(t, id), e);
  };
  EXPECT_EQ(step(60000, env).out, "");  // 35 % of the 167k where the client compacts
  auto r = step(70000, env);            // 41 %: past N, below the warn tier
  ASSERT_EQ(r.exit_code, 0);
  const std::string text = context_of(r);
  EXPECT_TRUE(text.starts_with("Context at 41% ")) << text;
  EXPECT_NE(text.find("[compact] at = 40%"), std::string::npos) << text;
  EXPECT_NE(text.find("type /compact now"), std::string::npos) << text;
  EXPECT_NE(text.find("- the API listens on port 8123"), std::string::npos) << text;
  EXPECT_EQ(json::parse(r.out)["systemMessage"],
            "ctxkit: context at 41% ([compact] at = 40%): type /compact; it keeps your 1 pin");
  EXPECT_EQ(step(71000, env).out, "");  // within the interval
  // Under a supervisor the turn's end compacts: no reminder below the tiers.
  util::Env supervised = env;
  supervised.set("CTXKIT_SUPERVISOR", "tok");
  supervised.set("CTXKIT_CONTEXT_CHECK_INTERVAL_SECONDS", "0");
  EXPECT_EQ(step(72000, supervised).out, "");
  // action = "rollover": the command is /rollover, under a supervisor too (it starts no rollover).
  supervised.set("CTXKIT_COMPACT_ACTION", "rollover");
  auto roll = step(73000, supervised);
  EXPECT_NE(context_of(roll).find("Run /rollover now"), std::string::npos) << roll.out;
  EXPECT_NE(json::parse(roll.out)["systemMessage"].get<std::string>().find("type /rollover"),
            std::string::npos);
}

TEST(Remind, ThirtyTwoSimultaneousCallsGiveExactlyOneReminder) {
  for (int round = 0; round < 3; ++round) {
    TempDir tmp;  // a fresh state database each round
    fs::path t = tmp / "t.jsonl";
    std::ofstream(t) << assistant_line("msg_1", 130000, "toolu_C") << "\n";
    util::Env env = tmp.env();
    // The 32 take the fresh database's lock one after the other: on a loaded machine or under a
    // sanitizer that queue outlasts the default second (each then stays quiet and says the database
    // was locked, as designed). The point here is that exactly one reminds.
    env.set("CTXKIT_STATE_BUSY_TIMEOUT_MS", "20000");
    std::vector<std::future<util::ProcessResult>> runs;
    for (int i = 0; i < 32; ++i)
      runs.push_back(std::async(std::launch::async, [&] {
        return run_tool("ctx-remind", {}, payload(t, "toolu_C"), env);
      }));
    int reminders = 0;
    for (auto& f : runs) {
      auto r = f.get();
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.err, "");
      if (!r.out.empty()) ++reminders;
    }
    EXPECT_EQ(reminders, 1) << "round " << round;
  }
}

TEST(Remind, SubagentNeverGetsTheMainSessionsFigure) {
  TempDir tmp;
  fs::path t = tmp / "S.jsonl";
  std::ofstream(t) << assistant_line("msg_main", 150000, "toolu_main") << "\n";  // main at 89%
  util::Env env = tmp.env();
  env.set("CTXKIT_CONTEXT_TRANSCRIPT_WAIT_MS", "30");
  env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");  // the client compacts at 167k
  // No subagent file yet: silent.
  auto r = run_tool("ctx-remind", {}, payload(t, "toolu_sub", "S", "a77"), env);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  // The subagent's own file at 20%: silent.
  fs::path sub = tmp / "S/subagents/agent-a77.jsonl";
  fs::create_directories(sub.parent_path());
  std::ofstream(sub) << assistant_line("msg_s1", 33000, "toolu_sub", true) << "\n";
  r = run_tool("ctx-remind", {}, payload(t, "toolu_sub", "S", "a77"), env);
  EXPECT_EQ(r.out, "");
  // The subagent climbs to 80%: its own figure, its own rate limit.
  std::ofstream(sub, std::ios::app) << assistant_line("msg_s2", 134000, "toolu_sub2", true) << "\n";
  r = run_tool("ctx-remind", {}, payload(t, "toolu_sub2", "S", "a77"), env);
  EXPECT_TRUE(
      context_of(r).starts_with("Context at 80% (134k of 167k usable tokens) in this subagent."))
      << r.out;
  // The main session still gets its own first reminder.
  r = run_tool("ctx-remind", {}, payload(t, "toolu_main", "S"), env);
  EXPECT_TRUE(context_of(r).starts_with("Context at 89% ")) << r.out;
}

TEST(Remind, StatusLineFigureWinsWhenTheTranscriptLags) {
  TempDir tmp;
  fs::path t = tmp / "S.jsonl";
  std::ofstream(t) << assistant_line("msg_old", 60000, "toolu_old") << "\n";  // 35% and stale
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");  // the client compacts at 167k
  json status = {{"session_id", "S"},
                 {"transcript_path", t.string()},
                 {"cwd", tmp.path().string()},
                 {"model", {{"id", "claude-sonnet-4-5"}}},
                 {"context_window",
                  {{"context_window_size", 200000},
                   {"current_usage",
                    {{"input_tokens", 10},
                     {"cache_creation_input_tokens", 2000},
                     {"cache_read_input_tokens", 128000}}}}}};
  auto s = run_tool("ctx-status", {}, status.dump(), env);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out, "Context 77% · 130k of 167k · 22% until auto-compact\n");
  env.set("CTXKIT_CONTEXT_TRANSCRIPT_WAIT_MS", "30");
  auto r = run_tool("ctx-remind", {}, payload(t, "toolu_new", "S"), env);
  EXPECT_TRUE(context_of(r).starts_with("Context at 77% ")) << r.out << r.err;
}

TEST(Remind, FiftyMegabyteLineIsHandled) {
  TempDir tmp;
  fs::path t = tmp / "t.jsonl";
  {
    std::ofstream out(t);
    out << assistant_line("msg_1", 130000, "toolu_big") << "\n";
    out << R"({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_big","content":")"
        << std::string(50 << 20, 'y') << "\"}]}}\n";
  }
  util::Env env = tmp.env();
  env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");  // the client compacts at 167k
  auto r = run_tool("ctx-remind", {}, payload(t, "toolu_big"), env);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(context_of(r).starts_with("Context at 77% ")) << r.err;
  // A 50 MB payload (a huge tool_response) is fine too.
  json big = json::parse(payload(t, "toolu_big", "other-session"));
  big["tool_response"]["stdout"] = std::string(50 << 20, 'z');
  r = run_tool("ctx-remind", {}, big.dump(), env);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(context_of(r).starts_with("Context at 77% ")) << r.err;
}

TEST(Remind, CorruptMeterDatabaseIsMovedAsideAndNothingIsLost) {
  TempDir tmp;
  fs::path t = tmp / "t.jsonl";
  std::ofstream(t) << assistant_line("msg_1", 130000, "toolu_1") << "\n";
  util::Env env = tmp.env();
  env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");  // the client compacts at 167k
  fs::path db = tmp / "home/.local/state/ctxkit/meter.db";
  fs::create_directories(db.parent_path());
  std::ofstream(db) << std::string(8192, 'Q');
  auto r = run_tool("ctx-remind", {}, payload(t, "toolu_1"), env);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(context_of(r).starts_with("Context at 77% "));
  EXPECT_EQ(line_count(r.err), 1u);
  EXPECT_NE(r.err.find("was corrupt; moved it to"), std::string::npos) << r.err;
  int aside = 0;
  for (const auto& e : fs::directory_iterator(db.parent_path()))
    if (e.path().filename().string().starts_with("meter.db.corrupt-")) {
      ++aside;
      EXPECT_EQ(read_file(e.path()), std::string(8192, 'Q'));
    }
  EXPECT_EQ(aside, 1);
  // The fresh database rate-limits again.
  r = run_tool("ctx-remind", {}, payload(t, "toolu_1"), env);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
}

TEST(Remind, LockedMeterDatabaseStaysQuietAndFailsOpen) {
  TempDir tmp;
  fs::path t = tmp / "t.jsonl";
  std::ofstream(t) << assistant_line("msg_1", 130000, "toolu_1") << "\n";
  util::Env env = tmp.env();
  env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");  // the client compacts at 167k
  env.set("CTXKIT_STATE_BUSY_TIMEOUT_MS", "50");
  fs::path db = tmp / "home/.local/state/ctxkit/meter.db";
  util::ProcessResult r;
  {
    // Hold the lock while the hook runs (the meter database is held while a connection is open).
    auto store = store::MeterStore::open(db, 1000);
    ASSERT_TRUE(store);
    auto held = store->update_reminder("other", "", [&](const auto&) {
      r = run_tool("ctx-remind", {}, payload(t, "toolu_1"), env);
      return std::optional<core::ReminderState>();
    });
    ASSERT_TRUE(held);
  }
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(line_count(r.err), 1u);
  EXPECT_NE(r.err.find("locked"), std::string::npos) << r.err;
  // Once the lock is gone the reminder is given, and the database is intact.
  r = run_tool("ctx-remind", {}, payload(t, "toolu_1"), env);
  EXPECT_TRUE(context_of(r).starts_with("Context at 77% "));
  auto store = store::MeterStore::open(db, 1000);
  ASSERT_TRUE(store);
  EXPECT_EQ(*store->user_version(), store::MeterStore::kSchemaVersion);
}

TEST(Remind, ReadOnlyMeterDatabaseRemindsWithoutRateLimitAndSaysSo) {
  TempDir tmp;
  fs::permissions(tmp.path(), fs::perms::all, fs::perm_options::add);
  fs::path t = tmp / "t.jsonl";
  std::ofstream(t) << assistant_line("msg_1", 130000, "toolu_1") << "\n";
  util::Env env = tmp.env();
  env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");  // the client compacts at 167k
  fs::path db = tmp / "home/.local/state/ctxkit/meter.db";
  {
    auto s = store::MeterStore::open(db, 1000);
    ASSERT_TRUE(s);
  }
  for (fs::path p = db.parent_path(); p != tmp.path(); p = p.parent_path())
    fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(db, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                          fs::perms::others_read);
  fs::permissions(t, fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  std::string before = read_file(db);
  auto r = run_tool_as_nobody("ctx-remind", payload(t, "toolu_1"), env);
  if (r.exit_code == -1) GTEST_SKIP() << "cannot run as another user here";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(context_of(r).starts_with("Context at 77% ")) << r.out << r.err;
  EXPECT_NE(r.out.find("reminders are not rate-limited"), std::string::npos);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_EQ(read_file(db), before);
}

TEST(Remind, UnreadableTranscriptIsOneLineAndExitZero) {
  TempDir tmp;
  fs::permissions(tmp.path(), fs::perms::all, fs::perm_options::add);
  fs::path t = tmp / "t.jsonl";
  std::ofstream(t) << assistant_line("msg_1", 130000, "toolu_1") << "\n";
  fs::permissions(t, fs::perms::owner_read | fs::perms::owner_write);
  util::Env env = tmp.env();
  env.set("CTXKIT_STATE_DIR", (tmp / "nobody-state").string());
  env.set("CTXKIT_CONTEXT_TRANSCRIPT_WAIT_MS", "10");
  fs::create_directories(tmp / "nobody-state");
  // The state directory is the other user's own (a shared, world-writable one would be refused).
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown((tmp / "nobody-state").c_str(), 65534, 65534), 0);
  }
  auto r = run_tool_as_nobody("ctx-remind", payload(t, "toolu_1"), env);
  if (r.exit_code == -1) GTEST_SKIP() << "cannot run as another user here";
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ctxkit::test
