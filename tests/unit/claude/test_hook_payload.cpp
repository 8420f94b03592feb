#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "claude/hook_payload.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit {
namespace {
using json = nlohmann::json;

TEST(HookPayload, ParsesEveryRecordedPostToolUsePayload) {
  for (std::string model : {"claude-sonnet-4-5", "claude-opus-4-8"}) {
    json all = json::parse(test::read_file(test::fixtures() / model / "hooks/PostToolUse.json"));
    for (const auto& p : all["payloads"]) {
      auto parsed = parse_hook_payload(p.dump());
      ASSERT_TRUE(parsed) << parsed.error().message;
      EXPECT_EQ(parsed->hook_event_name, "PostToolUse");
      EXPECT_EQ(parsed->session_id, p["session_id"]);
      EXPECT_EQ(parsed->tool_use_id, p["tool_use_id"]);
      EXPECT_EQ(parsed->agent_id, p.value("agent_id", ""));
    }
  }
}

TEST(HookPayload, SubagentPayloadPointsAtTheSubagentsOwnFile) {
  auto p = parse_hook_payload(
      R"({"session_id":"S","transcript_path":"/h/.claude/projects/-p/S.jsonl","cwd":"/p","hook_event_name":"PostToolUse","agent_id":"a12","agent_type":"general-purpose"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->context_transcript(), "/h/.claude/projects/-p/S/subagents/agent-a12.jsonl");
}

TEST(HookPayload, ErrorsAreOneLine) {
  EXPECT_EQ(parse_hook_payload("").error().message, "no hook payload on stdin (empty input)");
  EXPECT_EQ(parse_hook_payload("  \n").error().message, "no hook payload on stdin (empty input)");
  EXPECT_EQ(parse_hook_payload("[1,2]").error().message, "payload is not a JSON object");
  EXPECT_EQ(parse_hook_payload(R"({"session_id":"S"})").error().message, "payload has no transcript_path");
  auto bad = parse_hook_payload("{nope");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "payload is not valid JSON: parse error at line 1, column 3: syntax error while parsing "
            "object key - invalid literal; last read: '{no'; expected string literal");
  EXPECT_EQ(bad.error().message.find('\n'), std::string::npos);
  EXPECT_EQ(parse_hook_payload(R"({"session_id":"S","transcript_path":"/t","agent_id":"../x"})").error().message,
            "payload has an invalid agent_id '../x'");
}

TEST(HookPayload, InvalidUtf8AndLoneSurrogatesInToolResponseAreTolerated) {
  std::string text = "{\"session_id\":\"S\",\"transcript_path\":\"/t.jsonl\",\"hook_event_name\":\"PostToolUse\","
                     "\"tool_response\":{\"stdout\":\"\xc3\x28 and \\ud800 alone\"},\"tool_use_id\":\"toolu_1\"}";
  auto p = parse_hook_payload(text);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->tool_use_id, "toolu_1");
}

TEST(HookPayload, UnknownFieldsAreIgnored) {
  auto p = parse_hook_payload(R"({"session_id":"S","transcript_path":"/t","future_field":{"x":[1,2,{"y":null}]},"hook_event_name":"PostToolUse"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->hook_event_name, "PostToolUse");
}

}  // namespace
}  // namespace ctxkit
