#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "context/context_meter.hpp"
#include "unit/json_variants.hpp"
#include "unit/recorded_cases.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::context {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string assistant(const std::string& msg_id, int64_t cache_read,
                      const std::string& tool_id = "", bool sidechain = false,
                      const std::string& model = "claude-sonnet-4-5") {
  json j;
  j["isSidechain"] = sidechain;
  j["message"]["id"] = msg_id;
  j["message"]["model"] = model;
  j["message"]["content"] = json::array();
  if (!tool_id.empty())
    j["message"]["content"].push_back(
        {{"type", "tool_use"}, {"id", tool_id}, {"input", {{"command", "ls"}}}});
  else
    j["message"]["content"].push_back({{"type", "text"}, {"text", "hi"}});
  j["message"]["usage"] = {{"input_tokens", 5},
                           {"cache_creation_input_tokens", 0},
                           {"cache_read_input_tokens", cache_read}};
  j["type"] = "assistant";
  j["timestamp"] = "2026-11-21T12:00:00.000Z";
  return j.dump();
}

// Every recorded version and model, the transcripts as recorded and rewritten (keys reversed,
// spaced, unknown keys added at every depth).
using test::Recorded;
using test::recorded;
using test::recorded_name;

class RecordedSession : public ::testing::TestWithParam<Recorded> {
 protected:
  // The first n lines, in the layout of the parameter.
  std::string first(const std::vector<std::string>& lines, size_t n) const {
    std::string out;
    for (size_t i = 0; i < n && i < lines.size(); ++i)
      out += (GetParam().variant ? test::json_variant(lines[i], *GetParam().variant) : lines[i]) +
             "\n";
    return out;
  }
};

// For every PostToolUse of the recorded run, the transcript cut right after the assistant line
// with that tool_use gives exactly that line's usage, and the tool_use is found.
TEST_P(RecordedSession, ReadingAtEachToolCallEqualsThatResponsesUsage) {
  fs::path base = test::fixture_path(GetParam().set, "basic");
  test::TempDir tmp;
  int checked = 0;
  std::ifstream hooks(base / "hooks.jsonl");
  std::string l;
  while (std::getline(hooks, l)) {
    json h = json::parse(l);
    if (h["event"] != "PostToolUse") continue;
    json p = json::parse(h["stdin_raw"].get<std::string>());
    std::string sid = p["session_id"];
    fs::path transcript = base / "transcripts" / (sid + ".jsonl");
    if (p.contains("agent_id"))
      transcript = base / "transcripts" / sid / "subagents" /
                   ("agent-" + p["agent_id"].get<std::string>() + ".jsonl");
    auto lines = test::file_lines(transcript);
    size_t idx = 0;
    int64_t expected = test::usage_of_tool_use(lines, p["tool_use_id"], idx);
    ASSERT_GT(expected, 0) << p["tool_use_id"];
    // Cut after the tool_use line plus any sibling lines of the same response.
    fs::path cut = tmp.write("cut.jsonl", first(lines, idx + 1));
    auto scan = scan_transcript_tail(cut, p["tool_use_id"],
                                     p.contains("agent_id") ? Chain::Subagent : Chain::Main);
    ASSERT_TRUE(scan) << scan.error().message;
    ASSERT_TRUE(scan->reading);
    EXPECT_TRUE(scan->found_tool_use);
    EXPECT_EQ(scan->reading->tokens, expected) << p["tool_use_id"];
    ++checked;
  }
  EXPECT_GE(checked, 8);
}

INSTANTIATE_TEST_SUITE_P(EveryVersion, RecordedSession, ::testing::ValuesIn(recorded("basic")),
                         recorded_name);

class RecordedCompactions : public RecordedSession {};

