// Hostile input against the workflow programs (ctx-workflow, ctx-gate, ctx-workflow-mcp) and the
// set-up that registers them: YAML whose aliases expand without end, JSON nested 500,000 deep,
// corrupt, linked and read-only files, terminal escapes, two servers on one worktree. Each
// program answers in one line, or goes on with the good input beside the bad, never crashes,
// never loses or replaces what it should keep.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "e2e/e2e_support.hpp"
#include "e2e/mcp_client.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

const char* kTemplate = R"(name: plain
description: Two steps
steps:
  - id: plan
    type: action
    instructions: Plan.
  - id: build
    type: loop
loops:
  build:
    - id: code
      instructions: "Write {task.title}."
)";

// Ten aliases of the line before, eight lines deep: 10^8 nodes from 500 bytes.
std::string alias_bomb() {
  std::string y =
      "name: bomb\ndescription: b\nsteps:\n  - {id: s, type: action, instructions: i}\na0: &a0 [x, "
      "x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 8; ++i) {
    y += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) y += std::string(k ? ", " : "") + "*a" + std::to_string(i - 1);
    y += "]\n";
  }
  return y;
}

std::string deep_json(size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

struct Bench {
  TempDir tmp;
  fs::path wt;
  util::Env env;
  Bench() : wt(tmp.path() / "wt"), env(tmp.env()) {
    fs::create_directories(wt);
    env.set("CLAUDE_PROJECT_DIR", wt.string());
    tmp.write("plain.yaml", kTemplate);
  }
  util::ProcessResult wf(std::vector<std::string> args, const std::string& in = "") {
    args.insert(args.begin(), {"--worktree", wt.string()});
    return run_tool("ctx-workflow", args, in, env);
  }
  fs::path state() const { return wt / "workflow-state.json"; }
  std::unique_ptr<McpClient> server() {
    auto c = std::make_unique<McpClient>(
        std::vector<std::string>{std::string(CTXKIT_BIN_DIR) + "/ctx-workflow-mcp", "--worktree",
                                 wt.string(), "--repo-root", wt.string()},
        env, tmp / "stderr.txt");
    c->initialize();
    return c;
  }
};

// One template whose aliases never end, and one that contains itself: validate says so in one
// line; workflow_list lists them with their error beside the good one, and the server goes on.
TEST(HostileWorkflow, TemplatesThatExpandWithoutEndAreErrorsOfTheirOwn) {
  Bench b;
  const fs::path bomb = b.tmp.write("wt/.ctxkit/workflows/bomb.yaml", alias_bomb());
  const fs::path loop = b.tmp.write("wt/.ctxkit/workflows/loop.yaml",
                                    "name: loop\ndescription: l\nsteps: &a [ *a ]\n");
  b.tmp.write("wt/.ctxkit/workflows/plain.yaml", kTemplate);
  for (const auto& f : {bomb, loop}) {
    auto r = b.wf({"validate", f.string()});
    EXPECT_EQ(r.exit_code, 1) << f << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(f.string() + ":"), std::string::npos) << r.err;
  }
  auto c = b.server();
  json list = McpClient::text_json(c->call("workflow_list"));
  ASSERT_EQ(list["workflows"].size(), 3u) << list.dump();
  std::map<std::string, json> by_name;
  for (const auto& w : list["workflows"]) by_name[w["name"]] = w;
  EXPECT_NE(by_name["bomb"]["error"].get<std::string>().find("expands to more than 100000 nodes"),
            std::string::npos);
  EXPECT_NE(by_name["loop"]["error"].get<std::string>().find(
                "an alias refers to a node that contains it"),
            std::string::npos);
  EXPECT_FALSE(by_name["plain"].contains("error"));
  json started = McpClient::text_json(c->call("workflow_start", {{"workflow", "plain"}}));
  EXPECT_EQ(started["step"], "plan") << started.dump();
  c->close_input();
  EXPECT_EQ(c->wait(), 0);
}

// A state file nested 500,000 deep (about 1 MB): every reader refuses it in one line (the hook
// with a note, failing open), none crashes.
TEST(HostileWorkflow, ADeeplyNestedStateFileIsRefusedByEveryReader) {
  Bench b;
  ASSERT_EQ(b.wf({"start", (b.tmp / "plain.yaml").string()}).exit_code, 0);
  std::string state = read_file(b.state());
  state.insert(1, "\"deep\": " + deep_json(500000) + ",");
  std::ofstream(b.state()) << state;
  auto st = b.wf({"status"});
  EXPECT_EQ(st.exit_code, 1) << st.err;
  EXPECT_EQ(st.err, "ctx-workflow: error: " + b.state().string() +
                        ": workflow state: nested deeper than 128 levels\n");
  auto gate = run_tool("ctx-gate", {"--worktree", b.wt.string()}, "", b.env);
  EXPECT_EQ(gate.exit_code, 1) << gate.err;
  EXPECT_EQ(line_count(gate.err), 1u) << gate.err;
  const json payload = {{"session_id", "s"},
                        {"transcript_path", (b.tmp / "t.jsonl").string()},
                        {"cwd", b.wt.string()},
                        {"hook_event_name", "SessionStart"},
                        {"source", "clear"}};
  auto hook = run_tool("ctx-gate", {"--hook"}, payload.dump(), b.env);
  EXPECT_EQ(hook.exit_code, 0) << hook.err;
  EXPECT_EQ(hook.out, "");
  EXPECT_EQ(line_count(hook.err), 1u) << hook.err;
  EXPECT_NE(hook.err.find("nested deeper than 128 levels"), std::string::npos) << hook.err;
  auto c = b.server();
  json r = c->call("workflow_status");
  EXPECT_EQ(r["isError"], true) << r.dump();
  EXPECT_NE(
      McpClient::text_json(r)["error"].get<std::string>().find("nested deeper than 128 levels"),
      std::string::npos);
  c->close_input();
  EXPECT_EQ(c->wait(), 0);
  EXPECT_EQ(read_file(b.state()), state);
}

