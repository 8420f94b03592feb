#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "claude/stream_result.hpp"
#include "unit/json_variants.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::claude {
namespace {

// A recorded run of one client version and model ("claude-code-<v>/<model>").
std::string fixture(const std::string& set, const std::string& name) {
  const size_t slash = set.find('/');
  return test::read_file(test::fixture_root() / set.substr(0, slash) / "stream-json" /
                         set.substr(slash + 1) / name);
}

// Every recorded version and model, read as recorded and in each rewritten layout.
struct Case {
  std::string set;
  std::optional<test::JsonVariant> variant;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& set : test::fixture_sets("stream-json")) {
    out.push_back({set, std::nullopt});
    for (auto v : test::all_json_variants()) out.push_back({set, v});
  }
  return out;
}

class StreamResultFixtures : public ::testing::TestWithParam<Case> {
 protected:
  StreamResult parse(const std::string& name) const {
    const std::string text = fixture(GetParam().set, name);
    EXPECT_FALSE(text.empty()) << name;
    return parse_stream_json(GetParam().variant ? test::jsonl_variant(text, *GetParam().variant)
                                                : text);
  }
};

// Recorded against a scripted API: a tool call then a final message.
TEST_P(StreamResultFixtures, FreshCall) {
  const auto r = parse("fresh.jsonl");
  ASSERT_TRUE(r.has_result);
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.subtype, "success");
  EXPECT_EQ(r.text, "Did it.\nCTXKIT-TASK: DONE");
  EXPECT_EQ(r.num_turns, 2);
  EXPECT_EQ(r.session_id.size(), 36u);
  EXPECT_FALSE(r.compacted);
  EXPECT_GT(r.cost_usd, 0);
  // Two calls of the main loop: the scripted usage (input 100 then 5, output 20 each) on 2.1.197,
  // the fake API's estimate with a cache on later clients; never nothing.
  EXPECT_GT(r.usage.input, 0u);
  EXPECT_EQ(r.usage.output, 40u);
}

TEST_P(StreamResultFixtures, ResumeKeepsTheSession) {
  const auto fresh = parse("fresh.jsonl");
  const auto r = parse("resume.jsonl");
  ASSERT_TRUE(r.has_result);
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "Second reply.");
  EXPECT_EQ(r.session_id, fresh.session_id);
  EXPECT_EQ(r.num_turns, 1);
  // This call's one reply (output 20), not the session's three (2.1.332's modelUsage).
  EXPECT_EQ(r.usage.output, 20u);
  EXPECT_GT(r.cost_usd, 0);
  EXPECT_LT(r.cost_usd, fresh.cost_usd);
}

// The recorded session: fresh (two replies), resume (one), /compact (the summarizer's call), each
// reply 20 output tokens. Each call's share is what it cost, whether the client reports the call
// (2.1.197) or the whole session (2.1.332) in modelUsage.
TEST_P(StreamResultFixtures, EachCallsShareOfTheSession) {
  auto fresh = parse("fresh.jsonl");
  auto resume = parse("resume.jsonl");
  auto compact = parse("compact.jsonl");
  EXPECT_EQ(fresh.client_version, GetParam().set.substr(12, GetParam().set.find('/') - 12));
  // The model the client resolved, as its init event names it (the set's folder is the model).
  EXPECT_EQ(fresh.model, GetParam().set.substr(GetParam().set.rfind('/') + 1));
  auto totals = take_call_share(fresh, std::nullopt);
  EXPECT_EQ(fresh.usage.output, 40u);
  totals = take_call_share(resume, totals);
  EXPECT_EQ(resume.usage.output, 20u);
  EXPECT_GT(resume.usage.input + resume.usage.cache_read, 0u);
  EXPECT_GT(resume.cost_usd, 0);
  EXPECT_LT(resume.cost_usd, fresh.cost_usd + 1e-12);
  ASSERT_TRUE(compact.has_result);
  EXPECT_TRUE(compact.compacted);
  EXPECT_EQ(compact.text, "");
  EXPECT_EQ(compact.session_id, fresh.session_id);  // the same session
  // `usage` is all zero for /compact; `modelUsage` carries the summarizer's call.
  take_call_share(compact, totals);
  EXPECT_GT(compact.usage.input + compact.usage.cache_read, 0u);
  EXPECT_EQ(compact.usage.output, 20u);
}

