#include <gtest/gtest.h>

#include <limits>

#include <fstream>
#include <string>

#include "claude/transcript_line.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit {
namespace {

TEST(TranscriptLine, ExtractsUsageModelAndToolUseIdsOfAssistantLine) {
  std::string line =
      R"({"parentUuid":"a","isSidechain":false,"message":{"model":"claude-sonnet-4-5","id":"msg_1","type":"message","role":"assistant",)"
      R"("content":[{"type":"tool_use","id":"toolu_X","name":"Read","input":{"file_path":"/x","nested":{"type":"assistant"}}}],)"
      R"("usage":{"input_tokens":5,"cache_creation_input_tokens":7,"cache_read_input_tokens":19995,"output_tokens":20,"cache_creation":{"ephemeral_5m_input_tokens":0}}},)"
      R"("type":"assistant","uuid":"u","timestamp":"2026-11-21T12:55:28.725Z"})";
  auto t = parse_transcript_line(line);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->type, "assistant");
  EXPECT_EQ(t->model, "claude-sonnet-4-5");
  EXPECT_EQ(t->message_id, "msg_1");
  ASSERT_TRUE(t->usage);
  EXPECT_EQ(t->usage->context_tokens(), 5 + 7 + 19995);
  ASSERT_EQ(t->tool_use_ids.size(), 1u);
  EXPECT_EQ(t->tool_use_ids[0], "toolu_X");
  EXPECT_TRUE(t->is_reading());
  EXPECT_EQ(t->timestamp, "2026-11-21T12:55:28.725Z");
}

TEST(TranscriptLine, SidechainApiErrorAndSyntheticLinesAreNotReadings) {
  auto side = parse_transcript_line(
      R"({"isSidechain":true,"type":"assistant","message":{"model":"m","usage":{"input_tokens":1}}})");
  auto err = parse_transcript_line(
      R"({"isApiErrorMessage":true,"type":"assistant","message":{"model":"m","usage":{"input_tokens":1}}})");
  auto syn = parse_transcript_line(
      R"({"type":"assistant","message":{"model":"<synthetic>","usage":{"input_tokens":0}}})");
  ASSERT_TRUE(side && err && syn);
  EXPECT_FALSE(side->is_reading());
  EXPECT_FALSE(err->is_reading());
  EXPECT_FALSE(syn->is_reading());
}

TEST(TranscriptLine, CompactBoundaryCarriesPostTokens) {
  auto t = parse_transcript_line(
      R"({"parentUuid":null,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"manual","preTokens":82044,"postTokens":707}})");
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->is_compact_boundary());
  ASSERT_TRUE(t->compact_post_tokens);
  EXPECT_EQ(*t->compact_post_tokens, 707);
}

TEST(TranscriptLine, CountsNearInt64MaxSaturateAndNegativeOnesCountZero) {
  auto t = parse_transcript_line(
      R"({"type":"assistant","message":{"model":"m","usage":{"input_tokens":9223372036854775807,)"
      R"("cache_creation_input_tokens":9223372036854775807,"cache_read_input_tokens":18446744073709551615}}})");
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_TRUE(t->usage);
  EXPECT_EQ(t->usage->cache_read_input_tokens, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(t->usage->context_tokens(), std::numeric_limits<int64_t>::max());
  auto neg = parse_transcript_line(
      R"({"type":"assistant","message":{"model":"m","usage":{"input_tokens":-5,"cache_read_input_tokens":7}}})");
  ASSERT_TRUE(neg && neg->usage);
  EXPECT_EQ(neg->usage->context_tokens(), 7);
  auto post = parse_transcript_line(
      R"({"type":"system","subtype":"compact_boundary","compactMetadata":{"postTokens":18446744073709551615}})");
  ASSERT_TRUE(post && post->compact_post_tokens);
  EXPECT_EQ(*post->compact_post_tokens, std::numeric_limits<int64_t>::max());
}

TEST(TranscriptLine, InvalidUtf8InsideTextIsTolerated) {
  std::string line = "{\"type\":\"assistant\",\"message\":{\"model\":\"m\",\"content\":[{\"type\":\"text\",\"text\":\"bad \xff\xfe bytes\"}],"
                     "\"usage\":{\"input_tokens\":3,\"cache_read_input_tokens\":4}}}";
  auto t = parse_transcript_line(line);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->usage->context_tokens(), 7);
}

TEST(TranscriptLine, HalfWrittenLineIsAnError) {
  auto t = parse_transcript_line(R"({"type":"assistant","message":{"model":"m","usa)");
  ASSERT_FALSE(t);
}

TEST(TranscriptLine, PrefilterKeepsAssistantAndBoundaryLinesOnly) {
  EXPECT_TRUE(may_matter_for_meter(R"({"type":"assistant"})"));
  EXPECT_TRUE(may_matter_for_meter(R"({"type":"system","subtype":"compact_boundary"})"));
  EXPECT_FALSE(may_matter_for_meter(R"({"type":"user","message":{"content":"say \"assistant\" please"}})"));
}

TEST(TranscriptLine, EveryFixtureAssistantLineWithToolUseYieldsItsId) {
  std::ifstream in(test::fixtures() /
                   "claude-sonnet-4-5/basic/transcripts/e276539b-fd98-4786-afff-185c4144940f.jsonl");
  std::string line;
  int with_ids = 0;
  while (std::getline(in, line)) {
    if (line.find("\"type\":\"tool_use\"") == std::string::npos || line.find("\"type\":\"assistant\"") == std::string::npos) continue;
    auto t = parse_transcript_line(line);
    ASSERT_TRUE(t);
    EXPECT_FALSE(t->tool_use_ids.empty()) << line.substr(0, 200);
    ++with_ids;
  }
  EXPECT_GE(with_ids, 8);
}

}  // namespace
}  // namespace ctxkit
