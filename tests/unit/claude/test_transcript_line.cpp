#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "claude/transcript_line.hpp"
#include "unit/json_variants.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::claude {
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
  std::string line =
      "{\"type\":\"assistant\",\"message\":{\"model\":\"m\",\"content\":[{\"type\":\"text\","
      "\"text\":\"bad \xff\xfe bytes\"}],"
      "\"usage\":{\"input_tokens\":3,\"cache_read_input_tokens\":4}}}";
  auto t = parse_transcript_line(line);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->usage->context_tokens(), 7);
}

// As a parsed object has it: a key given twice keeps its last value, and a value of the wrong
// type gives nothing.
TEST(TranscriptLine, ARepeatedKeyKeepsItsLastValueAndAWrongTypeGivesNothing) {
  auto t = parse_transcript_line(
      R"({"type":"user","type":"assistant","isSidechain":true,"isSidechain":"yes",)"
      R"("message":{"model":"a","usage":{"input_tokens":9},"content":[{"type":"tool_use","id":"t1"}]},)"
      R"("message":{"model":"b","id":["x"],"usage":{"input_tokens":3,"input_tokens":"4",)"
      R"("cache_read_input_tokens":2.5,"cache_creation_input_tokens":6},)"
      R"("content":[{"type":"tool_use","id":"t2","id":"t3"},{"type":"text","id":"t4"},)"
      R"({"id":"t5","type":"tool_use","input":{"type":"tool_use","id":"t6"}},[{"type":"tool_use","id":"t7"}]]}})");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->type, "assistant");
  EXPECT_FALSE(t->is_sidechain);
  EXPECT_EQ(t->model, "b");
  EXPECT_EQ(t->message_id, "");
  ASSERT_TRUE(t->usage);
  EXPECT_EQ(t->usage->input_tokens, 0);
  EXPECT_EQ(t->usage->cache_read_input_tokens, 0);
  EXPECT_EQ(t->usage->context_tokens(), 6);
  EXPECT_EQ(t->tool_use_ids, (std::vector<std::string>{"t3", "t5"}));

  auto plain = parse_transcript_line(
      R"({"type":"assistant","message":{"model":"m","usage":{"input_tokens":1},"usage":null}})");
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->usage);
  auto not_object = parse_transcript_line(R"({"type":"assistant","message":"text"})");
  ASSERT_TRUE(not_object);
  EXPECT_EQ(not_object->model, "");
  auto boundary = parse_transcript_line(
      R"({"type":"system","subtype":"compact_boundary","compactMetadata":{"postTokens":7,"postTokens":true}})");
  ASSERT_TRUE(boundary);
  EXPECT_FALSE(boundary->compact_post_tokens);
  auto fraction = parse_transcript_line(
      R"({"type":"system","subtype":"compact_boundary","compactMetadata":{"postTokens":7.5}})");
  ASSERT_TRUE(fraction && fraction->compact_post_tokens);
  EXPECT_EQ(*fraction->compact_post_tokens, 0);
}

TEST(TranscriptLine, AValueThatIsNoObjectIsAnError) {
  for (const char* line : {"123", R"("assistant")", "[{\"type\":\"assistant\"}]", "null"}) {
    auto t = parse_transcript_line(line);
    ASSERT_FALSE(t) << line;
    EXPECT_EQ(t.error().message, "not a JSON object") << line;
  }
  auto trailing = parse_transcript_line(R"({"type":"assistant"} x)");
  ASSERT_FALSE(trailing);
  EXPECT_EQ(trailing.error().message, "not valid JSON");
}

TEST(TranscriptLine, HalfWrittenLineIsAnError) {
  auto t = parse_transcript_line(R"({"type":"assistant","message":{"model":"m","usa)");
  ASSERT_FALSE(t);
}

TEST(TranscriptLine, PrefilterKeepsAssistantAndBoundaryLinesOnly) {
  EXPECT_TRUE(may_matter_for_meter(R"({"type":"assistant"})"));
  EXPECT_TRUE(may_matter_for_meter(R"({"type":"system","subtype":"compact_boundary"})"));
  EXPECT_FALSE(
      may_matter_for_meter(R"({"type":"user","message":{"content":"say \"assistant\" please"}})"));
}

