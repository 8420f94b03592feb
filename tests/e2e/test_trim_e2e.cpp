#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "e2e/e2e_support.hpp"
#include "store/state_store.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

const std::string kSid = "e276539b-fd98-4786-afff-185c4144940f";

using Session = RecordedSession;

std::string new_id_from(const std::string& out) {
  auto pos = out.find("claude --resume ");
  if (pos == std::string::npos) return "";
  return out.substr(pos + 16, 36);
}

TEST(Trim, WritesATrimmedCopyThatKeepsTheChainAndEveryOtherByte) {
  Session s;
  auto r = run_tool("ctx-trim", {kSid}, "", s.env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::string id = new_id_from(r.out);
  ASSERT_EQ(id.size(), 36u) << r.out;
  EXPECT_NE(r.out.find(
                "cd /var/tmp/cc-harness/exp/claude-sonnet-4-5/basic/proj && claude --resume " + id),
            std::string::npos)
      << r.out;
  EXPECT_EQ(read_file(s.transcript), s.original);  // the original is untouched

  fs::path copy = s.dir / (id + ".jsonl");
  auto before = file_lines(s.transcript);
  auto after = file_lines(copy);
  ASSERT_EQ(after.size(), before.size());
  int trimmed = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    json a = json::parse(before[i]), b = json::parse(after[i]);
    EXPECT_EQ(a.value("uuid", json()), b.value("uuid", json())) << i;
    EXPECT_EQ(a.value("parentUuid", json()), b.value("parentUuid", json())) << i;
    if (a.contains("sessionId")) {
      EXPECT_EQ(b["sessionId"], id);
    }
    if (b.contains("message") && b["message"].is_object() && b["message"].contains("usage")) {
      EXPECT_EQ(b["message"]["usage"]["cache_read_input_tokens"], 0);
    }
    bool has_result = before[i].find("\"tool_result\"") != std::string::npos;
    if (i == 0) {
      ASSERT_TRUE(b.contains("trim_metadata"));
      EXPECT_EQ(b["trim_metadata"]["parent_file"], s.transcript.string());
      EXPECT_EQ(b["trim_metadata"]["parent_session_id"], kSid);
      EXPECT_GT(b["trim_metadata"]["stats"]["tokens_saved"].get<int>(), 300);
      b.erase("trim_metadata");
      EXPECT_EQ(b.dump(), [&] {
        json c = a;
        c["sessionId"] = id;
        return c.dump();
      }());
    } else if (has_result &&
               b["message"]["content"][0]["content"] != a["message"]["content"][0]["content"]) {
      ++trimmed;
      std::string c = b["message"]["content"][0]["content"];
      EXPECT_NE(c.find("[...truncated - original content was "), std::string::npos);
      EXPECT_NE(c.find("See line " + std::to_string(i + 1) + " of "), std::string::npos)
          << c.substr(480);
      EXPECT_EQ(b["toolUseResult"], a["toolUseResult"]);
    } else {
      // Untouched lines: the same bytes but the sessionId value (and zeroed usage numbers).
      std::string expect = before[i];
      auto pos = expect.find("\"sessionId\":\"" + kSid + "\"");
      if (pos != std::string::npos) expect.replace(pos + 13, kSid.size(), id);
      if (expect.find("\"usage\"") == std::string::npos) {
        EXPECT_EQ(after[i], expect) << i;
      }
    }
  }
  EXPECT_GE(trimmed, 4);

  // The archive holds the original byte for byte, private; the side folder went along.
  fs::path archived = s.state() / "archive/-proj" / (kSid + ".jsonl");
  EXPECT_EQ(read_file(archived), s.original);
  struct stat st {};
  ASSERT_EQ(::stat(archived.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(fs::exists(s.dir / id / "subagents/agent-a12aac722b824f25d.jsonl"));
  EXPECT_TRUE(
      fs::exists(s.state() / "archive/-proj" / kSid / "subagents/agent-a12aac722b824f25d.jsonl"));
  ASSERT_EQ(::stat(copy.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // Lineage recorded.
  auto store = store::StateStore::open(s.state() / "state.db", 1000);
  ASSERT_TRUE(store);
  auto child = store->session(id);
  ASSERT_TRUE(child && *child);
  EXPECT_EQ((*child)->parent_id, kSid);
  EXPECT_EQ((*child)->number, 2);
  auto parent = store->session(kSid);
  ASSERT_TRUE(parent && *parent);
  EXPECT_EQ((*parent)->end_reason, "trim");
  EXPECT_GT(*(*parent)->tokens_saved, 300);
  EXPECT_TRUE((*parent)->context_at_end.has_value());

  // Trimming the trimmed copy again saves nothing and writes nothing.
  auto again = run_tool("ctx-trim", {copy.string()}, "", s.env);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("Nothing worth trimming"), std::string::npos) << again.out;
}

TEST(Trim, DryRunWritesNothingAndReportsPerTool) {
  Session s;
  auto r = run_tool("ctx-trim", {kSid, "--dry-run", "--json"}, "", s.env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_FALSE(j["written"].get<bool>());
  EXPECT_GE(j["per_tool"]["Bash"]["trimmed"].get<int>(), 4);
  EXPECT_GT(j["per_tool"]["Bash"]["tokens_saved"].get<int>(), 1000);
  EXPECT_EQ(j["per_tool"]["Read"]["trimmed"], 1);
  EXPECT_FALSE(j["per_tool"]["Write"]["target"].get<bool>());
  EXPECT_EQ(j["per_tool"]["Write"]["trimmed"], 0);  // enlarged too, but not a target tool
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(s.dir)) ++files;
  EXPECT_EQ(files, 2u);  // the transcript and its side folder
  EXPECT_FALSE(fs::exists(s.state() / "archive"));
  auto text = run_tool("ctx-trim", {kSid, "--dry-run"}, "", s.env);
  EXPECT_NE(text.out.find("Bash"), std::string::npos);
  EXPECT_NE(text.out.find("would trim"), std::string::npos);
}

TEST(Trim, CurrentSessionFromTheEnvironmentAndJsonOutput) {
  Session s;
  s.env.set("CLAUDE_CODE_SESSION_ID", kSid);
  auto r =
      run_tool("ctx-trim", {"--json", "--threshold", "200", "--tools", "Bash,Read"}, "", s.env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_TRUE(j["written"].get<bool>());
  EXPECT_EQ(j["threshold"], 200);
  EXPECT_EQ(j["tools"], json({"Bash", "Read"}));
  EXPECT_TRUE(fs::exists(j["transcript"].get<std::string>()));
  EXPECT_EQ(j["resume_command"].get<std::string>().find("cd "), 0u);
}

TEST(Trim, BelowThreeHundredTokensNothingIsWritten) {
  Session s(0);  // the recorded outputs are small
  auto r = run_tool("ctx-trim", {kSid}, "", s.env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Nothing worth trimming"), std::string::npos) << r.out;
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(s.dir)) ++files;
  EXPECT_EQ(files, 2u);
}

// The tool_use ids of the last `n` main-chain assistant responses (lines of one message id in a
// row are one response; a response without tool calls counts too).
std::set<std::string> tool_uses_of_last_responses(const std::vector<std::string>& lines, size_t n) {
  std::vector<std::vector<std::string>> responses;
  std::string last_id;
  for (const auto& line : lines) {
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || j.value("type", "") != "assistant" || j.value("isSidechain", false))
      continue;
    const std::string id = j["message"].value("id", "");
    if (responses.empty() || id.empty() || id != last_id) responses.emplace_back();
    last_id = id;
    for (const auto& b : j["message"].value("content", json::array()))
      if (b.is_object() && b.value("type", "") == "tool_use")
        responses.back().push_back(b.value("id", ""));
  }
  std::set<std::string> out;
  for (size_t i = responses.size() > n ? responses.size() - n : 0; i < responses.size(); ++i)
    out.insert(responses[i].begin(), responses[i].end());
  return out;
}

// The indexes of the lines holding a tool_result for one of `ids`.
std::vector<size_t> result_lines(const std::vector<std::string>& lines,
                                 const std::set<std::string>& ids) {
  std::vector<size_t> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const json j = json::parse(lines[i], nullptr, false);
    if (j.is_discarded() || j.value("type", "") != "user" || !j.contains("message") ||
        !j["message"].value("content", json()).is_array())
      continue;
    for (const auto& b : j["message"]["content"])
      if (b.is_object() && b.value("type", "") == "tool_result" &&
          ids.count(b.value("tool_use_id", ""))) {
        out.push_back(i);
        break;
      }
  }
  return out;
}

// --keep-recent 3: the results of the last three responses' tool calls are copied whole, where
// without it they are trimmed; every other result is trimmed either way.
TEST(Trim, KeepRecentLeavesTheLastResponsesAlone) {
  Session s;
  const auto original = file_lines(s.transcript);
  const std::set<std::string> recent = tool_uses_of_last_responses(original, 3);
  const std::vector<size_t> protected_lines = result_lines(original, recent);
  ASSERT_FALSE(protected_lines.empty()) << "the last three responses call no tool";
  auto trim = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {kSid, "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_tool("ctx-trim", args, "", s.env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  };
  const json all = trim({});
  const json kept = trim({"--keep-recent", "3"});
  const auto all_lines = file_lines(s.dir / (all["session_id"].get<std::string>() + ".jsonl"));
  const auto kept_lines = file_lines(s.dir / (kept["session_id"].get<std::string>() + ".jsonl"));
  ASSERT_EQ(all_lines.size(), original.size());
  ASSERT_EQ(kept_lines.size(), original.size());
  // The tool results of a line (a copy differs in its session id anyway).
  const auto results = [](const std::string& line) {
    json out = json::array();
    const json j = json::parse(line);
    for (const auto& b : j["message"]["content"])
      if (b.value("type", "") == "tool_result") out.push_back(b);
    return out;
  };
  int trimmed_without = 0;
  for (size_t i : protected_lines) {
    EXPECT_EQ(results(kept_lines[i]), results(original[i]))
        << "line " << i + 1 << " was trimmed although it is recent";
    trimmed_without += results(all_lines[i]) != results(original[i]);
  }
  EXPECT_GT(trimmed_without, 0)
      << "without --keep-recent none of the recent results is trimmed: the test shows nothing";
  EXPECT_EQ(kept["results_trimmed"].get<int>(),
            all["results_trimmed"].get<int>() - trimmed_without);
}

TEST(Trim, AHalfWrittenLastLineIsNotCopied) {
  Session s;
  std::ofstream(s.transcript, std::ios::app)
      << R"({"type":"assistant","message":{"id":"msg_partial","con)";
  auto r = run_tool("ctx-trim", {kSid}, "", s.env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto copy = file_lines(s.dir / (new_id_from(r.out) + ".jsonl"));
  EXPECT_EQ(copy.size(), file_lines(s.transcript).size() - 1);
  for (const auto& l : copy) EXPECT_EQ(l.find("msg_partial"), std::string::npos);
}

TEST(Trim, TheArchiveIsCopiedAgainOnlyWhenTheSessionGrew) {
  Session s;
  ASSERT_EQ(run_tool("ctx-trim", {kSid}, "", s.env).exit_code, 0);
  fs::path archived = s.state() / "archive/-proj" / (kSid + ".jsonl");
  auto first = fs::last_write_time(archived);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(run_tool("ctx-trim", {kSid}, "", s.env).exit_code, 0);
  EXPECT_EQ(fs::last_write_time(archived), first);  // unchanged source: not copied again
  std::ofstream(s.transcript, std::ios::app)
      << R"({"type":"progress","sessionId":")" << kSid << "\"}\n";
  ASSERT_EQ(run_tool("ctx-trim", {kSid}, "", s.env).exit_code, 0);
  EXPECT_EQ(read_file(archived), read_file(s.transcript));  // grown: the archive follows
}

TEST(Trim, UnreadableTranscriptIsOneLineAndExitOne) {
  Session s;
  fs::permissions(s.tmp.path(), fs::perms::all, fs::perm_options::add);
  for (fs::path p = s.dir; p != s.tmp.path(); p = p.parent_path())
    fs::permissions(p, fs::perms::all, fs::perm_options::add);
  fs::permissions(s.transcript, fs::perms::owner_read | fs::perms::owner_write);
  s.env.set("CLAUDE_CODE_SESSION_ID", kSid);
  s.env.set("XDG_STATE_HOME", (s.tmp / "nobody-state").string());
  auto r = run_tool_as_nobody("ctx-trim", "", s.env);
  if (r.exit_code == -1) GTEST_SKIP() << "cannot run as another user here";
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;
}

TEST(Trim, BadInputIsOneLineAndExitOne) {
  Session s;
  auto r = run_tool("ctx-trim", {"01234567-89ab-cdef-0123-456789abcdef"}, "", s.env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "ctx-trim: error: no session 01234567-89ab-cdef-0123-456789abcdef in " +
                       (s.tmp / "home/.claude/projects").string() + "\n");
  r = run_tool("ctx-trim", {}, "", s.env);
  EXPECT_EQ(r.err,
            "ctx-trim: error: no session given and $CLAUDE_CODE_SESSION_ID is not set (pass a "
            "session id or a transcript path)\n");
  fs::path not_t = s.tmp.write("notes.jsonl", "just some text\nmore text\n");
  r = run_tool("ctx-trim", {not_t.string()}, "", s.env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "ctx-trim: error: " + not_t.string() +
                " is not a Claude Code transcript (no session lines in its first 2 lines)\n");
  r = run_tool("ctx-trim", {kSid, "--tools", "Bash,Frobnicate"}, "", s.env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "ctx-trim: error: unknown tool 'Frobnicate' (not a Claude Code tool and not used in "
            "this session)\n");
  r = run_tool("ctx-trim", {(s.tmp / "missing.jsonl").string()}, "", s.env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1u);
  r = run_tool("ctx-trim", {kSid, "--threshold", "0"}, "", s.env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1u);
  // Nothing was written by any of these.
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(s.dir)) ++files;
  EXPECT_EQ(files, 2u);
}

TEST(Trim, UnwritableProjectFolderLeavesNoPartialSession) {
  Session s;
  fs::permissions(s.tmp.path(), fs::perms::all, fs::perm_options::add);
  for (fs::path p = s.dir; p != s.tmp.path(); p = p.parent_path())
    fs::permissions(p, fs::perms::all, fs::perm_options::add);
  fs::permissions(s.dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                             fs::perms::group_exec | fs::perms::others_read |
                             fs::perms::others_exec);
  fs::permissions(s.transcript, fs::perms::all, fs::perm_options::add);
  s.env.set("XDG_STATE_HOME", (s.tmp / "nobody-state").string());
  fs::create_directories(s.tmp / "nobody-state");
  fs::permissions(s.tmp / "nobody-state", fs::perms::all);
  s.env.set("HOME", (s.tmp / "home").string());
  auto r = run_tool_as_nobody("ctx-trim", "", s.env);
  if (r.exit_code == -1) GTEST_SKIP() << "cannot run as another user here";
  // run_tool_as_nobody passes no arguments: give the session through the environment.
  s.env.set("CLAUDE_CODE_SESSION_ID", kSid);
  r = run_tool_as_nobody("ctx-trim", "", s.env);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(s.dir)) ++files;
  EXPECT_EQ(files, 2u);
}

}  // namespace
}  // namespace ctxkit::test
