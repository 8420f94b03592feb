#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "e2e/e2e_support.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

struct WorkflowBench {
  TempDir tmp;
  fs::path wt;
  util::Env env;
  WorkflowBench() : wt(tmp.path() / "wt"), env(tmp.env()) { fs::create_directories(wt); }
  util::ProcessResult run(std::vector<std::string> args, const std::string& in = "") {
    args.insert(args.begin(), {"--worktree", wt.string()});
    return run_tool("ctx-workflow", args, in, env);
  }
  json run_json(std::vector<std::string> args, const std::string& in = "") {
    args.push_back("--json");
    auto r = run(args, in);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
  }
};

fs::path shipped(const std::string& name) {
  return fs::path(CTXKIT_SOURCE_DIR) / "share" / "workflows" / name;
}

// The design's context-example.yaml from start to end: clear before brainstorm, the loop's
// tasks, compact before each task's code sub-step and before review, outputs keyed as Lanes
// keys them.
TEST(WorkflowE2E, ContextExampleFromStartToEnd) {
  WorkflowBench b;
  auto start = b.run_json(
      {"start", shipped("context-example.yaml").string(), "--summary", "Context example run"});
  EXPECT_EQ(
      start,
      json::parse(
          R"({"contextAction":"/clear","message":"Please run `/clear` first, then call workflow_status again."})"));
  auto st = b.run_json({"status"});
  EXPECT_EQ(st["step"], "brainstorm");
  EXPECT_EQ(st["progress"], json::parse(R"({"currentStep":1,"totalSteps":4})"));
  EXPECT_EQ(b.run_json({"advance", "--output", "brainstorm done"})["step"], "plan");
  auto loop = b.run_json({"advance", "--output", "plan done"});
  EXPECT_EQ(loop["step"], "implement_loop");
  EXPECT_EQ(loop["progress"]["totalTasks"], 0);
  b.tmp.write(
      "tasks.json",
      R"([{"id":"t1","title":"First task","description":"d1"},{"id":"t2","title":"Second task"}])");
  EXPECT_EQ(
      b.run({"set-tasks", "implement_loop", (b.tmp.path() / "tasks.json").string(), "--json"}).out,
      "{\"success\":true,\"tasksSet\":2}\n");
  EXPECT_EQ(b.run_json({"status"})["subStep"], "analyze");
  for (const char* task : {"t1", "t2"}) {
    auto to_code = b.run_json({"advance", "--output", std::string(task) + " analyze done"});
    EXPECT_EQ(to_code["contextAction"], "/compact") << task;
    auto code = b.run_json({"status"});
    EXPECT_EQ(code["subStep"], "code");
    EXPECT_EQ(code["task"]["id"], task);
    EXPECT_EQ(b.run_json({"advance", "--output", std::string(task) + " code done"})["subStep"],
              "verify");
    auto next = b.run_json({"advance", "--output", std::string(task) + " verify done"});
    if (std::string(task) == "t1")
      EXPECT_EQ(next["task"]["id"], "t2");
    else
      EXPECT_EQ(next["contextAction"], "/compact");  // review
  }
  EXPECT_EQ(b.run_json({"status"})["step"], "review");
  auto done = b.run_json({"advance", "--output", "review done"});
  EXPECT_EQ(done["status"], "complete");
  EXPECT_EQ(done["instructions"], "Workflow complete.");
  auto ctx = b.run_json({"context"});
  std::vector<std::string> keys;
  for (auto it = ctx.begin(); it != ctx.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(ctx.size(), 9u);
  EXPECT_EQ(ctx["implement_loop.t2.code"], "t2 code done");
  EXPECT_EQ(ctx["review"], "review done");
  // The state file is Lanes's: summary kept, flag, snapshot.
  const std::string state = read_file(b.wt / "workflow-state.json");
  EXPECT_EQ(state.rfind("{\n  \"status\": \"complete\",", 0), 0u);
  EXPECT_NE(state.find("\"summary\": \"Context example run\""), std::string::npos);
  EXPECT_NE(state.find("\"workflow_definition\": {"), std::string::npos);
}

TEST(WorkflowE2E, HumanOutputNamesTheStepAndTheAction) {
  WorkflowBench b;
  auto start = b.run({"start", shipped("bugfix.yaml").string()});
  EXPECT_EQ(start.exit_code, 0);
  EXPECT_NE(start.out.find("Workflow running: step reproduce (1 of 4, action)"), std::string::npos)
      << start.out;
  EXPECT_EQ(b.run({"advance", "--output", "repro"}).exit_code, 0);
  b.tmp.write("diag.txt", "the cause is X");
  auto to_fix = b.run({"advance", "--output-file", (b.tmp.path() / "diag.txt").string()});
  EXPECT_NE(to_fix.out.find("Before this step: run /clear"), std::string::npos) << to_fix.out;
  auto ctx = b.run({"context"});
  EXPECT_NE(ctx.out.find("diagnose:\nthe cause is X"), std::string::npos) << ctx.out;
}

// The options of ctx-workflow itself may come after the subcommand too.
TEST(WorkflowE2E, GlobalOptionsAfterTheSubcommand) {
  WorkflowBench b;
  ASSERT_EQ(b.run({"start", shipped("bugfix.yaml").string()}).exit_code, 0);
  auto st = run_tool("ctx-workflow", {"status", "--worktree", b.wt.string(), "--json"}, "", b.env);
  ASSERT_EQ(st.exit_code, 0) << st.err;
  EXPECT_EQ(json::parse(st.out)["step"], "reproduce") << st.out;
}

TEST(WorkflowE2E, ListAndValidate) {
  WorkflowBench b;
  b.env.set("CTXKIT_SHARE_DIR", (fs::path(CTXKIT_SOURCE_DIR) / "share").string());
  auto list = b.run({"list"});
  EXPECT_EQ(list.exit_code, 0);
  for (const char* name : {"bugfix", "context-example", "feature", "refine"})
    EXPECT_NE(list.out.find(name), std::string::npos) << name;
  for (const char* name : {"bugfix.yaml", "context-example.yaml", "feature.yaml", "refine.yaml"}) {
    auto v = b.run({"validate", shipped(name).string()});
    EXPECT_EQ(v.exit_code, 0) << name << v.err;
  }
  const auto bad =
      b.tmp.write("bad.yaml",
                  "name: n\ndescription: d\nloops:\n  l:\n    - id: x\n      instructions: i\n     "
                  " context: nope\nsteps:\n  - id: l\n    type: loop\n");
  auto v = b.run({"validate", bad.string()});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.err,
            "ctx-workflow: error: " + bad.string() +
                ":7:16: Loop step 'x' context must be either 'compact' or 'clear', got: nope\n");
}

