#include <gtest/gtest.h>

#include "claude/mcp_config.hpp"

namespace ctxkit::claude {
namespace {
using ojson = nlohmann::ordered_json;

McpServerEntry ours() {
  return {"ctxkit-workflow", "/opt/ctx/bin/ctx-workflow-mcp", {}, {}};
}

// A user config as the client writes it (JSON.stringify(…, null, 2)): other servers, projects,
// unicode, numbers.
const char* kClaudeJson = R"({
  "numStartups": 12,
  "installMethod": "npm",
  "tipsHistory": {
    "new-user-warmup": 7
  },
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-github"
      ],
      "env": {
        "GITHUB_TOKEN": "x"
      }
    }
  },
  "projects": {
    "/home/u/proj": {
      "allowedTools": [],
      "hasTrustDialogAccepted": true,
      "lastCost": 0.1234,
      "note": "café – ü"
    }
  },
  "userID": "abc"
})";

TEST(McpConfig, EntryHasTheShapeClaudeMcpAddWrites) {
  McpServerEntry e{"wf", "/opt/ctxkit/bin/ctxkit-mcp", {"--stdio"}, {{"A", "1"}}};
  EXPECT_EQ(
      mcp_server_json(e).dump(),
      R"({"type":"stdio","command":"/opt/ctxkit/bin/ctxkit-mcp","args":["--stdio"],"env":{"A":"1"}})");
  EXPECT_EQ(mcp_server_json(ours()).dump(),
            R"({"type":"stdio","command":"/opt/ctx/bin/ctx-workflow-mcp","args":[],"env":{}})");
}

TEST(McpConfig, MergeAddsOursAfterTheOtherServersAndKeepsEverythingElse) {
  ojson doc = ojson::parse(kClaudeJson);
  McpConfigReport r;
  ASSERT_EQ(merge_mcp_server(doc, ours(), false, r), "");
  EXPECT_TRUE(r.changed);
  EXPECT_FALSE(r.created_container);
  ASSERT_EQ(doc["mcpServers"].size(), 2u);
  EXPECT_EQ(std::next(doc["mcpServers"].begin()).key(), "ctxkit-workflow");
  EXPECT_EQ(doc["mcpServers"]["ctxkit-workflow"]["command"], "/opt/ctx/bin/ctx-workflow-mcp");
  EXPECT_EQ(r.lines, std::vector<std::string>{
                         "registered: MCP server ctxkit-workflow (/opt/ctx/bin/ctx-workflow-mcp)"});
  ojson without = doc;
  without["mcpServers"].erase("ctxkit-workflow");
  EXPECT_EQ(without.dump(2), kClaudeJson) << "every other byte as the client wrote it";
}

TEST(McpConfig, MergeThenRemoveGivesTheOriginalBytes) {
  ojson doc = ojson::parse(kClaudeJson);
  McpConfigReport r1, r2;
  merge_mcp_server(doc, ours(), false, r1);
  ASSERT_EQ(remove_mcp_server(doc, ours(), false, r2), "");
  EXPECT_TRUE(r2.changed);
  EXPECT_EQ(r2.lines, std::vector<std::string>{"removed: MCP server ctxkit-workflow"});
  EXPECT_EQ(doc.dump(2), kClaudeJson);
}

TEST(McpConfig, MergeIsIdempotent) {
  ojson doc = ojson::object();
  McpConfigReport r1, r2;
  merge_mcp_server(doc, ours(), false, r1);
  EXPECT_TRUE(r1.created_container);
  ojson once = doc;
  merge_mcp_server(doc, ours(), false, r2);
  EXPECT_FALSE(r2.changed);
  EXPECT_FALSE(r2.created_container);
  EXPECT_EQ(doc, once);
  EXPECT_EQ(r2.lines, std::vector<std::string>{"already registered: MCP server ctxkit-workflow"});
}

TEST(McpConfig, AnEmptyOrMissingFileGetsTheContainer) {
  ojson doc;  // null: the file did not exist
  McpConfigReport r;
  merge_mcp_server(doc, ours(), false, r);
  EXPECT_EQ(
      doc.dump(),
      R"({"mcpServers":{"ctxkit-workflow":{"type":"stdio","command":"/opt/ctx/bin/ctx-workflow-mcp","args":[],"env":{}}}})");
  EXPECT_TRUE(r.created_container);
  McpConfigReport r2;
  remove_mcp_server(doc, ours(), true, r2);
  EXPECT_EQ(doc.dump(), "{}");
}

TEST(McpConfig, AUserCustomisedEntryOfOursIsKeptOnMergeAndRemovedOnUninstall) {
  ojson doc = ojson::parse(
      R"({"mcpServers":{"ctxkit-workflow":{"type":"stdio","command":"/opt/ctx/bin/ctx-workflow-mcp","args":["--workflow","feature"],"env":{"X":"1"}}}})");
  ojson before = doc;
  McpConfigReport r;
  merge_mcp_server(doc, ours(), false, r);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(doc, before);
  EXPECT_EQ(r.lines, std::vector<std::string>{"kept your MCP server ctxkit-workflow: it runs "
                                              "/opt/ctx/bin/ctx-workflow-mcp with your arguments"});
  McpConfigReport r2;
  remove_mcp_server(doc, ours(), false, r2);
  EXPECT_TRUE(r2.changed);
  EXPECT_EQ(doc.dump(), R"({"mcpServers":{}})") << "the container the install did not create stays";
}