// Every recorded compaction (manual, reactive, and proactive where the client compacted on its
// own): the reading after it is the first response after the boundary, far below the figure
// before; cut right after the boundary, it is the boundary's own postTokens.
TEST_P(RecordedCompactions, ResetTheReading) {
  int kinds = 0;
  for (const auto& kind : fs::directory_iterator(test::fixture_path(GetParam().set, "d_compact"))) {
    ++kinds;
    for (const auto& path : test::main_transcripts(kind.path() / "transcripts")) {
      auto lines = test::file_lines(path);
      size_t boundary = 0;
      int64_t after = -1, before = -1, post_tokens = -1;
      for (size_t i = 0; i < lines.size(); ++i) {
        json j = json::parse(lines[i]);
        if (j.value("subtype", json()) == "compact_boundary") {
          boundary = i;
          post_tokens = j["compactMetadata"]["postTokens"];
        }
        if (j["type"] == "assistant" && j["message"]["model"] != "<synthetic>") {
          auto u = j["message"]["usage"];
          (boundary ? after : before) = u["input_tokens"].get<int64_t>() +
                                        u["cache_creation_input_tokens"].get<int64_t>() +
                                        u["cache_read_input_tokens"].get<int64_t>();
        }
      }
      ASSERT_GT(boundary, 0u) << path;
      ASSERT_GT(after, 0) << path;
      test::TempDir tmp;
      auto whole = tmp.write("whole.jsonl", first(lines, lines.size()));
      auto scan = scan_transcript_tail(whole, "");
      ASSERT_TRUE(scan && scan->reading) << path;
      EXPECT_EQ(scan->reading->tokens, after) << path;
      EXPECT_LT(scan->reading->tokens, before) << path;
      // Cut right after the boundary: the estimate is compactMetadata.postTokens.
      auto cut = tmp.write("cut.jsonl", first(lines, boundary + 2));
      auto scan2 = scan_transcript_tail(cut, "");
      ASSERT_TRUE(scan2 && scan2->reading);
      EXPECT_TRUE(scan2->reading->after_compaction) << path;
      EXPECT_EQ(scan2->reading->tokens, post_tokens) << path;
    }
  }
  EXPECT_GE(kinds, 2);
}

INSTANTIATE_TEST_SUITE_P(EveryVersion, RecordedCompactions,
                         ::testing::ValuesIn(recorded("d_compact")), recorded_name);

TEST(ContextMeter, ParallelToolCallsFindEarlierSiblingOfSameResponse) {
  test::TempDir tmp;
  auto p = tmp.write("t.jsonl", assistant("m1", 1000) + "\n" + assistant("m2", 50000, "toolu_A") +
                                    "\n" + assistant("m2", 50000, "toolu_B") + "\n");
  auto scan = scan_transcript_tail(p, "toolu_A");
  ASSERT_TRUE(scan);
  EXPECT_TRUE(scan->found_tool_use);
  EXPECT_EQ(scan->reading->tokens, 50005);
}

TEST(ContextMeter, ToolUseOfAnOlderResponseIsNotSearchedPastTheNewest) {
  test::TempDir tmp;
  auto p = tmp.write("t.jsonl",
                     assistant("m1", 1000, "toolu_old") + "\n" + assistant("m2", 9000) + "\n");
  auto scan = scan_transcript_tail(p, "toolu_old");
  ASSERT_TRUE(scan);
  EXPECT_FALSE(scan->found_tool_use);
  EXPECT_EQ(scan->reading->tokens, 9005);
}

TEST(ContextMeter, SkipsSidechainApiErrorAndSyntheticLines) {
  test::TempDir tmp;
  std::string api_error =
      R"({"type":"assistant","isApiErrorMessage":true,"message":{"id":"e","model":"claude-sonnet-4-5","usage":{"input_tokens":0}}})";
  auto p = tmp.write("t.jsonl", assistant("m1", 70000) + "\n" + assistant("s1", 900000, "", true) +
                                    "\n" + api_error + "\n" +
                                    assistant("syn", 0, "", false, "<synthetic>") + "\n");
  auto scan = scan_transcript_tail(p, "");
  ASSERT_TRUE(scan);
  ASSERT_TRUE(scan->reading);
  EXPECT_EQ(scan->reading->tokens, 70005);
}

