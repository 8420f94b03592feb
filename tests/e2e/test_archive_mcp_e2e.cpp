// ctx-archive-mcp driven over stdio by a test client, as Claude Code drives it: a session that
// ended (or only finished a turn) is found by archive_search, cited SESSION:LINE, and opened by
// archive_show; a subagent's tool result is found as its session's; an excluded project is not.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "e2e/e2e_support.hpp"
#include "e2e/mcp_client.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

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

// Archives and indexes the session as the SessionEnd hook does (in this process).
void end_session(const RecordedSession& s, const util::Env& env) {
  json payload{{"session_id", kSid},
               {"transcript_path", s.transcript.string()},
               {"cwd", "/home/me/proj"},
               {"hook_event_name", "SessionEnd"},
               {"reason", "exit"}};
  auto r = run_tool("ctx-session-hook", {"SessionEnd", "--foreground"}, payload.dump(), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

size_t lines_of(const fs::path& p) {
  std::ifstream in(p);
  size_t n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  return n;
}

struct Server {
  TempDir logs;
  McpClient client;
  explicit Server(const util::Env& env)
      : client({bin_dir() + "/ctx-archive-mcp"}, env, logs / "stderr") {
    client.initialize();
  }
};

// pin_fact, list_pins and unpin for the session the server was started in; a pin of 1 MB is a
// tool error of one line and nothing is stored.
TEST(ArchiveMcp, PinsAFactListsItAndUnpinsIt) {
  RecordedSession s;
  util::Env env = s.env;
  env.set("CLAUDE_CODE_SESSION_ID", "S-mcp");
  Server server(env);
  auto call = [&](const char* name, json args) {
    return server.client.request("tools/call", {{"name", name}, {"arguments", args}})["result"];
  };
  json big = call("pin_fact", {{"text", std::string(1 << 20, 'x')}});
  EXPECT_EQ(big["isError"], true);
  EXPECT_EQ(big["content"][0]["text"], "a pin is at most 500 characters (this one has 1048576)");
  json pinned = call("pin_fact", {{"text", "the API listens on port 8123"}});
  ASSERT_NE(pinned.value("isError", false), true) << pinned.dump();
  json answer = json::parse(pinned["content"][0]["text"].get<std::string>());
  EXPECT_EQ(answer["scope"], "line");
  EXPECT_EQ(answer["pins"], 1);
  json listed =
      json::parse(call("list_pins", json::object())["content"][0]["text"].get<std::string>());
  ASSERT_EQ(listed["pins"].size(), 1u);
  EXPECT_EQ(listed["pins"][0]["text"], "the API listens on port 8123");
  json removed = call("unpin", {{"id", answer["id"]}});
  EXPECT_NE(removed.value("isError", false), true) << removed.dump();
  EXPECT_EQ(call("unpin", {{"id", answer["id"]}})["isError"], true);
}

TEST(ArchiveMcp, ListsTheSearchToolsThatSayWhenToSearchAndThePinTools) {
  RecordedSession s;
  Server server(s.env);
  json list = server.client.request("tools/list")["result"]["tools"];
  ASSERT_EQ(list.size(), 5u);
  EXPECT_EQ(list[0]["name"], "archive_search");
  EXPECT_EQ(list[1]["name"], "archive_show");
  EXPECT_EQ(list[2]["name"], "pin_fact");
  EXPECT_EQ(list[3]["name"], "list_pins");
  EXPECT_EQ(list[4]["name"], "unpin");
  const std::string d = list[0]["description"];
  for (const char* when :
       {"compacted", "rolled", "trimmed", "earlier work", "SESSION:LINE", "no operators"})
    EXPECT_NE(d.find(when), std::string::npos) << when;
  EXPECT_EQ(list[0]["inputSchema"]["required"], json::array({"query"}));
}

TEST(ArchiveMcp, AUniqueStringInAToolResultIsFoundAtItsLineAndShownInFull) {
  RecordedSession s;
  std::ofstream(s.transcript, std::ios::app)
      << tool_result_line("deploy log: token ZEBRA_QUARTZ_5521 rejected by the gateway");
  const size_t line = lines_of(s.transcript);
  end_session(s, s.env);
  Server server(s.env);
  json r = server.client.call("archive_search", {{"query", "ZEBRA_QUARTZ_5521"}});
  ASSERT_FALSE(r.is_null());
  EXPECT_FALSE(r.value("isError", false)) << r.dump();
  json a = McpClient::text_json(r);
  ASSERT_EQ(a["hits"].size(), 1u) << a.dump();
  const json& h = a["hits"][0];
  EXPECT_EQ(h["cite"], kSid + ":" + std::to_string(line));
  EXPECT_EQ(h["session_id"], kSid);
  EXPECT_EQ(h["line"], line);
  EXPECT_EQ(h["kind"], "tool_result");
  EXPECT_EQ(h["project"], "-proj");
  EXPECT_EQ(h["snippet"], "deploy log: token [ZEBRA_QUARTZ_5521] rejected by the gateway");
  EXPECT_NE(h["resume"].get<std::string>().find("claude --resume " + kSid), std::string::npos)
      << h["resume"];
  EXPECT_FALSE(h.contains("agent"));

  // The query is the user's words: FTS5 syntax is matched literally, not run.
  json literal = McpClient::text_json(
      server.client.call("archive_search", {{"query", "ZEBRA_QUARTZ_5521 OR NEAR(x"}}));
  EXPECT_EQ(literal["hits"].size(), 0u) << literal.dump();

  json shown = McpClient::text_json(server.client.call("archive_show", {{"session", h["cite"]}}));
  ASSERT_EQ(shown["messages"].size(), 1u) << shown.dump();
  EXPECT_EQ(shown["messages"][0]["text"],
            "deploy log: token ZEBRA_QUARTZ_5521 rejected by the gateway");
  EXPECT_EQ(shown["messages"][0]["cite"], h["cite"]);
  json around = McpClient::text_json(
      server.client.call("archive_show", {{"session", kSid}, {"line", line}, {"before", 3}}));
  EXPECT_GT(around["messages"].size(), 1u) << around.dump();
  EXPECT_EQ(around["messages"].back()["line"], line);
}

TEST(ArchiveMcp, ASubagentsToolResultIsFoundAsItsSessionsAndNamesTheAgent) {
  RecordedSession s;
  fs::path agent = s.dir / kSid / "subagents/agent-a12aac722b824f25d.jsonl";
  std::ofstream(agent, std::ios::app)
      << tool_result_line("subagent saw OKAPI_MARBLE_8840 in the cache");
  const size_t line = lines_of(agent);
  end_session(s, s.env);
  Server server(s.env);
  json a = McpClient::text_json(
      server.client.call("archive_search", {{"query", "OKAPI_MARBLE_8840"}, {"session", kSid}}));
  ASSERT_EQ(a["hits"].size(), 1u) << a.dump();
  EXPECT_EQ(a["hits"][0]["cite"], kSid + "/agent-a12aac722b824f25d:" + std::to_string(line));
  EXPECT_EQ(a["hits"][0]["agent"], "agent-a12aac722b824f25d");
  EXPECT_EQ(a["hits"][0]["session_id"], kSid);
  json shown =
      McpClient::text_json(server.client.call("archive_show", {{"session", a["hits"][0]["cite"]}}));
  ASSERT_EQ(shown["messages"].size(), 1u) << shown.dump();
  EXPECT_EQ(shown["agent"], "agent-a12aac722b824f25d");
  EXPECT_EQ(shown["messages"][0]["text"], "subagent saw OKAPI_MARBLE_8840 in the cache");
}

TEST(ArchiveMcp, BadArgumentsAreToolErrorsAndTheServerGoesOn) {
  RecordedSession s;
  end_session(s, s.env);
  Server server(s.env);
  auto error_text = [&](const std::string& tool, const json& args) {
    json r = server.client.call(tool, args);
    EXPECT_TRUE(r.value("isError", false)) << r.dump();
    return r["content"][0]["text"].get<std::string>();
  };
  EXPECT_EQ(error_text("archive_search", {{"query", "  "}}),
            "query is empty: give the words to find");
  EXPECT_EQ(error_text("archive_search", {{"query", 5}}), "query must be a string");
  EXPECT_EQ(error_text("archive_search", {{"query", "x"}, {"limit", 0}}),
            "limit must be from 1 to 50");
  EXPECT_EQ(error_text("archive_search", {{"query", "x"}, {"since", "yesterday"}}),
            "since 'yesterday' is not a date or time (YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM])");
  EXPECT_EQ(error_text("archive_show", {{"session", kSid}}),
            "line is required (the LINE of SESSION:LINE)");
  EXPECT_EQ(
      error_text("archive_show", {{"session", "../../etc/passwd:1"}}),
      "'../../etc/passwd' is not a session id (SESSION or SESSION/agent-ID, as a hit cites it)");
  EXPECT_EQ(error_text("archive_show", {{"session", kSid + ":999999"}}),
            "session " + kSid + " has no line 999999");
  json ok =
      McpClient::text_json(server.client.call("archive_search", {{"query", "output line 500 of"}}));
  EXPECT_FALSE(ok["hits"].empty());
}

TEST(ArchiveMcp, AnExcludedProjectIsNeverAnsweredFrom) {
  RecordedSession s;
  std::ofstream(s.transcript, std::ios::app) << tool_result_line("secret AARDVARK_LIME_1234");
  end_session(s, s.env);  // indexed before the exclusion
  util::Env env = s.env;
  env.set("CTXKIT_ARCHIVE_EXCLUDE_PROJECTS", "proj");  // the plain folder name of /…/proj
  Server server(env);
  json a =
      McpClient::text_json(server.client.call("archive_search", {{"query", "AARDVARK_LIME_1234"}}));
  EXPECT_EQ(a["hits"].size(), 0u) << a.dump();
  json r = server.client.call("archive_show", {{"session", kSid + ":1"}});
  EXPECT_TRUE(r.value("isError", false)) << r.dump();
  Server open(s.env);
  EXPECT_EQ(McpClient::text_json(
                open.client.call("archive_search", {{"query", "AARDVARK_LIME_1234"}}))["hits"]
                .size(),
            1u);
}

// The model knows session ids: a session that carries the marker is refused by archive_show (and
// by ctx-search --show) as it is left out of the search, the marker's line and what follows it
// included.
TEST(ArchiveMcp, ASessionThatCarriesTheMarkerIsNeitherFoundNorShown) {
  RecordedSession s;
  std::ofstream(s.transcript, std::ios::app)
      << tool_result_line("private from here on: ctxkit:no-index")
      << tool_result_line("the secret is BADGER_ONYX_3141");
  const size_t line = lines_of(s.transcript);
  end_session(s, s.env);
  Server server(s.env);
  json a =
      McpClient::text_json(server.client.call("archive_search", {{"query", "BADGER_ONYX_3141"}}));
  EXPECT_EQ(a["hits"].size(), 0u) << a.dump();
  for (size_t l : {size_t{1}, line - 1, line}) {
    json r = server.client.call("archive_show", {{"session", kSid}, {"line", l}});
    ASSERT_TRUE(r.is_object());
    EXPECT_TRUE(r.value("isError", false)) << r.dump();
    EXPECT_EQ(r["content"][0]["text"], "session " + kSid + " is not in the searchable archive");
  }
  auto cli = run_tool("ctx-search", {"--show", kSid + ":" + std::to_string(line)}, "", s.env);
  EXPECT_EQ(cli.exit_code, 1);
  EXPECT_EQ(cli.out, "");
  EXPECT_EQ(cli.err, "ctx-search: error: session " + kSid + " is not in the searchable archive\n");
}

}  // namespace
}  // namespace ctxkit::test
