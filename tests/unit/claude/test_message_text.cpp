#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "claude/message_text.hpp"
#include "unit/json_variants.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::claude {
namespace {
using json = nlohmann::json;

TEST(MessageText, EachKindOfMessage) {
  json user = {{"type", "user"},
               {"timestamp", "2026-11-20T10:00:00.000Z"},
               {"message", {{"role", "user"}, {"content", "hi"}}}};
  auto u = message_text(user.dump());
  EXPECT_EQ(u.text, "hi");
  EXPECT_EQ(u.role, "user");
  EXPECT_EQ(u.timestamp, "2026-11-20T10:00:00.000Z");
  json result = {
      {"type", "user"},
      {"message",
       {{"role", "user"},
        {"content",
         json::array({{{"tool_use_id", "t"},
                       {"type", "tool_result"},
                       {"content", json::array({{{"type", "text"}, {"text", "line one"}},
                                                {{"type", "image"}, {"source", {{"data", "QUJD"}}}},
                                                {{"type", "text"}, {"text", "line two"}}})}}})}}}};
  auto r = message_text(result.dump());
  EXPECT_EQ(r.role, "tool_result");
  EXPECT_EQ(r.text, "line one\nline two");  // images are not text
  auto tu = message_text(json{{"type", "assistant"},
                              {"message",
                               {{"content", json::array({{{"type", "tool_use"},
                                                          {"name", "Bash"},
                                                          {"input", {{"command", "make"}}}}})}}}}
                             .dump());
  EXPECT_EQ(tu.role, "tool_use");
  EXPECT_EQ(tu.text, "Bash {\"command\":\"make\"}");
  // The type may come after the message, as in the client's lines.
  auto late = message_text(
      R"({"message":{"role":"assistant","content":[{"type":"text","text":"late type"}]},"type":"assistant"})");
  EXPECT_EQ(late.text, "late type");
  EXPECT_EQ(late.role, "assistant");
  EXPECT_EQ(message_text(R"({"type":"progress","data":"x"})").text, "");
  EXPECT_EQ(message_text(R"({"type":"system","message":{"content":"not a message"}})").text, "");
  EXPECT_EQ(message_text(R"({"type":"thinking","message":{"content":"x"}})").role, "");
  EXPECT_EQ(message_text("not json").text, "");
  EXPECT_EQ(message_text(R"({"type":"user","message":{"content":"cut)").text, "");
  EXPECT_EQ(
      message_text(R"({"type":"user","message":{"content":"a \"quoted\" \u00e9 word\n"}})").text,
      "a \"quoted\" \xc3\xa9 word\n");
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
  for (int i = 0; i < 10000; ++i)
    inner = "[{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":" + inner + "}]";
  std::string line =
      "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
      "\"outer words\"},"
      "{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":" +
      inner + "}]}}";
  auto m = message_text(line);
  EXPECT_EQ(m.role, "user");
  EXPECT_NE(m.text.find("outer words"), std::string::npos);
  EXPECT_EQ(m.text.find("the deepest text"), std::string::npos);
  // Within the bound, nested results are read.
  std::string shallow = "\"shallow text\"";
  for (int i = 0; i < MessageTextExtractor::kMaxDepth - 2; ++i)
    shallow = "[{\"type\":\"tool_result\",\"content\":" + shallow + "}]";
  auto s = message_text("{\"type\":\"user\",\"message\":{\"content\":" + shallow + "}}");
  EXPECT_EQ(s.text, "shallow text");
}

// 50,000 nested arrays in a tool's input: the input is opaque JSON text, the line's other text
// is read.
TEST(MessageText, FiftyThousandNestedArraysInAToolInput) {
  std::string deep(50000, '[');
  deep += std::string(50000, ']');
  std::string line =
      "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"before the "
      "input\"},"
      "{\"type\":\"tool_use\",\"name\":\"Edit\",\"input\":{\"deep\":" +
      deep + "}}]}}";
  auto m = message_text(line);
  EXPECT_NE(m.text.find("before the input"), std::string::npos) << m.text.substr(0, 200);
}

TEST(MessageText, OneExtractorForManyLinesKeepsNothingFromTheLastOne) {
  MessageTextExtractor x;
  EXPECT_EQ(x.extract(R"({"type":"user","message":{"content":"first"}})").text, "first");
  EXPECT_EQ(x.extract(R"({"type":"progress","message":{"content":"x"}})").text, "");
  EXPECT_EQ(x.extract(R"({"type":"user","message":{"content":"third"}})").text, "third");
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

class RecordedMessageText : public ::testing::TestWithParam<Recorded> {};

// Every line the client wrote gives the same role, timestamp and text whatever its layout (a
// tool input's text is its JSON, so its key order follows the line's; its length does not).
TEST_P(RecordedMessageText, EveryLineGivesTheSameTextInAnyLayout) {
  int with_text = 0;
  MessageTextExtractor ex;
  for (const auto& file : test::recorded_transcripts(GetParam().set)) {
    for (const auto& line : test::file_lines(file)) {
      const MessageText want = message_text(line);
      const MessageText got = ex.extract(given(line, GetParam()));
      EXPECT_EQ(got.role, want.role) << line.substr(0, 200);
      EXPECT_EQ(got.timestamp, want.timestamp) << line.substr(0, 200);
      if (want.role == "tool_use" && GetParam().variant) {
        // "<name> <input JSON>": the same name, and (unless unknown keys were added to the input
        // itself) the same input.
        const size_t w = want.text.find(' '), g = got.text.find(' ');
        ASSERT_NE(g, std::string::npos) << got.text;
        EXPECT_EQ(got.text.substr(0, g), want.text.substr(0, w));
        if (GetParam().variant != test::JsonVariant::Extended) {
          EXPECT_EQ(nlohmann::json::parse(got.text.substr(g + 1), nullptr, false),
                    nlohmann::json::parse(want.text.substr(w + 1), nullptr, false))
              << got.text;
        }
      } else {
        EXPECT_EQ(got.text, want.text) << line.substr(0, 200);
      }
      if (!want.text.empty()) ++with_text;
    }
  }
  EXPECT_GT(with_text, 10);
}

INSTANTIATE_TEST_SUITE_P(EveryVersion, RecordedMessageText, ::testing::ValuesIn(recorded()),
                         recorded_name);

}  // namespace
}  // namespace ctxkit::claude
