// The cap's reading of a PostToolUse payload: the recorded payloads of every client version (Bash,
// a Bash over the client's limit, MCP, a failed Bash, Read), escapes decoded in place, and the
// replacement in the shape the client takes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "claude/tool_output.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::claude {
namespace {
using json = nlohmann::json;

std::string payload_file(const std::string& version_dir, const std::string& name) {
  return test::read_file(test::fixture_root() / version_dir / "cap" / "payloads" /
                         (name + ".json"));
}

std::string version_name(const ::testing::TestParamInfo<std::string>& param) {
  return test::fixture_set_name(param.param);
}

class RecordedCapPayloads : public ::testing::TestWithParam<std::string> {};

TEST_P(RecordedCapPayloads, BashOutputIsReadWhole) {
  std::string text = payload_file(GetParam(), "bash_12k");
  const json j = json::parse(text);
  auto p = scan_tool_payload(text.data(), text.size());
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->kind, OutputKind::Bash);
  EXPECT_EQ(p->hook_event_name, "PostToolUse");
  EXPECT_EQ(p->tool_name, "Bash");
  EXPECT_EQ(p->tool_use_id, j["tool_use_id"].get<std::string>());
  EXPECT_EQ(p->session_id, j["session_id"].get<std::string>());
  EXPECT_EQ(p->stdout_text, j["tool_response"]["stdout"].get<std::string>());
  EXPECT_TRUE(p->persisted_path.empty());
  // Every other member is kept for the replacement.
  std::vector<std::string> keys;
  for (const auto& m : p->other_members) keys.emplace_back(m.key);
  EXPECT_NE(std::find(keys.begin(), keys.end(), "interrupted"), keys.end());
}

TEST_P(RecordedCapPayloads, BashOverTheClientsLimitNamesItsFile) {
  std::string text = payload_file(GetParam(), "bash_40k");
  const json j = json::parse(text);
  auto p = scan_tool_payload(text.data(), text.size());
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->kind, OutputKind::Bash);
  EXPECT_EQ(p->persisted_path, j["tool_response"]["persistedOutputPath"].get<std::string>());
  EXPECT_EQ(p->stdout_text.size(), 30000u);  // the client keeps the first 30,000 characters
}

TEST_P(RecordedCapPayloads, McpTextBlocksAreRead) {
  std::string text = payload_file(GetParam(), "mcp_300");
  const json j = json::parse(text);
  auto p = scan_tool_payload(text.data(), text.size());
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->kind, OutputKind::Mcp);
  ASSERT_EQ(p->texts.size(), 1u);
  EXPECT_EQ(p->texts[0], j["tool_response"][0]["text"].get<std::string>());
}

TEST_P(RecordedCapPayloads, FailedBashAndReadAreLeftAlone) {
  std::string failed = payload_file(GetParam(), "bash_exit3");
  auto f = scan_tool_payload(failed.data(), failed.size());
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->hook_event_name, "PostToolUseFailure");
  EXPECT_EQ(f->kind, OutputKind::Other);
  std::string read = payload_file(GetParam(), "read_600");
  auto r = scan_tool_payload(read.data(), read.size());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->kind, OutputKind::Other);
}

TEST_P(RecordedCapPayloads, ReplacementKeepsTheToolsShape) {
  std::string text = payload_file(GetParam(), "bash_40k");
  const json j = json::parse(text);
  auto p = scan_tool_payload(text.data(), text.size());
  ASSERT_TRUE(p);
  const json answer = json::parse(cap_response(*p, "PREVIEW"));
  const json& out = answer["hookSpecificOutput"]["updatedToolOutput"];
  EXPECT_EQ(answer["hookSpecificOutput"]["hookEventName"], "PostToolUse");
  EXPECT_EQ(out["stdout"], "PREVIEW");
  EXPECT_EQ(out["stderr"], "");
  // With persistedOutputPath the client would show its own notice instead (recorded shapes).
  EXPECT_FALSE(out.contains("persistedOutputPath"));
  EXPECT_FALSE(out.contains("persistedOutputSize"));
  EXPECT_EQ(out["interrupted"], j["tool_response"]["interrupted"]);
  EXPECT_EQ(out["isImage"], j["tool_response"]["isImage"]);

  std::string mcp = payload_file(GetParam(), "mcp_300");
  auto m = scan_tool_payload(mcp.data(), mcp.size());
  ASSERT_TRUE(m);
  EXPECT_EQ(json::parse(cap_response(*m, "P"))["hookSpecificOutput"]["updatedToolOutput"],
            json::parse(R"([{"type":"text","text":"P"}])"));
}