TEST(HostileWorkflow, ADeeplyNestedTasksFileIsRefusedInOneLine) {
  Bench b;
  ASSERT_EQ(b.wf({"start", (b.tmp / "plain.yaml").string()}).exit_code, 0);
  ASSERT_EQ(b.wf({"advance", "--output", "planned"}).exit_code, 0);
  const fs::path tasks = b.tmp.write("tasks.json", "{\"tasks\": " + deep_json(500000) + "}");
  auto r = b.wf({"set-tasks", "build", tasks.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "ctx-workflow: error: " + tasks.string() + ": nested deeper than 64 levels\n");
}

// `start NAME` over a state file that does not parse: an error, the file (and its outputs) kept.
TEST(HostileWorkflow, StartDoesNotReplaceACorruptStateFile) {
  Bench b;
  const std::string corrupt =
      R"({"status":"running","step":"build","outputs":{"plan":"three days of work"},})";
  std::ofstream(b.state()) << corrupt;
  auto r = b.wf({"start", (b.tmp / "plain.yaml").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(b.state()), corrupt);
  auto c = b.server();
  json answer = c->call("workflow_start", {{"workflow", (b.tmp / "plain.yaml").string()}});
  EXPECT_EQ(answer["isError"], true) << answer.dump();
  c->close_input();
  c->wait();
  EXPECT_EQ(read_file(b.state()), corrupt);
}

// Task titles, template text and session ids reach the terminal with control characters escaped.
TEST(HostileWorkflow, StatusPrintsNoEscapeSequences) {
  Bench b;
  ASSERT_EQ(b.wf({"start", (b.tmp / "plain.yaml").string()}).exit_code, 0);
  ASSERT_EQ(b.wf({"advance", "--output", "planned"}).exit_code, 0);
  auto set = b.wf({"set-tasks", "build", "-"},
                  R"([{"id":"t1","title":"evil\u001b]0;pwned\u0007\u001b[2J title"}])");
  ASSERT_EQ(set.exit_code, 0) << set.err;
  auto st = b.wf({"status"});
  ASSERT_EQ(st.exit_code, 0) << st.err;
  EXPECT_EQ(st.out.find('\x1b'), std::string::npos) << st.out;
  EXPECT_EQ(st.out.find('\x07'), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("task t1: evil\\x1b]0;pwned\\x07\\x1b[2J title (1 of 1)"),
            std::string::npos)
      << st.out;
  EXPECT_NE(st.out.find("Write evil\\x1b]0;pwned\\x07\\x1b[2J title."), std::string::npos)
      << st.out;
  auto ctx = b.wf({"context"});
  EXPECT_EQ(ctx.out.find('\x1b'), std::string::npos);
}

// The SessionStart hook records the session id that confirmed an action; status prints it escaped.
TEST(HostileWorkflow, StatusPrintsASessionIdFromTheHookEscaped) {
  Bench b;
  b.tmp.write("compact.yaml",
              "name: c\ndescription: d\nsteps:\n  - {id: plan, type: action, instructions: P.}\n"
              "  - {id: build, type: action, context: compact, instructions: B.}\n");
  ASSERT_EQ(b.wf({"start", (b.tmp / "compact.yaml").string()}).exit_code, 0);
  ASSERT_EQ(b.wf({"advance", "--output", "planned"}).exit_code, 0);  // hands out /compact
  const json payload = {{"session_id", "evil\x1b]0;pwned\x07"},
                        {"transcript_path", (b.tmp / "t.jsonl").string()},
                        {"cwd", b.wt.string()},
                        {"hook_event_name", "SessionStart"},
                        {"source", "compact"}};
  auto hook = run_tool("ctx-gate", {"--hook"}, payload.dump(), b.env);
  ASSERT_EQ(hook.exit_code, 0) << hook.err;
  auto st = b.wf({"status"});
  ASSERT_EQ(st.exit_code, 0) << st.err;
  EXPECT_NE(st.out.find("by session-start:evil\\x1b]0;pwned\\x07"), std::string::npos) << st.out;
  EXPECT_EQ(st.out.find('\x1b'), std::string::npos) << st.out;
}

// Two servers on one worktree advancing at the same time: every advance answered as a success is
// recorded (the state's lock orders them; neither saves over the other's change).
TEST(HostileWorkflow, TwoServersOnOneWorktreeLoseNoAdvance) {
  Bench b;
  b.tmp.write("ralph.yaml",
              "name: r\ndescription: d\nsteps:\n  - {id: polish, type: ralph, n: 1000, "
              "instructions: P.}\n");
  ASSERT_EQ(b.wf({"start", (b.tmp / "ralph.yaml").string()}).exit_code, 0);
  constexpr int kEach = 100;
  std::atomic<int> ok{0};
  auto work = [&](const std::string& who) {
    auto c = b.server();
    for (int i = 0; i < kEach; ++i) {
      json r = c->call("workflow_advance", {{"output", who + std::to_string(i)}});
      if (r.is_object() && !r.value("isError", false)) ++ok;
    }
    c->close_input();
    c->wait();
  };
  std::thread t1(work, "a"), t2(work, "b");
  t1.join();
  t2.join();
  EXPECT_EQ(ok.load(), 2 * kEach);
  auto st = b.wf({"status", "--json"});
  ASSERT_EQ(st.exit_code, 0) << st.err;
  EXPECT_EQ(json::parse(st.out)["ralphIteration"], 2 * kEach + 1);
  EXPECT_EQ(json::parse(b.wf({"context", "--json"}).out).size(), static_cast<size_t>(2 * kEach));
}

// ~/.claude.json nested 500,000 deep: register refuses it in one line; the whole install refuses
// before it writes anything (not a settings.json with hooks and no server).
TEST(HostileWorkflow, ADeeplyNestedClaudeJsonFailsTheInstallBeforeAnythingIsWritten) {
  TempDir tmp;
  const fs::path cj = tmp.write("home/.claude.json", "{\"projects\": " + deep_json(500000) + "}");
  auto reg = run_tool("ctx-workflow-mcp",
                      {"register", "--config", cj.string(), "--command", "/x/ctx-workflow-mcp"}, "",
                      tmp.env());
  EXPECT_EQ(reg.exit_code, 1);
  EXPECT_EQ(reg.err,
            "ctx-workflow-mcp: error: " + cj.string() + ": nested deeper than 256 levels\n");
  fs::create_directories(tmp / "data");
  auto inst = run_tool("ctx-settings",
                       {"install", "--bin-dir", bin_dir(), "--data-dir", (tmp / "data").string()},
                       "", tmp.env());
  EXPECT_EQ(inst.exit_code, 1) << inst.out;
  EXPECT_EQ(line_count(inst.err), 1u) << inst.err;
  EXPECT_NE(inst.err.find("nested deeper than 256 levels"), std::string::npos) << inst.err;
  EXPECT_FALSE(fs::exists(tmp / "home/.claude/settings.json"));
  EXPECT_FALSE(fs::exists(tmp / "home/.claude/skills"));
  EXPECT_FALSE(fs::exists(tmp / "home/.local/state/ctxkit/install"));
}

// A settings file (or ~/.claude.json) the user made read-only is not replaced behind their back.
TEST(HostileWorkflow, AReadOnlySettingsFileIsNotEdited) {
  TempDir tmp;
  const fs::path s = tmp.write("home/.claude/settings.json", "{\"model\": \"opus\"}\n");
  fs::permissions(s, fs::perms::owner_read);
  auto r = run_tool("ctx-settings", {"install", "--settings", s.string(), "--bin-dir", "/b"}, "",
                    tmp.env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "ctx-settings: error: " + s.string() +
                       ": the file is read-only (nothing written; make it writable to install)\n");
  EXPECT_EQ(read_file(s), "{\"model\": \"opus\"}\n");
  struct stat st {};
  ASSERT_EQ(::stat(s.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0400u);
  const fs::path cj = tmp.write("home/.claude.json", "{}");
  fs::permissions(cj, fs::perms::owner_read);
  auto reg = run_tool("ctx-workflow-mcp",
                      {"register", "--config", cj.string(), "--command", "/x/ctx-workflow-mcp"}, "",
                      tmp.env());
  EXPECT_EQ(reg.exit_code, 1);
  EXPECT_NE(reg.err.find("the file is read-only"), std::string::npos) << reg.err;
  EXPECT_EQ(read_file(cj), "{}");
}

// The --verbose log names methods from the input: each stays one line of text, with no terminal
// escape and no line of its own.
TEST(HostileWorkflow, TheVerboseLogEscapesWhatTheInputNames) {
  Bench b;
  const std::string in =
      json{{"jsonrpc", "2.0"}, {"method", "x\x1b[2J\nctx-workflow-mcp: forged"}}.dump() + "\n";
  auto r =
      run_tool("ctx-workflow-mcp",
               {"--worktree", b.wt.string(), "--repo-root", b.wt.string(), "--verbose"}, in, b.env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ctx-workflow-mcp: <- notification x\\x1b[2J\\nctx-workflow-mcp: forged\n"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace ctxkit::test