// Every recorded version and model, each line as recorded and rewritten (keys reversed, spaced,
// unknown keys added at every depth).
struct Recorded {
  std::string set;
  std::optional<test::JsonVariant> variant;
};

std::vector<Recorded> recorded() {
  std::vector<Recorded> out;
  for (const auto& set : test::fixture_sets("basic")) {
    out.push_back({set, std::nullopt});
    for (auto v : test::all_json_variants()) out.push_back({set, v});
  }
  return out;
}

class RecordedTranscripts : public ::testing::TestWithParam<Recorded> {
 protected:
  std::string as_given(const std::string& line) const {
    return GetParam().variant ? test::json_variant(line, *GetParam().variant) : line;
  }
  std::vector<std::filesystem::path> files() const {
    return test::recorded_transcripts(GetParam().set);
  }
};

TEST_P(RecordedTranscripts, EveryAssistantLineWithToolUseYieldsItsIdsAndUsage) {
  const auto mains =
      test::main_transcripts(test::fixture_path(GetParam().set, "basic/transcripts"));
  ASSERT_EQ(mains.size(), 1u);
  int with_ids = 0;
  for (const auto& line : test::file_lines(mains[0])) {
    const auto j = nlohmann::json::parse(line);
    if (j["type"] != "assistant") continue;
    std::vector<std::string> ids;
    for (const auto& b : j["message"]["content"])
      if (b["type"] == "tool_use") ids.push_back(b["id"]);
    const std::string given = as_given(line);
    ASSERT_TRUE(may_matter_for_meter(given));
    auto t = parse_transcript_line(given);
    ASSERT_TRUE(t) << t.error().message;
    EXPECT_EQ(t->type, "assistant");
    EXPECT_EQ(t->tool_use_ids, ids);
    EXPECT_EQ(t->model, j["message"]["model"]);
    EXPECT_EQ(t->message_id, j["message"]["id"]);
    EXPECT_EQ(t->timestamp, j["timestamp"]);
    ASSERT_TRUE(t->usage);
    const auto& u = j["message"]["usage"];
    EXPECT_EQ(t->usage->context_tokens(), u["input_tokens"].get<int64_t>() +
                                              u["cache_creation_input_tokens"].get<int64_t>() +
                                              u["cache_read_input_tokens"].get<int64_t>());
    if (!ids.empty()) ++with_ids;
  }
  EXPECT_GE(with_ids, 8);
}

// Every line the client wrote, of every type, known or not: read without error, with its type,
// and the prefilter keeps every line the meter needs.
TEST_P(RecordedTranscripts, EveryLineOfEveryTypeIsRead) {
  int lines = 0, boundaries = 0;
  for (const auto& file : files()) {
    for (const auto& line : test::file_lines(file)) {
      const auto j = nlohmann::json::parse(line);
      auto str = [&](const char* key) {
        return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
      };
      const std::string given = as_given(line);
      auto t = parse_transcript_line(given);
      ASSERT_TRUE(t) << file << ": " << t.error().message;
      EXPECT_EQ(t->type, str("type")) << file;
      EXPECT_EQ(t->subtype, str("subtype")) << file;
      if (str("type") == "assistant" || str("subtype") == "compact_boundary") {
        EXPECT_TRUE(may_matter_for_meter(given)) << line.substr(0, 200);
      }
      if (t->is_compact_boundary()) {
        ASSERT_TRUE(t->compact_post_tokens);
        EXPECT_EQ(*t->compact_post_tokens, j["compactMetadata"]["postTokens"].get<int64_t>());
        ++boundaries;
      }
      ++lines;
    }
  }
  EXPECT_GT(lines, 50);
  EXPECT_GE(boundaries, 2);  // manual and reactive compaction, at least
}

INSTANTIATE_TEST_SUITE_P(EveryVersion, RecordedTranscripts, ::testing::ValuesIn(recorded()),
                         [](const ::testing::TestParamInfo<Recorded>& p) {
                           return test::fixture_set_name(p.param.set) + "_" +
                                  (p.param.variant ? test::variant_name(*p.param.variant)
                                                   : "Recorded");
                         });

}  // namespace
}  // namespace ctxkit::claude