// The context after the call, as the meter counts it: the last main-chain assistant message's
// input, cache creation and cache read (not the result's usage, which sums the call's requests);
// the window from modelUsage's contextWindow. The expected figures are read from the recording.
TEST_P(StreamResultFixtures, TheContextAfterTheCallIsTheLastMessagesUsage) {
  for (const char* name : {"fresh.jsonl", "resume.jsonl"}) {
    const std::string text = fixture(GetParam().set, name);
    uint64_t want = 0, window = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object()) continue;
      if (j.value("type", "") == "assistant" &&
          !j.value("parent_tool_use_id", nlohmann::json()).is_string()) {
        const auto& u = j["message"]["usage"];
        want = u.value("input_tokens", uint64_t{0}) +
               u.value("cache_creation_input_tokens", uint64_t{0}) +
               u.value("cache_read_input_tokens", uint64_t{0});
      }
      if (j.value("type", "") == "result" && j.contains("modelUsage"))
        for (const auto& [model, m] : j["modelUsage"].items())
          window = std::max(window, m.value("contextWindow", uint64_t{0}));
    }
    const auto r = parse(name);
    ASSERT_GT(want, 0u) << name;
    EXPECT_EQ(r.last_context, want) << name;
    EXPECT_LT(r.last_context, r.usage.input + r.usage.cache_creation + r.usage.cache_read + 1)
        << name;
    EXPECT_EQ(r.context_window, window) << name;
  }
}

TEST(StreamResult, ASubagentsMessageIsNotTheSessionsContext) {
  const auto r = parse_stream_json(
      R"({"type":"assistant","message":{"usage":{"input_tokens":7,"cache_read_input_tokens":900,"output_tokens":1}},"parent_tool_use_id":null})"
      "\n"
      R"({"parent_tool_use_id":"toolu_1","type":"assistant","message":{"usage":{"input_tokens":50000,"output_tokens":1}}})"
      "\n"
      R"({"type":"result","subtype":"success","is_error":false,"result":"ok","usage":{"input_tokens":50007,"output_tokens":2}})");
  EXPECT_EQ(r.last_context, 907u);
  EXPECT_EQ(r.context_window, 0u);
}

// A refused call ends with a `<synthetic>` message of zero usage: not the session's context.
TEST(StreamResult, ARefusedCallsSyntheticMessageIsNoContext) {
  const auto r = parse_stream_json(
      R"({"type":"assistant","message":{"model":"claude-sonnet-4-5","usage":{"input_tokens":5,"cache_read_input_tokens":40000,"output_tokens":9}}})"
      "\n"
      R"({"type":"assistant","message":{"model":"<synthetic>","usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}},"error":"rate_limit"})"
      "\n"
      R"({"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error","usage":{"input_tokens":0,"output_tokens":0},"modelUsage":{}})");
  EXPECT_EQ(r.last_context, 40005u);
}

TEST_P(StreamResultFixtures, CompactOfAnEmptySessionCostsNothing) {
  const auto r = parse("compact_empty.jsonl");
  ASSERT_TRUE(r.has_result);
  EXPECT_FALSE(r.compacted);
  EXPECT_EQ(r.usage.total(), 0u);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return test::fixture_set_name(info.param.set) + "_" +
         (info.param.variant ? test::variant_name(*info.param.variant) : "Recorded");
}

INSTANTIATE_TEST_SUITE_P(Recorded, StreamResultFixtures, ::testing::ValuesIn(cases()), case_name);

TEST(StreamResult, EveryRecordedVersionIsRead) {
  // Both ends of the supported range, both models.
  EXPECT_GE(test::fixture_sets("stream-json").size(), 4u);
}

