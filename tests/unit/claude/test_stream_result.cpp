#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "claude/stream_result.hpp"

namespace ctxkit {
namespace {

std::string fixture(const std::string& model, const std::string& name) {
  std::ifstream in(std::string(CTXKIT_FIXTURES) + "/stream-json/" + model + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class StreamResultFixtures : public ::testing::TestWithParam<std::string> {};

// Recorded from Claude Code 2.1.197 against a scripted API: a tool call then a final message.
TEST_P(StreamResultFixtures, FreshCall) {
  const auto r = parse_stream_json(fixture(GetParam(), "fresh.jsonl"));
  ASSERT_TRUE(r.has_result);
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.subtype, "success");
  EXPECT_EQ(r.text, "Did it.\nCTXKIT-TASK: DONE");
  EXPECT_EQ(r.num_turns, 2);
  EXPECT_EQ(r.session_id.size(), 36u);
  EXPECT_FALSE(r.compacted);
  EXPECT_EQ(r.usage.input, 10u);
  EXPECT_EQ(r.usage.output, 40u);
  EXPECT_GT(r.usage.cache_read, 1000u);
}

TEST_P(StreamResultFixtures, CompactCountsTheCompactionCallFromModelUsage) {
  const auto fresh = parse_stream_json(fixture(GetParam(), "fresh.jsonl"));
  const auto r = parse_stream_json(fixture(GetParam(), "compact.jsonl"));
  ASSERT_TRUE(r.has_result);
  EXPECT_TRUE(r.compacted);
  EXPECT_EQ(r.text, "");
  EXPECT_EQ(r.session_id, fresh.session_id);  // the same session
  // `usage` is all zero for /compact; `modelUsage` carries the summarizer's call.
  EXPECT_EQ(r.usage, (TokenUsage{100, 0, 0, 20}));
}

TEST_P(StreamResultFixtures, CompactOfAnEmptySessionCostsNothing) {
  const auto r = parse_stream_json(fixture(GetParam(), "compact_empty.jsonl"));
  ASSERT_TRUE(r.has_result);
  EXPECT_FALSE(r.compacted);
  EXPECT_EQ(r.usage.total(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Models, StreamResultFixtures, ::testing::Values("claude-opus-4-8", "claude-sonnet-4-5"));

TEST(StreamResult, HostileLinesAreIgnored) {
  std::string deep = R"({"type":"result","x":)";
  for (int i = 0; i < 100000; ++i) deep += '[';
  std::string text = "not json\n" + deep + "\n" + std::string("{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"S\"}\n") +
                     std::string(1, '\0') + "\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\","
                     "\"usage\":{\"input_tokens\":-5,\"output_tokens\":7}}\n";
  const auto r = parse_stream_json(text);
  EXPECT_EQ(r.session_id, "S");
  EXPECT_TRUE(r.has_result);
  EXPECT_EQ(r.text, "ok");
  EXPECT_EQ(r.usage, (TokenUsage{0, 0, 0, 7}));
}

TEST(StreamResult, ErrorResultAndMissingResult) {
  auto r = parse_stream_json(R"({"type":"result","subtype":"error_max_turns","is_error":false,"session_id":"X"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.session_id, "X");
  r = parse_stream_json(R"({"type":"assistant","message":{}})");
  EXPECT_FALSE(r.has_result);
}

}  // namespace
}  // namespace ctxkit