TEST(ContextMeter, SubagentFileCountsItsSidechainLines) {
  test::TempDir tmp;
  auto p = tmp.write("agent-a1.jsonl", assistant("s1", 30000, "toolu_S", true) + "\n");
  auto main_view = scan_transcript_tail(p, "toolu_S", Chain::Main);
  auto agent_view = scan_transcript_tail(p, "toolu_S", Chain::Subagent);
  ASSERT_TRUE(main_view && agent_view);
  EXPECT_FALSE(main_view->reading);
  ASSERT_TRUE(agent_view->reading);
  EXPECT_EQ(agent_view->reading->tokens, 30005);
  EXPECT_TRUE(agent_view->found_tool_use);
}

TEST(ContextMeter, CompactBoundaryWithoutLaterResponseGivesPostTokens) {
  test::TempDir tmp;
  auto p = tmp.write(
      "t.jsonl",
      assistant("m1", 170000) + "\n" +
          R"({"type":"system","subtype":"compact_boundary","compactMetadata":{"preTokens":170010,"postTokens":707}})"
          "\n" +
          R"({"type":"user","isCompactSummary":true,"message":{"role":"user","content":"summary"}})"
          "\n");
  auto scan = scan_transcript_tail(p, "");
  ASSERT_TRUE(scan);
  ASSERT_TRUE(scan->reading);
  EXPECT_EQ(scan->reading->tokens, 707);
  EXPECT_TRUE(scan->reading->after_compaction);
}

TEST(ContextMeter, HalfWrittenLastLineIsIgnored) {
  test::TempDir tmp;
  std::string full = assistant("m2", 80000, "toolu_Z");
  auto p = tmp.write("t.jsonl", assistant("m1", 1000) + "\n" + full.substr(0, full.size() / 2));
  auto scan = scan_transcript_tail(p, "toolu_Z");
  ASSERT_TRUE(scan);
  EXPECT_FALSE(scan->found_tool_use);
  EXPECT_EQ(scan->reading->tokens, 1005);
}

TEST(ContextMeter, HugeToolResultLineAfterTheReadingIsSkippedWithoutParsing) {
  test::TempDir tmp;
  std::string big(50 << 20, 'x');
  std::string result =
      R"({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_Q","content":")" +
      big + "\"}]}}";
  auto p = tmp.write("t.jsonl", assistant("m1", 120000, "toolu_Q") + "\n" + result + "\n");
  auto scan = scan_transcript_tail(p, "toolu_Q");
  ASSERT_TRUE(scan);
  EXPECT_TRUE(scan->found_tool_use);
  EXPECT_EQ(scan->reading->tokens, 120005);
}

TEST(ContextMeter, ScanStopsAtTheByteBudget) {
  test::TempDir tmp;
  std::string filler;
  for (int i = 0; i < 2000; ++i)
    filler += R"({"type":"progress","data":"..........................................."})"
              "\n";
  auto p = tmp.write("t.jsonl", assistant("m1", 1000) + "\n" + filler);
  auto scan = scan_transcript_tail(p, "", Chain::Main, 4096);
  ASSERT_TRUE(scan);
  EXPECT_FALSE(scan->reading);
  EXPECT_TRUE(scan->budget_exhausted);
}

TEST(ContextMeter, WaitsForALaggingToolUseLine) {
  test::TempDir tmp;
  auto p = tmp.write("t.jsonl", assistant("m1", 20000) + "\n");
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    std::ofstream out(p, std::ios::app);
    out << assistant("m2", 90000, "toolu_LAG") << "\n";
  });
  auto scan = measure_transcript(p, "toolu_LAG", std::chrono::milliseconds(2000));
  writer.join();
  ASSERT_TRUE(scan);
  EXPECT_TRUE(scan->found_tool_use);
  EXPECT_EQ(scan->reading->tokens, 90005);
}

