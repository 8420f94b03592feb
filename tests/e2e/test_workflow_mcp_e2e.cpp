// ctx-workflow-mcp driven over stdio by a test client, as Claude Code drives it.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "e2e/e2e_support.hpp"
#include "e2e/mcp_client.hpp"
#include "store/state_store.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

// The design's context-example.yaml (a clear action step, a loop whose `code` sub-step compacts,
// a compact review step) plus a ralph step of two compacting iterations.
const char* kContextExample = R"(name: context-example
description: Example workflow demonstrating context management features

steps:
  - id: brainstorm
    type: action
    context: clear
    instructions: |
      Start with a fresh context and brainstorm ideas.

  - id: plan
    type: action
    instructions: Create a detailed plan.

  - id: implement_loop
    type: loop

  - id: refine
    type: ralph
    n: 2
    context: compact
    instructions: Refine the work.

  - id: review
    type: action
    context: compact
    instructions: Review the implementation.

loops:
  implement_loop:
    - id: analyze
      instructions: Analyze {task.title}

    - id: code
      context: compact
      instructions: Write the code for {task.id}.

    - id: verify
      instructions: Verify the implementation works
)";

class WorkflowMcpE2E : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path worktree = tmp / "wt";
  fs::path workflow;
  void SetUp() override {
    fs::create_directories(worktree);
    workflow = tmp.write("wf/context-example.yaml", kContextExample);
  }
  std::unique_ptr<McpClient> start(std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {std::string(CTXKIT_BIN_DIR) + "/ctx-workflow-mcp",
                                     "--worktree",
                                     worktree.string(),
                                     "--workflow-path",
                                     workflow.string(),
                                     "--repo-root",
                                     worktree.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto c = std::make_unique<McpClient>(argv, tmp.env(), tmp / "stderr.txt");
    json init = c->initialize();
    EXPECT_EQ(init["result"]["protocolVersion"], "2025-11-25");
    return c;
  }
  static json ok(McpClient& c, const std::string& tool, json args = json::object()) {
    json r = c.call(tool, std::move(args));
    EXPECT_EQ(r["isError"], false) << tool << ": " << r.dump();
    EXPECT_FALSE(r.contains("structuredContent"));
    return McpClient::text_json(r);
  }
  json state() const {
    std::ifstream in(worktree / "workflow-state.json");
    return json::parse(in);
  }
};

// The server keeps the state database open for its events, but not past the file: once it has
// been moved aside (as a corrupt one is), the next event goes into a new database.
TEST_F(WorkflowMcpE2E, EventsFollowTheStateDatabaseWhenItIsReplaced) {
  auto c = start();
  EXPECT_EQ(ok(*c, "workflow_start", {{"summary", "events"}})["contextAction"], "/clear");
  std::vector<fs::path> dbs;
  for (const auto& e : fs::recursive_directory_iterator(tmp.path()))
    if (e.path().filename() == "state.db") dbs.push_back(e.path());
  ASSERT_EQ(dbs.size(), 1u);
  const fs::path db = dbs[0];
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code ec;
    fs::rename(db.string() + suffix, db.string() + ".moved" + suffix, ec);
  }
  ok(*c, "workflow_advance", {{"output", "ideas"}});
  ok(*c, "workflow_set_tasks",
     {{"loop_id", "implement_loop"}, {"tasks", {{{"id", "t1"}, {"title", "First task"}}}}});
  ok(*c, "workflow_advance", {{"output", "the plan"}});
  EXPECT_EQ(ok(*c, "workflow_advance", {{"output", "analysed"}})["contextAction"], "/compact");
  ASSERT_TRUE(fs::exists(db)) << "no new state database";
  auto store = store::StateStore::open(db, 1000);
  ASSERT_TRUE(store) << store.error().message;
  auto rows = store->events("workflow", worktree.string());
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_NE(rows->front().data.find("\"action\":\"compact\""), std::string::npos)
      << rows->front().data;
}