TEST_P(RecordedCapPayloads, TheRecordedShapesSayWhatReachedTheModel) {
  // The experiment behind cap_response: a Bash object without persistedOutputPath and MCP text
  // blocks reach the model as given; a plain string for Bash is dropped.
  const json shapes =
      json::parse(test::read_file(test::fixture_root() / GetParam() / "cap" / "shapes.json"));
  const json& modes = shapes["modes"];
  for (const char* c : {"bash_12k", "bash_stderr", "bash_40k"})
    EXPECT_TRUE(modes["same_drop"]["cases"][c]["reached_replacement"].get<bool>()) << c;
  EXPECT_TRUE(modes["same"]["cases"]["bash_40k"]["persisted_preview"].get<bool>());
  EXPECT_FALSE(modes["same_drop"]["cases"]["bash_40k"]["persisted_preview"].get<bool>());
  EXPECT_FALSE(modes["string"]["cases"]["bash_12k"]["reached_replacement"].get<bool>());
  EXPECT_TRUE(modes["blocks"]["cases"]["mcp_300"]["reached_replacement"].get<bool>());
  EXPECT_FALSE(modes["same"]["cases"]["bash_exit3"]["reached_replacement"].get<bool>());
}

INSTANTIATE_TEST_SUITE_P(Versions, RecordedCapPayloads,
                         ::testing::ValuesIn(test::client_fixture_dirs()), version_name);

TEST(ToolOutput, DecodesEscapesInPlace) {
  std::string text =
      R"({"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t\u0031",)"
      R"("tool_response":{"stdout":"a\"b\\c\n\u00e9\ud83d\ude00\ud800x\u0000","stderr":"e"}})";
  auto p = scan_tool_payload(text.data(), text.size());
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->tool_use_id, "t1");
  EXPECT_EQ(p->stdout_text, std::string("a\"b\\c\n\xC3\xA9\xF0\x9F\x98\x80\xEF\xBF\xBDx\0", 17));
  EXPECT_EQ(p->stderr_text, "e");
}

TEST(ToolOutput, ToolNameAfterTheOutputIsReadToo) {
  std::string text =
      R"({"tool_response":{"stdout":"a\nb","stderr":""},"hook_event_name":"PostToolUse",)"
      R"("tool_name":"Bash","tool_use_id":"t"})";
  auto p = scan_tool_payload(text.data(), text.size());
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->kind, OutputKind::Bash);
  EXPECT_EQ(p->stdout_text, "a\nb");
}

TEST(ToolOutput, RefusesWhatIsNotJson) {
  for (std::string bad :
       {std::string(""), std::string("[]"), std::string("{\"a\":}"),
        std::string("{\"cwd\":\"x\n\"}"), std::string("{\"cwd\":\"\\q\"}"),
        std::string("{\"a\":1} x"), std::string("{\"a\":[1,2}"), std::string(300, '[')}) {
    auto p = scan_tool_payload(bad.data(), bad.size());
    EXPECT_FALSE(p) << bad;
  }
}

TEST(ToolOutput, OnlyBashAndOtherServersMcpToolsAreCapped) {
  EXPECT_TRUE(cappable_tool("Bash"));
  EXPECT_TRUE(cappable_tool("mcp__github__get_file"));
  for (const char* t :
       {"Read", "Grep", "Glob", "Task", "Agent", "Skill", "TodoWrite", "ExitPlanMode", "WebFetch",
        "mcp__ctxkit-archive__archive_show", "mcp__plugin_ctxkit_ctxkit-archive__archive_search"})
    EXPECT_FALSE(cappable_tool(t)) << t;
}

TEST(ToolOutput, McpWithAnImageIsLeftAlone) {
  std::string text =
      R"({"hook_event_name":"PostToolUse","tool_name":"mcp__s__t","tool_use_id":"x",)"
      R"("tool_response":[{"type":"text","text":"a"},{"type":"image","data":"AAA"}]})";
  auto p = scan_tool_payload(text.data(), text.size());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->kind, OutputKind::Other);
}

}  // namespace
}  // namespace ctxkit::claude

namespace ctxkit::claude {
namespace {
// Every placement of escapes against the 8-byte words the decoder copies: each string, decoded in
// place, is what nlohmann decodes from the same JSON.
TEST(ToolOutput, DecodesEscapesAtEveryOffsetOfAWord) {
  const std::vector<std::string> pieces = {
      "a", "\\n", "\\\\", "\\\"", "\\u00e9", "\\ud83d\\ude00", "héllo", "\\t", "\\/", "xyzxyzxy"};
  uint32_t seed = 12345;
  for (int round = 0; round < 3000; ++round) {
    std::string content;
    const int n = 1 + static_cast<int>((seed = seed * 1103515245 + 12345) >> 16) % 24;
    for (int i = 0; i < n; ++i) {
      seed = seed * 1103515245 + 12345;
      const auto& piece = pieces[(seed >> 16) % pieces.size()];
      // Runs of plain bytes of every length up to 17 between escapes.
      content += std::string((seed >> 8) % 18, 'p') + piece;
    }
    std::string text =
        R"({"hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"stdout":")" +
        content + R"(","stderr":""}})";
    const std::string expected = nlohmann::json::parse(text)["tool_response"]["stdout"];
    auto p = scan_tool_payload(text.data(), text.size());
    ASSERT_TRUE(p) << p.error().message << "\n" << content;
    ASSERT_EQ(std::string(p->stdout_text), expected) << content;
  }
}
}  // namespace
}  // namespace ctxkit::claude
