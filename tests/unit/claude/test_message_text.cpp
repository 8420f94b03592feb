#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "claude/message_text.hpp"

namespace ctxkit {
namespace {
using json = nlohmann::json;

TEST(MessageText, EachKindOfMessage) {
  json user = {{"type", "user"}, {"timestamp", "2026-11-20T10:00:00.000Z"}, {"message", {{"role", "user"}, {"content", "hi"}}}};
  auto u = message_text(user.dump());
  EXPECT_EQ(u.text, "hi");
  EXPECT_EQ(u.role, "user");
  EXPECT_EQ(u.timestamp, "2026-11-20T10:00:00.000Z");
  json result = {{"type", "user"}, {"message", {{"role", "user"}, {"content", json::array({{{"tool_use_id", "t"}, {"type", "tool_result"},
                 {"content", json::array({{{"type", "text"}, {"text", "line one"}}, {{"type", "image"}, {"source", {{"data", "QUJD"}}}},
                                          {{"type", "text"}, {"text", "line two"}}})}}})}}}};
  auto r = message_text(result.dump());
  EXPECT_EQ(r.role, "tool_result");
  EXPECT_EQ(r.text, "line one\nline two");  // images are not text
  auto tu = message_text(json{{"type", "assistant"}, {"message", {{"content", json::array({{{"type", "tool_use"}, {"name", "Bash"}, {"input", {{"command", "make"}}}}})}}}}.dump());
  EXPECT_EQ(tu.role, "tool_use");
  EXPECT_EQ(tu.text, "Bash {\"command\":\"make\"}");
  // The type may come after the message, as in the client's lines.
  auto late = message_text(R"({"message":{"role":"assistant","content":[{"type":"text","text":"late type"}]},"type":"assistant"})");
  EXPECT_EQ(late.text, "late type");
  EXPECT_EQ(late.role, "assistant");
  EXPECT_EQ(message_text(R"({"type":"progress","data":"x"})").text, "");
  EXPECT_EQ(message_text(R"({"type":"system","message":{"content":"not a message"}})").text, "");
  EXPECT_EQ(message_text(R"({"type":"thinking","message":{"content":"x"}})").role, "");
  EXPECT_EQ(message_text("not json").text, "");
  EXPECT_EQ(message_text(R"({"type":"user","message":{"content":"cut)").text, "");
  EXPECT_EQ(message_text(R"({"type":"user","message":{"content":"a \"quoted\" \u00e9 word\n"}})").text, "a \"quoted\" \xc3\xa9 word\n");
}

TEST(MessageText, InvalidUtf8IsRepairedNotDropped) {
  std::string line = "{\"type\":\"user\",\"message\":{\"content\":\"bad \xff byte and findme\"}}";
  auto m = message_text(line);
  EXPECT_NE(m.text.find("findme"), std::string::npos) << m.text;
}

// 10,000 tool_results nested in each other: the text outside the bound is read, what is nested
// deeper is opaque, and nothing recurses without a limit.
TEST(MessageText, DeeplyNestedToolResultsAreBounded) {
  std::string inner = "\"the deepest text\"";
  for (int i = 0; i < 10000; ++i) inner = "[{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":" + inner + "}]";
  std::string line = "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"outer words\"},"
                     "{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":" + inner + "}]}}";
  auto m = message_text(line);
  EXPECT_EQ(m.role, "user");
  EXPECT_NE(m.text.find("outer words"), std::string::npos);
  EXPECT_EQ(m.text.find("the deepest text"), std::string::npos);
  // Within the bound, nested results are read.
  std::string shallow = "\"shallow text\"";
  for (int i = 0; i < MessageTextExtractor::kMaxDepth - 2; ++i) shallow = "[{\"type\":\"tool_result\",\"content\":" + shallow + "}]";
  auto s = message_text("{\"type\":\"user\",\"message\":{\"content\":" + shallow + "}}");
  EXPECT_EQ(s.text, "shallow text");
}

// 50,000 nested arrays in a tool's input: the input is opaque JSON text, the line's other text
// is read.
TEST(MessageText, FiftyThousandNestedArraysInAToolInput) {
  std::string deep(50000, '[');
  deep += std::string(50000, ']');
  std::string line = "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"before the input\"},"
                     "{\"type\":\"tool_use\",\"name\":\"Edit\",\"input\":{\"deep\":" + deep + "}}]}}";
  auto m = message_text(line);
  EXPECT_NE(m.text.find("before the input"), std::string::npos) << m.text.substr(0, 200);
}

TEST(MessageText, OneExtractorForManyLinesKeepsNothingFromTheLastOne) {
  MessageTextExtractor x;
  EXPECT_EQ(x.extract(R"({"type":"user","message":{"content":"first"}})").text, "first");
  EXPECT_EQ(x.extract(R"({"type":"progress","message":{"content":"x"}})").text, "");
  EXPECT_EQ(x.extract(R"({"type":"user","message":{"content":"third"}})").text, "third");
}

}  // namespace
}  // namespace ctxkit