TEST_F(WorkflowMcpE2E, HandshakeListsTheWorkflowToolsAndInstructions) {
  auto c = start();
  json list = c->request("tools/list");
  std::vector<std::string> names;
  for (const auto& t : list["result"]["tools"]) names.push_back(t["name"]);
  for (const char* want : {"workflow_start", "workflow_set_tasks", "workflow_status",
                           "workflow_advance", "workflow_context"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  json again = c->request("initialize", {{"protocolVersion", "2025-06-18"}});
  EXPECT_EQ(again["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(again["result"]["serverInfo"]["name"], "ctxkit-workflow");
  EXPECT_FALSE(again["result"]["instructions"].get<std::string>().empty());
  EXPECT_EQ(c->request("ping")["result"], json::object());
  c->close_input();
  EXPECT_EQ(c->wait(), 0);
  EXPECT_EQ(read_file(tmp / "stderr.txt"), "") << "nothing logged unless asked";
}

TEST_F(WorkflowMcpE2E, WholeContextExampleWithLoopRalphAndBothActions) {
  auto c = start();
  // brainstorm: clear, handed out once.
  EXPECT_EQ(ok(*c, "workflow_start", {{"summary", "Context example run"}})["contextAction"],
            "/clear");
  EXPECT_EQ(state()["contextActionExecuted"], true) << "marked and saved with the answer";
  json s = ok(*c, "workflow_status");
  EXPECT_EQ(s["step"], "brainstorm");
  EXPECT_FALSE(s.contains("contextAction"));
  EXPECT_EQ(ok(*c, "workflow_start")["step"], "brainstorm")
      << "a second start neither resets nor repeats";
  EXPECT_EQ(ok(*c, "workflow_advance", {{"output", "ideas"}})["step"], "plan");
  // The loop: tasks, then each task's code sub-step compacts once.
  ok(*c, "workflow_set_tasks",
     {{"loop_id", "implement_loop"},
      {"tasks",
       {{{"id", "t1"}, {"title", "First task"}}, {{"id", "t2"}, {"title", "Second task"}}}}});
  s = ok(*c, "workflow_advance", {{"output", "the plan"}});
  EXPECT_EQ(s["step"], "implement_loop");
  EXPECT_EQ(s["subStep"], "analyze");
  EXPECT_EQ(s["task"]["id"], "t1");
  EXPECT_EQ(s["instructions"].get<std::string>().rfind("Analyze First task", 0), 0u);
  for (const char* task : {"t1", "t2"}) {
    EXPECT_EQ(ok(*c, "workflow_advance", {{"output", "analysed"}})["contextAction"], "/compact")
        << task;
    s = ok(*c, "workflow_status");
    EXPECT_EQ(s["subStep"], "code");
    EXPECT_EQ(s["task"]["id"], task);
    EXPECT_EQ(s["instructions"].get<std::string>().rfind(
                  std::string("Write the code for ") + task + ".", 0),
              0u);
    s = ok(*c, "workflow_advance", {{"output", "coded"}});
    EXPECT_EQ(s["subStep"], "verify") << "no action on verify";
    s = ok(*c, "workflow_advance", {{"output", "verified"}});
    if (std::string(task) == "t1") {
      EXPECT_EQ(s["subStep"], "analyze");
    }
  }
  // Ralph: compact before each of the two iterations.
  EXPECT_EQ(s["contextAction"], "/compact");
  s = ok(*c, "workflow_status");
  EXPECT_EQ(s["step"], "refine");
  EXPECT_EQ(s["ralphIteration"], 1);
  EXPECT_EQ(ok(*c, "workflow_advance", {{"output", "iteration 1"}})["contextAction"], "/compact");
  EXPECT_EQ(ok(*c, "workflow_status")["ralphIteration"], 2);
  // Review: compact, then complete.
  EXPECT_EQ(ok(*c, "workflow_advance", {{"output", "iteration 2"}})["contextAction"], "/compact");
  EXPECT_EQ(ok(*c, "workflow_status")["step"], "review");
  s = ok(*c, "workflow_advance", {{"output", "reviewed"}});
  EXPECT_EQ(s["status"], "complete");
  json outputs = ok(*c, "workflow_context");
  EXPECT_EQ(outputs.dump().find("implement_loop.t2.code") != std::string::npos, true)
      << outputs.dump();
  EXPECT_EQ(state()["status"], "complete");
  c->close_input();
  EXPECT_EQ(c->wait(), 0);
}

TEST_F(WorkflowMcpE2E, RestartInTheMiddleResumesOnAnyCallFlagIncluded) {
  {
    auto c = start();
    ok(*c, "workflow_start", {{"summary", "restart"}});
    ok(*c, "workflow_advance", {{"output", "b"}});
    ok(*c, "workflow_set_tasks",
       {{"loop_id", "implement_loop"}, {"tasks", {{{"id", "t1"}, {"title", "One"}}}}});
    ok(*c, "workflow_advance", {{"output", "p"}});
    EXPECT_EQ(ok(*c, "workflow_advance", {{"output", "a"}})["contextAction"], "/compact");
    c->kill(SIGKILL);
    c->wait();
  }
  auto c = start();
  // The first call after the restart is an advance (Lanes would answer "Workflow not started").
  json s = ok(*c, "workflow_advance", {{"output", "coded after restart"}});
  EXPECT_EQ(s["subStep"], "verify");
  EXPECT_EQ(s["task"]["id"], "t1");
  EXPECT_EQ(state()["outputs"]["implement_loop.t1.code"], "coded after restart");
}

TEST_F(WorkflowMcpE2E, BadCallsAreToolErrorsOrProtocolErrorsAndTheServerLivesOn) {
  auto c = start();
  json r = c->call("workflow_advance", {{"output", "too early"}});
  EXPECT_EQ(r["isError"], true);
  EXPECT_TRUE(McpClient::text_json(r).contains("error"));
  ok(*c, "workflow_start");
  r = c->call("workflow_set_tasks", {{"loop_id", 5}});
  EXPECT_EQ(r["isError"], true);
  r = c->call("workflow_set_tasks", {{"loop_id", "no_such_loop"}, {"tasks", json::array()}});
  EXPECT_EQ(r["isError"], true);
  r = c->call("no_such_tool", json::object());
  EXPECT_EQ(McpClient::text_json(r)["error"], "Unknown tool: no_such_tool");
  // Protocol errors.
  c->write_raw("this is not json\n");
  EXPECT_EQ(json::parse(*c->read_line())["error"]["code"], -32700);
  c->write_raw(std::string(100000, '[') + "\n");
  EXPECT_EQ(json::parse(*c->read_line())["error"]["code"], -32700);
  c->write_raw(std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"\0}\n", 42));
  EXPECT_EQ(json::parse(*c->read_line())["error"]["code"], -32700);
  c->write_raw(
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
      "call\",\"params\":{\"name\":\"workflow_advance\",\"arguments\":{\"output\":\"\xff\"}}}\n");
  EXPECT_EQ(json::parse(*c->read_line())["error"]["code"], -32700);
  EXPECT_EQ(c->request("resources/list")["error"]["code"], -32601);
  EXPECT_EQ(c->request("tools/call", {{"arguments", json::object()}})["error"]["code"], -32602);
  // A 20 MB line (over the 16 MiB limit) is refused and skipped.
  c->write_raw(std::string(20 << 20, ' ') + "{}\n");
  EXPECT_EQ(json::parse(*c->read_line())["error"]["message"],
            "Parse error: message longer than 16777216 bytes");
  EXPECT_EQ(ok(*c, "workflow_status")["step"], "brainstorm");
  c->close_input();
  EXPECT_EQ(c->wait(), 0);
}

TEST_F(WorkflowMcpE2E, SigtermAndSigintEndTheServerWithCodeZero) {
  for (int sig : {SIGTERM, SIGINT}) {
    auto c = start();
    ok(*c, "workflow_start");
    c->kill(sig);
    EXPECT_EQ(c->wait(), 0) << sig;
    EXPECT_EQ(state()["step"], "brainstorm");
  }
}

TEST_F(WorkflowMcpE2E, WorktreeDefaultsToClaudeProjectDir) {
  util::Env env = tmp.env();
  env.set("CLAUDE_PROJECT_DIR", worktree.string());
  McpClient c({std::string(CTXKIT_BIN_DIR) + "/ctx-workflow-mcp", "--workflow", workflow.string()},
              env, tmp / "stderr.txt");
  c.initialize();
  ok(c, "workflow_start");
  EXPECT_TRUE(fs::exists(worktree / "workflow-state.json"));
}

TEST_F(WorkflowMcpE2E, RegisterWritesTheUserEntryAndUnregisterRemovesExactlyIt) {
  const std::string original =
      "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n "
      "   }\n  }\n}";
  fs::path config = tmp.write("home/.claude.json", original);
  fs::path manifest = tmp / "manifest.json";
  auto r = run_tool("ctx-workflow-mcp",
                    {"register", "--config", config.string(), "--manifest", manifest.string()}, "",
                    tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::ordered_json::parse(read_file(config));
  EXPECT_EQ(doc["mcpServers"]["ctxkit-workflow"].dump(),
            R"({"type":"stdio","command":")" + std::string(CTXKIT_BIN_DIR) +
                R"(/ctx-workflow-mcp","args":[],"env":{}})");
  EXPECT_EQ(read_file(config).back(), '}') << "no final newline added to a file that had none";
  r = run_tool("ctx-workflow-mcp",
               {"register", "--config", config.string(), "--manifest", manifest.string()}, "",
               tmp.env());
  EXPECT_NE(r.out.find("already registered"), std::string::npos);
  r = run_tool("ctx-workflow-mcp",
               {"unregister", "--config", config.string(), "--manifest", manifest.string()}, "",
               tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(config), original);
  EXPECT_FALSE(fs::exists(manifest));
}

TEST_F(WorkflowMcpE2E, ProjectMcpJsonCreatedByRegisterIsRemovedByUnregister) {
  fs::path config = tmp / "proj/.mcp.json";
  fs::path manifest = tmp / "manifest.json";
  auto r = run_tool("ctx-workflow-mcp",
                    {"register", "--config", config.string(), "--manifest", manifest.string()}, "",
                    tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(read_file(config))["mcpServers"].contains("ctxkit-workflow"));
  r = run_tool("ctx-workflow-mcp",
               {"unregister", "--config", config.string(), "--manifest", manifest.string()}, "",
               tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(config));
  // A broken file is refused with one line, untouched.
  fs::path broken = tmp.write("b/.mcp.json", "{oops");
  r = run_tool("ctx-workflow-mcp", {"register", "--config", broken.string()}, "", tmp.env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("ctx-workflow-mcp: error: " + broken.string() + " is not valid JSON", 0),
            0u)
      << r.err;
  EXPECT_EQ(read_file(broken), "{oops");
}

}  // namespace
}  // namespace ctxkit::test