TEST(WorkflowE2E, BadInputIsOneLineAndExitOne) {
  WorkflowBench b;
  auto not_started = b.run({"advance", "--output", "x"});
  EXPECT_EQ(not_started.exit_code, 1);
  EXPECT_EQ(not_started.err,
            "ctx-workflow: error: Workflow not started. Call workflow_start first.\n");
  auto missing = b.run({"start", "no-such-workflow"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err.rfind("ctx-workflow: error: workflow 'no-such-workflow' not found", 0), 0u)
      << missing.err;
  auto usage = b.run({"frobnicate"});
  EXPECT_EQ(usage.exit_code, 1);
  EXPECT_EQ(line_count(usage.err), 1u);
  ASSERT_EQ(b.run({"start", shipped("feature.yaml").string()}).exit_code, 0);
  auto bad_tasks = b.run({"set-tasks", "implement", "-"}, "not json");
  EXPECT_EQ(bad_tasks.exit_code, 1);
  EXPECT_EQ(bad_tasks.err, "ctx-workflow: error: -: not valid JSON\n");
  auto wrong_loop = b.run({"set-tasks", "plan", "-"}, R"([{"id":"a","title":"b"}])");
  EXPECT_EQ(wrong_loop.err, "ctx-workflow: error: Loop 'plan' not found in template\n");
}

TEST(WorkflowE2E, RalphRoundsCompactWhenNoSessionIsKnown) {
  WorkflowBench b;
  // No session known: the threshold cannot be checked, so the compact is handed out.
  ASSERT_EQ(b.run({"start", shipped("refine.yaml").string()}).exit_code, 0);
  auto round1 = b.run_json({"advance", "--output", "draft in notes.md"});
  EXPECT_EQ(round1["contextAction"], "/compact");
  EXPECT_EQ(round1["focus"],
            "Keep the request, where the current version is and the list of known weaknesses");
  auto st = b.run_json({"status"});
  EXPECT_EQ(st["ralphIteration"], 1);
  EXPECT_EQ(b.run_json({"advance", "--output", "r1"})["contextAction"], "/compact");
  EXPECT_EQ(b.run_json({"status"})["ralphIteration"], 2);
}

// An assistant transcript line whose usage puts the context at `tokens` (5 input, the rest cache
// read).
std::string reading(int64_t tokens) {
  json j = {
      {"type", "assistant"}, {"isSidechain", false}, {"timestamp", "2026-11-21T12:00:00.000Z"}};
  j["message"] = {{"id", "msg_" + std::to_string(tokens)},
                  {"model", "claude-sonnet-4-5"},
                  {"role", "assistant"},
                  {"content", json::array({{{"type", "text"}, {"text", "ok"}}})},
                  {"usage",
                   {{"input_tokens", 5},
                    {"cache_creation_input_tokens", 0},
                    {"cache_read_input_tokens", tokens - 5}}}};
  return j.dump() + "\n";
}

// The session's own figure decides (its transcript, found by $CLAUDE_CODE_SESSION_ID): refine's
// rounds compact only when the session is at context_min_percent (30) or above.
TEST(WorkflowE2E, RalphRoundsCompactOnlyAboveTheThreshold) {
  WorkflowBench b;
  const std::string sid = "5d0c7a3e-2b8f-4f61-9c3a-7e1d2f4b6a80";
  const fs::path transcript = b.tmp.write("home/.claude/projects/-wt/" + sid + ".jsonl",
                                          reading(16700));  // 10% of 167k usable
  b.env.set("CLAUDE_CODE_SESSION_ID", sid);
  b.env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");  // the client compacts at 167k
  ASSERT_EQ(b.run({"start", shipped("refine.yaml").string()}).exit_code, 0);
  auto small = b.run_json({"advance", "--output", "draft in notes.md"});
  EXPECT_FALSE(small.contains("contextAction")) << small.dump();
  EXPECT_EQ(small["step"], "improve") << small.dump();
  EXPECT_EQ(b.run_json({"status"})["ralphIteration"], 1);
  std::ofstream(transcript, std::ios::app) << reading(50100);  // 30% exactly
  auto at = b.run_json({"advance", "--output", "r1"});
  EXPECT_EQ(at["contextAction"], "/compact") << at.dump();
  EXPECT_EQ(b.run_json({"status"})["ralphIteration"], 2);
  std::ofstream(transcript, std::ios::app) << reading(48430);  // 29%: under again
  auto under = b.run_json({"advance", "--output", "r2"});
  EXPECT_FALSE(under.contains("contextAction")) << under.dump();
  EXPECT_EQ(b.run_json({"status"})["ralphIteration"], 3);
}

// A FIFO where a file is expected (a template, an output file, the state file in a hostile
// worktree) is refused at once: the programs never block on it.
TEST(WorkflowE2E, FifosAreRefusedNotWaitedOn) {
  WorkflowBench b;
  const fs::path fifo = b.tmp.path() / "fifo.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto v = b.run({"validate", fifo.string()});
  EXPECT_FALSE(v.timed_out);
  EXPECT_EQ(v.exit_code, 1) << v.err;
  EXPECT_EQ(b.run({"start", shipped("feature.yaml").string()}).exit_code, 0);
  auto o = b.run({"advance", "--output-file", fifo.string()});
  EXPECT_FALSE(o.timed_out);
  EXPECT_EQ(o.exit_code, 1) << o.err;
  fs::remove(b.wt / "workflow-state.json");
  ASSERT_EQ(::mkfifo((b.wt / "workflow-state.json").c_str(), 0600), 0);
  auto st = b.run({"status"});
  EXPECT_FALSE(st.timed_out);
  EXPECT_EQ(st.exit_code, 1) << st.err;
  json clear = {{"session_id", "S"},
                {"transcript_path", (b.tmp.path() / "t.jsonl").string()},
                {"cwd", b.wt.string()},
                {"hook_event_name", "SessionStart"},
                {"source", "clear"}};
  auto g = run_tool("ctx-gate", {"--hook", "--worktree", b.wt.string()}, clear.dump(), b.env);
  EXPECT_FALSE(g.timed_out);
  EXPECT_EQ(g.exit_code, 0) << g.err;  // a hook fails open
}

}  // namespace
}  // namespace ctxkit::test
