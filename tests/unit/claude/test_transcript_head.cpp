#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "claude/transcript_head.hpp"
#include "unit/json_variants.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::claude {
namespace {
namespace fs = std::filesystem;

std::string nested(const std::string& open, const std::string& close, int depth,
                   const std::string& inside = "1") {
  std::string s;
  for (int i = 0; i < depth; ++i) s += open;
  s += inside;
  for (int i = 0; i < depth; ++i) s += close;
  return s;
}

TEST(TranscriptHead, ReadsTheFirstSessionIdCwdAndTimestamp) {
  test::TempDir tmp;
  auto p = tmp.write("s.jsonl",
                     "{\"type\":\"summary\",\"summary\":\"x\",\"leafUuid\":\"u0\"}\n"
                     "{\"type\":\"user\",\"uuid\":\"u1\",\"sessionId\":\"abc\",\"cwd\":\"/home/me/"
                     "proj\",\"timestamp\":\"2026-11-21T12:00:00.000Z\"}\n"
                     "{\"type\":\"user\",\"uuid\":\"u2\",\"sessionId\":\"other\",\"cwd\":\"/"
                     "elsewhere\",\"timestamp\":\"2026-11-21T13:00:00.000Z\"}\n");
  auto h = read_transcript_head(p);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_TRUE(h->is_transcript);
  EXPECT_EQ(h->session_id, "abc");
  EXPECT_EQ(h->cwd, "/home/me/proj");
  EXPECT_EQ(h->first_timestamp, "2026-11-21T12:00:00.000Z");
  EXPECT_EQ(h->lines_read, 2u);  // stops once everything is known
}

TEST(TranscriptHead, CwdIsDecodedJsonText) {
  test::TempDir tmp;
  // A directory named  a "quoted" \dir\ é<newline>x  as the client writes it.
  auto p = tmp.write("s.jsonl",
                     "{\"type\":\"user\",\"uuid\":\"u\",\"sessionId\":\"s\",\"timestamp\":\"t\","
                     "\"cwd\":\"/tmp/a \\\"quoted\\\" \\\\dir\\\\ \\u00e9\\nx\"}\n");
  auto h = read_transcript_head(p);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h->cwd, "/tmp/a \"quoted\" \\dir\\ \xc3\xa9\nx");
}

TEST(TranscriptHead, AFileOfOtherTextIsNotATranscript) {
  test::TempDir tmp;
  auto p = tmp.write(
      "passwd",
      "root:x:0:0:root:/root:/bin/bash\n{\"cwd\":\"/x\",\"timestamp\":\"t\"}\n[1,2]\n\"s\"\n");
  auto h = read_transcript_head(p);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_FALSE(h->is_transcript);
  EXPECT_EQ(h->lines_read, 4u);
  EXPECT_EQ(
      not_a_transcript(p, *h).message,
      p.string() + " is not a Claude Code transcript (no session lines in its first 4 lines)");
  // A type without a uuid, or a sessionId that is not a string, is enough only in the second case.
  EXPECT_FALSE(parse_head_line("{\"type\":\"user\"}")->session_line);
  EXPECT_TRUE(parse_head_line("{\"type\":\"user\",\"uuid\":\"x\"}")->session_line);
  auto odd = parse_head_line("{\"sessionId\":42,\"cwd\":[\"/x\"]}");
  ASSERT_TRUE(odd);
  EXPECT_TRUE(odd->session_line);
  EXPECT_FALSE(odd->session_id);
  EXPECT_FALSE(odd->cwd);
  EXPECT_FALSE(parse_head_line("not json"));
  EXPECT_FALSE(parse_head_line("{\"cwd\":\"/x\""));
}

TEST(TranscriptHead, MissingFileIsAnError) {
  test::TempDir tmp;
  auto h = read_transcript_head(tmp / "none.jsonl");
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error().kind, Error::Kind::NotFound);
}

TEST(TranscriptHead, DeeplyNestedValuesAreSkippedNotRecursed) {
  test::TempDir tmp;
  const std::string deep_result = nested("{\"type\":\"tool_result\",\"content\":[", "]}", 10000,
                                         "{\"type\":\"text\",\"text\":\"x\"}");
  const std::string deep_arrays = nested("[", "]", 100000);
  auto p = tmp.write("s.jsonl", "{\"type\":\"user\",\"uuid\":\"u\",\"message\":{\"content\":[" +
                                    deep_result + "]},\"input\":" + deep_arrays +
                                    ",\"sessionId\":\"s\",\"cwd\":\"/w\",\"timestamp\":\"t\"}\n");
  auto h = read_transcript_head(p);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_TRUE(h->is_transcript);
  EXPECT_EQ(h->cwd, "/w");
}

TEST(TranscriptHead, InvalidUtf8ElsewhereInTheLineDoesNotHideTheFields) {
  test::TempDir tmp;
  auto p = tmp.write("s.jsonl",
                     "{\"type\":\"user\",\"uuid\":\"u\",\"sessionId\":\"s\",\"text\":\"bad "
                     "\xff\xfe bytes\",\"cwd\":\"/w\",\"timestamp\":\"t\"}\n");
  auto h = read_transcript_head(p);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_TRUE(h->is_transcript);
  EXPECT_EQ(h->cwd, "/w");
}

TEST(TranscriptHead, ReadingIsBounded) {
  test::TempDir tmp;
  std::string text;
  for (int i = 0; i < 10; ++i) text += "{\"type\":\"progress\",\"uuid\":\"u\"}\n";
  text += "{\"cwd\":\"/late\"}\n";
  auto p = tmp.write("s.jsonl", text);
  auto h = read_transcript_head(p, {.max_lines = 10});
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->is_transcript);
  EXPECT_EQ(h->cwd, "");  // beyond the line limit
  EXPECT_EQ(h->lines_read, 10u);
  h = read_transcript_head(p, {.max_lines = 200, .max_bytes = 64});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->lines_read, 2u);  // only lines that end within the first 64 bytes
  EXPECT_EQ(read_transcript_head(p)->cwd, "/late");
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

std::string recorded_name(const ::testing::TestParamInfo<Recorded>& info) {
  return test::fixture_set_name(info.param.set) + "_" +
         (info.param.variant ? test::variant_name(*info.param.variant) : "Recorded");
}

std::string given(const std::string& line, const Recorded& r) {
  return r.variant ? test::json_variant(line, *r.variant) : line;
}

// A top-level string field of a line, or nullopt.
std::optional<std::string> field(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string()
             ? std::optional<std::string>(j[key].get<std::string>())
             : std::nullopt;
}

class RecordedHeadLines : public ::testing::TestWithParam<Recorded> {};

// Every line the client wrote: its sessionId, cwd and timestamp, whatever the layout.
TEST_P(RecordedHeadLines, EveryLineGivesItsTopLevelFields) {
  int lines = 0;
  for (const auto& file : test::recorded_transcripts(GetParam().set)) {
    for (const auto& line : test::file_lines(file)) {
      const auto j = nlohmann::json::parse(line);
      auto h = parse_head_line(given(line, GetParam()));
      ASSERT_TRUE(h) << file;
      EXPECT_EQ(h->session_id, field(j, "sessionId")) << file;
      EXPECT_EQ(h->cwd, field(j, "cwd")) << file;
      EXPECT_EQ(h->timestamp, field(j, "timestamp")) << file;
      ++lines;
    }
  }
  EXPECT_GT(lines, 50);
}

INSTANTIATE_TEST_SUITE_P(EveryVersion, RecordedHeadLines, ::testing::ValuesIn(recorded()),
                         recorded_name);

}  // namespace
}  // namespace ctxkit::claude