// cmake/claude-code-range.txt names the supported releases; each end has its recorded data, for
// both models, so that every test above runs on it.
TEST(StreamResult, BothEndsOfTheSupportedRangeAreRecorded) {
  std::istringstream range(test::read_file(test::fixture_root().parent_path().parent_path() /
                                           "cmake/claude-code-range.txt"));
  int ends = 0;
  for (std::string line; std::getline(range, line);) {
    std::istringstream words(line);
    std::string key, version;
    if (!(words >> key >> version) || (key != "oldest" && key != "newest")) continue;
    ++ends;
    for (const char* model : {"claude-sonnet-4-5", "claude-opus-4-8"}) {
      const std::string set = "claude-code-" + version + "/" + model;
      for (const char* part :
           {"hooks/PostToolUse.json", "hooks/StatusLine.json", "basic/hooks.jsonl",
            "b_sessionstart/additionalContext/hooks.jsonl", "d_compact"})
        EXPECT_TRUE(std::filesystem::exists(test::fixture_path(set, part))) << set << "/" << part;
      EXPECT_TRUE(std::filesystem::exists(test::fixture_root() / ("claude-code-" + version) /
                                          "stream-json" / model / "fresh.jsonl"))
          << set;
    }
  }
  EXPECT_EQ(ends, 2);
}

TEST(StreamResult, TheResultIsFoundWhereverItsTypeStands) {
  // 2.1.332 writes "type" late in the result line; any producer may space its tokens.
  for (
      const char* line :
      {R"({"duration_api_ms":5,"session_id":"S","type":"result","subtype":"success","is_error":false,"result":"ok"})",
       R"({ "type" : "result" , "subtype" : "success" , "result" : "ok" , "session_id" : "S" })",
       "\t{\"result\":\"ok\",\n\"session_id\":\"S\",\"subtype\":\"success\",\"type\":"
       "\"result\"}"}) {
    SCOPED_TRACE(line);
    StreamResultReader r;
    // A line with a newline inside is handed over whole, as a caller that split on something
    // else would.
    r.feed_line(line);
    ASSERT_TRUE(r.result().has_result);
    EXPECT_FALSE(r.result().is_error);
    EXPECT_EQ(r.result().text, "ok");
    EXPECT_EQ(r.result().session_id, "S");
  }
}

TEST(StreamResult, TheCallsOwnUsageWinsOverTheSessionsTotals) {
  // 2.1.332 on a resumed session: modelUsage and total_cost_usd are the session's, and
  // model_usage_since_last_result this call's, over every model it used.
  auto r = parse_stream_json(
      R"({"total_cost_usd":0.5,"modelUsage":{"m":{"inputTokens":300,"outputTokens":60,"costUSD":0.5}},"type":"result",)"
      R"("model_usage_since_last_result":{"m":{"inputTokens":100,"outputTokens":20,"cacheReadInputTokens":7,"costUSD":0.1},)"
      R"("h":{"inputTokens":1,"cacheCreationInputTokens":2,"costUSD":0.05}},"subtype":"success","result":"ok","session_id":"S"})");
  ASSERT_TRUE(r.has_result);
  EXPECT_EQ(r.usage, (TokenUsage{101, 2, 7, 20}));
  EXPECT_DOUBLE_EQ(r.cost_usd, 0.15);
  // Without it (2.1.197), modelUsage and total_cost_usd are the call's.
  r = parse_stream_json(
      R"({"type":"result","subtype":"success","total_cost_usd":0.5,"modelUsage":{"m":{"inputTokens":300,"outputTokens":60}}})");
  EXPECT_EQ(r.usage, (TokenUsage{300, 0, 0, 60}));
  EXPECT_DOUBLE_EQ(r.cost_usd, 0.5);
}

TEST(StreamResult, OnlyTheTopLevelTypeCounts) {
  // An assistant line quoting a result event, and a tool result holding one, are not results.
  auto r = parse_stream_json(
      R"({"type":"assistant","message":{"content":[{"type":"text","text":"{\"type\":\"result\"}"}]},"x":{"type":"result","result":"no"}})");
  EXPECT_FALSE(r.has_result);
  r = parse_stream_json(R"({"message":{"type":"result"},"type":"user","result":"no"})");
  EXPECT_FALSE(r.has_result);
}