TEST(McpConfig, AnotherCommandUnderOurNameIsKeptUnlessReplaced) {
  const char* text = R"({"mcpServers":{"ctxkit-workflow":{"command":"/home/u/dev/my-server"}}})";
  ojson doc = ojson::parse(text);
  McpConfigReport r;
  merge_mcp_server(doc, ours(), false, r);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(doc.dump(), text);
  EXPECT_EQ(r.lines[0],
            "kept your MCP server ctxkit-workflow: it runs /home/u/dev/my-server, not "
            "/opt/ctx/bin/ctx-workflow-mcp (run again with --replace to take the name over)");
  // Uninstall leaves it too, even with any_folder (it does not run ctxkit's program).
  McpConfigReport r2;
  remove_mcp_server(doc, ours(), true, r2, /*any_folder=*/true);
  EXPECT_FALSE(r2.changed);
  EXPECT_EQ(doc.dump(), text);
  // --replace takes it over, and keeps it for the removal to put back.
  McpConfigReport r3;
  merge_mcp_server(doc, ours(), true, r3);
  EXPECT_TRUE(r3.changed);
  EXPECT_EQ(doc["mcpServers"]["ctxkit-workflow"], mcp_server_json(ours()));
  EXPECT_EQ(r3.lines[0], "replaced: MCP server ctxkit-workflow (was /home/u/dev/my-server)");
  EXPECT_EQ(r3.replaced_original.dump(), R"({"command":"/home/u/dev/my-server"})");
  McpConfigReport r4;
  remove_mcp_server(doc, ours(), true, r4, false, r3.replaced_original);
  EXPECT_EQ(doc.dump(), text);
  EXPECT_EQ(r4.lines[0], "restored: your MCP server ctxkit-workflow (/home/u/dev/my-server)");
}

// Another install of ctxkit's (another prefix, the package) registered the server: this one takes
// it over without --replace, keeping the arguments and environment the entry has.
TEST(McpConfig, OursFromAnotherFolderIsTakenOverWithoutReplace) {
  ojson doc = ojson::parse(
      R"({"mcpServers":{"ctxkit-workflow":{"type":"stdio","command":"/usr/bin/ctx-workflow-mcp","args":["--x"],"env":{"A":"1"}}}})");
  McpConfigReport r;
  ASSERT_EQ(merge_mcp_server(doc, ours(), false, r), "");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(
      doc.dump(),
      R"({"mcpServers":{"ctxkit-workflow":{"type":"stdio","command":"/opt/ctx/bin/ctx-workflow-mcp","args":["--x"],"env":{"A":"1"}}}})");
  EXPECT_EQ(r.lines, std::vector<std::string>{"replaced: MCP server ctxkit-workflow "
                                              "/usr/bin/ctx-workflow-mcp (now "
                                              "/opt/ctx/bin/ctx-workflow-mcp)"});
  EXPECT_EQ(r.replaced_command, "/usr/bin/ctx-workflow-mcp");
  EXPECT_TRUE(r.replaced_original.is_null());
  // Twice: nothing more.
  McpConfigReport again;
  ojson once = doc;
  merge_mcp_server(doc, ours(), false, again);
  EXPECT_FALSE(again.changed);
  EXPECT_EQ(doc, once);
}

TEST(McpConfig, RemovalOfAnyFolderTakesCtxkitsServerOnly) {
  const char* text =
      R"({"mcpServers":{"ctxkit-workflow":{"command":"/elsewhere/bin/ctx-workflow-mcp"},"x":{"command":"y"}}})";
  ojson doc = ojson::parse(text);
  McpConfigReport r;
  remove_mcp_server(doc, ours(), true, r);
  EXPECT_FALSE(r.changed) << "another install's server is not this install's to remove";
  EXPECT_EQ(r.lines[0],
            "kept MCP server ctxkit-workflow: it runs /elsewhere/bin/ctx-workflow-mcp, not "
            "/opt/ctx/bin/ctx-workflow-mcp");
  McpConfigReport all;
  remove_mcp_server(doc, ours(), true, all, /*any_folder=*/true);
  EXPECT_TRUE(all.changed);
  EXPECT_EQ(doc.dump(), R"({"mcpServers":{"x":{"command":"y"}}})");
  EXPECT_EQ(all.replaced_command, "/elsewhere/bin/ctx-workflow-mcp");
}

TEST(McpConfig, UnexpectedShapesAreErrorsWithNothingChanged) {
  ojson arr = ojson::array();
  McpConfigReport r;
  EXPECT_EQ(merge_mcp_server(arr, ours(), false, r), "the file is not a JSON object");
  EXPECT_EQ(arr, ojson::array());
  ojson bad = ojson::parse(R"({"mcpServers":[1]})");
  EXPECT_EQ(merge_mcp_server(bad, ours(), false, r), "\"mcpServers\" is not an object");
  EXPECT_EQ(bad.dump(), R"({"mcpServers":[1]})");
  EXPECT_EQ(remove_mcp_server(arr, ours(), false, r), "the file is not a JSON object");
  EXPECT_EQ(remove_mcp_server(bad, ours(), false, r), "");
  EXPECT_FALSE(r.changed);
}

}  // namespace
}  // namespace ctxkit::claude
