// The live session searchable: the Stop and PreCompact hooks archive the new lines of the
// transcript (appended to the archived copy) and index them; after a compaction the SessionStart
// hook tells the model how to search what it lost; exclusions hold for live indexing too.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "archive/indexer.hpp"
#include "core/locations.hpp"
#include "e2e/e2e_support.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kSid = RecordedSession::kId;

std::string tool_result_line(const std::string& text) {
  return json{{"type", "user"},
              {"sessionId", kSid},
              {"uuid", "u-live"},
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

util::ProcessResult hook(const RecordedSession& s, const std::string& event, const util::Env& env,
                         const std::string& source = "") {
  json payload{{"session_id", kSid},
               {"transcript_path", s.transcript.string()},
               {"cwd", (s.tmp / "proj").string()},
               {"hook_event_name", event}};
  if (!source.empty()) payload["source"] = source;
  if (event == "PreCompact") payload["trigger"] = "manual";
  return run_tool("ctx-session-hook", {event, "--foreground"}, payload.dump(), env);
}

json search(const util::Env& env, const std::string& words) {
  auto r = run_tool("ctx-search", {words, "--json"}, "", env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json::array();
}

size_t lines_of(const fs::path& p) {
  std::ifstream in(p);
  size_t n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  return n;
}

ino_t inode(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
}

TEST(LiveIndex, EachTurnsLinesAreAppendedToTheArchivedCopyAndFoundAtTheirLine) {
  RecordedSession s;
  auto r = hook(s, "Stop", s.env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const fs::path archived = s.state() / "archive/-proj" / (kSid + ".jsonl");
  ASSERT_EQ(read_file(archived), read_file(s.transcript));
  EXPECT_EQ(fs::status(archived).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  const ino_t first = inode(archived);

  std::ofstream(s.transcript, std::ios::app)
      << tool_result_line("turn two printed GIRAFFE_TOPAZ_3310");
  const size_t line = lines_of(s.transcript);
  std::ofstream(s.transcript, std::ios::app)
      << "{\"type\":\"user\",\"partial";  // a line still being written
  r = hook(s, "PreCompact", s.env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json hits = search(s.env, "GIRAFFE_TOPAZ_3310");
  ASSERT_EQ(hits.size(), 1u) << hits.dump();
  EXPECT_EQ(hits[0]["session_id"], kSid);
  EXPECT_EQ(hits[0]["line"], line);
  EXPECT_EQ(inode(archived), first);    // appended to, not copied again
  EXPECT_EQ(lines_of(archived), line);  // complete lines only
  EXPECT_EQ(read_file(archived), read_file(s.transcript).substr(0, fs::file_size(archived)));
}

// The words ctx-cap kept out of the window are found: the preview the client put in the
// transcript is indexed with the whole output ctx-cap archived under the handle it names.
TEST(LiveIndex, ACappedOutputIsFoundByTheWordsItsPreviewLeftOut) {
  RecordedSession s;
  std::string log;
  for (int i = 0; i < 2000; ++i)
    log += "PASSED tests/test_m.py::test_case_" + std::to_string(i) + "\n";
  log += "FAILED tests/test_m.py::test_wombat_ledger - assert 3 == 4\n";
  for (int i = 0; i < 2000; ++i)
    log += "PASSED tests/test_n.py::test_case_" + std::to_string(i) + "\n";
  json payload{{"session_id", kSid},
               {"transcript_path", s.transcript.string()},
               {"cwd", (s.tmp / "proj").string()},
               {"hook_event_name", "PostToolUse"},
               {"tool_name", "Bash"},
               {"tool_use_id", "toolu_01WombatLog"},
               {"tool_input", {{"command", "pytest"}}},
               {"tool_response",
                {{"stdout", log}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}}}};
  auto capped = run_tool("ctx-cap", {}, payload.dump(), s.env);
  ASSERT_EQ(capped.exit_code, 0) << capped.err;
  const json out = json::parse(capped.out);
  const std::string preview =
      out["hookSpecificOutput"]["updatedToolOutput"]["stdout"].get<std::string>();
  ASSERT_EQ(preview.find("test_wombat_ledger"), std::string::npos)
      << "the failure was in the middle";
  std::ofstream(s.transcript, std::ios::app) << tool_result_line(preview);
  auto r = hook(s, "Stop", s.env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json hits = search(s.env, "test_wombat_ledger");
  ASSERT_EQ(hits.size(), 1u) << hits.dump();
  EXPECT_EQ(hits[0]["line"], lines_of(s.transcript));
  EXPECT_NE(hits[0].dump().find("test_wombat_ledger"), std::string::npos) << hits.dump();
}

// Without --foreground, as the client runs it: the hook returns at once and the archiver it
// started detached (this program again) archives and indexes the turn.
TEST(LiveIndex, TheDetachedArchiverTheStopHookStartsArchivesAndIndexesTheTurn) {
  RecordedSession s;
  std::ofstream(s.transcript, std::ios::app)
      << tool_result_line("a detached turn printed MARMOT_CEDAR_4471");
  json payload{{"session_id", kSid},
               {"transcript_path", s.transcript.string()},
               {"cwd", (s.tmp / "proj").string()},
               {"hook_event_name", "Stop"}};
  auto r = run_tool("ctx-session-hook", {"Stop"}, payload.dump(), s.env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const fs::path archived = s.state() / "archive/-proj" / (kSid + ".jsonl");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline &&
         !(fs::exists(archived) && fs::file_size(archived) == fs::file_size(s.transcript)))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fs::exists(archived));
  EXPECT_EQ(read_file(archived), read_file(s.transcript));
  // Indexed by the same archiver, after the copy: found once it has committed.
  json hits = search(s.env, "MARMOT_CEDAR_4471");
  while (hits.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    hits = search(s.env, "MARMOT_CEDAR_4471");
  }
  ASSERT_EQ(hits.size(), 1u) << hits.dump();
  EXPECT_EQ(hits[0]["line"], lines_of(s.transcript));
}

TEST(LiveIndex, ATranscriptThatWasReplacedIsCopiedWhole) {
  RecordedSession s;
  ASSERT_EQ(hook(s, "Stop", s.env).exit_code, 0);
  const fs::path archived = s.state() / "archive/-proj" / (kSid + ".jsonl");
  // The same session written anew: longer, but the archived copy is no longer its prefix.
  std::string text = read_file(s.transcript);
  text.replace(text.size() - 200, 100, std::string(100, ' '));
  std::ofstream(s.transcript, std::ios::trunc)
      << text << tool_result_line("rewritten with KOALA_FLINT_0042");
  ASSERT_EQ(hook(s, "Stop", s.env).exit_code, 0);
  EXPECT_EQ(read_file(archived), read_file(s.transcript));
  EXPECT_EQ(search(s.env, "KOALA_FLINT_0042").size(), 1u);
}

TEST(LiveIndex, ASubagentsTranscriptIsArchivedAndFoundAsItsSessions) {
  RecordedSession s;
  fs::path agent = s.dir / kSid / "subagents/agent-a12aac722b824f25d.jsonl";
  std::ofstream(agent, std::ios::app) << tool_result_line("the subagent read IBEX_COBALT_7001");
  ASSERT_EQ(hook(s, "Stop", s.env).exit_code, 0);
  json hits = search(s.env, "IBEX_COBALT_7001");
  ASSERT_EQ(hits.size(), 1u) << hits.dump();
  EXPECT_EQ(hits[0]["session_id"], kSid);
  EXPECT_EQ(hits[0]["agent"], "agent-a12aac722b824f25d");
  EXPECT_EQ(hits[0]["line"], lines_of(agent));
  auto shown = run_tool(
      "ctx-search",
      {"--show", kSid + "/agent-a12aac722b824f25d:" + std::to_string(lines_of(agent))}, "", s.env);
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("the subagent read IBEX_COBALT_7001"), std::string::npos) << shown.out;
}

TEST(LiveIndex, AnExcludedProjectIsArchivedButNeverIndexed) {
  RecordedSession s;
  std::ofstream(s.transcript, std::ios::app) << tool_result_line("private LEMUR_JADE_5150");
  util::Env excluded = s.env;
  excluded.set("CTXKIT_ARCHIVE_EXCLUDE_PROJECTS", "proj");  // the folder name the user knows
  ASSERT_EQ(hook(s, "Stop", excluded).exit_code, 0);
  EXPECT_TRUE(fs::exists(s.state() / "archive/-proj" / (kSid + ".jsonl")));
  EXPECT_EQ(search(excluded, "LEMUR_JADE_5150").size(), 0u);
  // Not only left out of the answers: nothing of it is in the index.
  auto index = archive::open_index_read_only(core::Locations::resolve(s.env));
  ASSERT_TRUE(index) << index.error().message;
  for (int i = 0; i < index->size(); ++i)
    EXPECT_EQ(index->shard(i).token_documents("lemur").value_or(-1), 0) << i;
}

TEST(LiveIndex, AfterACompactionTheModelIsToldHowToSearchWhatItLost) {
  RecordedSession s;
  // Without the archive's server registered: the command line.
  auto r = hook(s, "SessionStart", s.env, "compact");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = json::parse(r.out);
  std::string text = out["hookSpecificOutput"]["additionalContext"];
  EXPECT_EQ(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
  EXPECT_NE(text.find("ctx-search \"words you remember\" --session " + kSid), std::string::npos)
      << text;
  EXPECT_EQ(text.find('\n'), std::string::npos);
  // Registered in ~/.claude.json: the tool.
  s.tmp.write(
      "home/.claude.json",
      R"({"mcpServers":{"ctxkit-archive":{"type":"stdio","command":"/x/ctx-archive-mcp"}}})");
  r = hook(s, "SessionStart", s.env, "compact");
  text = json::parse(r.out)["hookSpecificOutput"]["additionalContext"];
  EXPECT_NE(
      text.find("call mcp__ctxkit-archive__archive_search with the words you remember (session \"" +
                kSid + "\""),
      std::string::npos)
      << text;
  // Shipped by the plugin that runs the hook: the plugin's name for it.
  util::Env plugin = s.env;
  s.tmp.write(
      "plugin/.mcp.json",
      R"({"mcpServers":{"ctxkit-archive":{"command":"${CLAUDE_PLUGIN_ROOT}/bin/ctx-archive-mcp"}}})");
  plugin.set("CLAUDE_PLUGIN_ROOT", (s.tmp / "plugin").string());
  r = hook(s, "SessionStart", plugin, "compact");
  text = json::parse(r.out)["hookSpecificOutput"]["additionalContext"];
  EXPECT_NE(text.find("call mcp__plugin_ctxkit_ctxkit-archive__archive_search "), std::string::npos)
      << text;
  // Any other start says nothing.
  for (const char* source : {"startup", "resume", "clear"}) {
    r = hook(s, "SessionStart", s.env, source);
    EXPECT_EQ(r.out, "") << source;
  }
}

}  // namespace
}  // namespace ctxkit::test