TEST(ContextMeter, GivesUpAfterTheWaitWithTheNewestReading) {
  test::TempDir tmp;
  auto p = tmp.write("t.jsonl", assistant("m1", 20000) + "\n");
  auto start = std::chrono::steady_clock::now();
  auto scan = measure_transcript(p, "toolu_NEVER", std::chrono::milliseconds(50));
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(scan);
  EXPECT_FALSE(scan->found_tool_use);
  EXPECT_EQ(scan->reading->tokens, 20005);
  EXPECT_GE(took, std::chrono::milliseconds(50));
}

TEST(ContextMeter, MissingTranscriptIsNotFound) {
  test::TempDir tmp;
  auto scan = measure_transcript(tmp / "nope.jsonl", "toolu_X", std::chrono::milliseconds(10));
  ASSERT_FALSE(scan);
  EXPECT_EQ(scan.error().kind, Error::Kind::NotFound);
}

WindowHints hints(int64_t status_window, bool over_200k, std::string model = "") {
  WindowHints h;
  h.status_line_window = status_window;
  h.seen_over_200k = over_200k;
  h.model = std::move(model);
  return h;
}

TEST(ContextMeter, WindowRules) {
  core::ContextConfig c;
  EXPECT_EQ(window_size(c, {}, 150000), 200000);
  EXPECT_EQ(window_size(c, {}, 200001), 1000000);
  EXPECT_EQ(window_size(c, hints(1000000, false), 1000), 1000000);
  EXPECT_EQ(window_size(c, hints(200000, false), 1000), 200000);
  EXPECT_EQ(window_size(c, hints(0, true), 1000), 1000000);
  EXPECT_EQ(window_size(c, hints(0, false, "claude-opus-4-8[1m]"), 1000), 1000000);
  c.window_tokens = 500000;
  EXPECT_EQ(window_size(c, hints(0, true), 900000), 500000);
}

TEST(ContextMeter, FigureOnUsableAndWholeWindowBasis) {
  core::ContextConfig c;
  c.reserved_tokens = 33000;  // an explicit override: usable = window - 33,000
  auto f = make_figure(c, {}, 127000);
  EXPECT_EQ(f.usable, 167000);
  EXPECT_EQ(f.percent, 76);
  c.basis = core::Basis::Window;
  f = make_figure(c, {}, 127000);
  EXPECT_EQ(f.percent, 63);
  c.basis = core::Basis::Usable;
  f = make_figure(c, hints(1000000, false), 500000);
  EXPECT_EQ(f.usable, 967000);
  EXPECT_EQ(f.percent, 51);
}

TEST(ContextMeter, FigureOfACountNearInt64MaxSaturates) {
  core::ContextConfig c;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  auto f = make_figure(c, {}, kMax);
  EXPECT_EQ(f.tokens, kMax);
  EXPECT_EQ(f.window, 1000000);
  EXPECT_EQ(f.percent, std::numeric_limits<int>::max());
  f = make_figure(c, {}, kMax / 100 + 1);  // tokens * 100 alone would overflow
  EXPECT_EQ(f.percent, std::numeric_limits<int>::max());
  f = make_figure(c, {}, 2'000'000);
  EXPECT_EQ(f.percent, 200);  // 2,000,000 * 100 / 1,000,000 (usable is the window by default)
  EXPECT_EQ(short_tokens(kMax), "9223372036854776k");
}

TEST(ContextMeter, ShortTokens) {
  EXPECT_EQ(short_tokens(127432), "127k");
  EXPECT_EQ(short_tokens(167000), "167k");
  EXPECT_EQ(short_tokens(1000000), "1M");
  EXPECT_EQ(short_tokens(967000), "967k");
  EXPECT_EQ(short_tokens(1500), "1.5k");
  EXPECT_EQ(short_tokens(707), "707");
}

}  // namespace
}  // namespace ctxkit::context