TEST(StreamResult, HostileLinesAreIgnored) {
  std::string deep = R"({"type":"result","x":)";
  for (int i = 0; i < 100000; ++i) deep += '[';
  std::string text =
      "not json\n" + deep + "\n" +
      std::string("{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"S\"}\n") +
      std::string(1, '\0') +
      "\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\","
      "\"usage\":{\"input_tokens\":-5,\"output_tokens\":7}}\n";
  const auto r = parse_stream_json(text);
  EXPECT_EQ(r.session_id, "S");
  EXPECT_TRUE(r.has_result);
  EXPECT_EQ(r.text, "ok");
  EXPECT_EQ(r.usage, (TokenUsage{0, 0, 0, 7}));
}

TEST(StreamResult, ManySmallObjectsAreReadWhole) {
  // 160,000 small objects in the result line (once quadratic to read): every one is walked, and the
  // figures after them are still found.
  std::string line = R"({"type":"result","subtype":"success","junk":[)";
  for (int i = 0; i < 160000; ++i) line += i ? R"(,{"a":1})" : R"({"a":1})";
  line += R"(],"result":"end","usage":{"input_tokens":3,"output_tokens":4}})";
  const auto r = parse_stream_json(line);
  ASSERT_TRUE(r.has_result);
  EXPECT_EQ(r.text, "end");
  EXPECT_EQ(r.usage, (TokenUsage{3, 0, 0, 4}));
}

TEST(StreamResult, SessionTotalsFromTheReleaseThatReportsThem) {
  EXPECT_FALSE(reports_session_totals("2.1.197"));
  EXPECT_FALSE(reports_session_totals("2.1.276"));
  EXPECT_TRUE(reports_session_totals("2.1.277"));
  EXPECT_TRUE(reports_session_totals(kSessionTotalsSince));
  EXPECT_TRUE(reports_session_totals("2.2.0"));
  EXPECT_TRUE(reports_session_totals("3.0.1"));
  EXPECT_FALSE(reports_session_totals(""));
  EXPECT_FALSE(reports_session_totals("x.y"));
  // A call of a new session is its own share; a later one gives what is new, never less than 0.
  StreamResult r;
  r.client_version = "2.1.277";
  r.reported = {{300, 0, 10, 60}, 0.5};
  r.usage = r.reported.usage;
  auto totals = take_call_share(r, SessionTotals{{200, 0, 20, 40}, 0.75});
  EXPECT_EQ(r.usage, (TokenUsage{100, 0, 0, 20}));
  EXPECT_EQ(r.cost_usd, 0);
  EXPECT_EQ(totals.usage, (TokenUsage{300, 0, 10, 60}));
  // The client's own share, when it gives one, is kept; the session's totals are still returned.
  r.share_given = true;
  r.usage = {7, 0, 0, 1};
  totals = take_call_share(r, SessionTotals{{200, 0, 20, 40}, 0.75});
  EXPECT_EQ(r.usage, (TokenUsage{7, 0, 0, 1}));
  EXPECT_EQ(totals.usage, (TokenUsage{300, 0, 10, 60}));
  // An older client reports the call alone.
  r = StreamResult{};
  r.client_version = "2.1.197";
  r.reported = {{300, 0, 10, 60}, 0.5};
  r.usage = r.reported.usage;
  take_call_share(r, SessionTotals{{200, 0, 20, 40}, 0.75});
  EXPECT_EQ(r.usage, (TokenUsage{300, 0, 10, 60}));
}

TEST(StreamResult, ErrorResultAndMissingResult) {
  auto r = parse_stream_json(
      R"({"type":"result","subtype":"error_max_turns","is_error":false,"session_id":"X"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.session_id, "X");
  r = parse_stream_json(R"({"type":"assistant","message":{}})");
  EXPECT_FALSE(r.has_result);
}

}  // namespace
}  // namespace ctxkit::claude
