#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "store/search_index.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string user(const std::string& text, const std::string& ts = "2026-11-20T10:00:00.000Z") {
  return json{{"type", "user"}, {"timestamp", ts}, {"message", {{"role", "user"}, {"content", text}}}}.dump() + "\n";
}
std::string result(const std::string& text) {
  return json{{"type", "user"}, {"timestamp", "2026-11-20T10:01:00.000Z"},
              {"message", {{"role", "user"}, {"content", json::array({{{"type", "tool_result"}, {"tool_use_id", "t"}, {"content", text}}})}}}}
             .dump() + "\n";
}
std::string assistant(const std::string& text) {
  return json{{"type", "assistant"}, {"timestamp", "2026-11-20T10:02:00.000Z"},
              {"message", {{"role", "assistant"}, {"content", json::array({{{"type", "text"}, {"text", text}}})}}}}.dump() + "\n";
}

TEST(SearchIndex, QueriesAreTakenLiterally) {
  EXPECT_EQ(SearchIndex::fts_query("engine.c:42"), "\"engine.c:42\"");
  EXPECT_EQ(SearchIndex::fts_query("  flux-capacitor   \"quoted\" "), "\"flux-capacitor\" \"\"\"quoted\"\"\"");
  EXPECT_EQ(SearchIndex::fts_query("   "), "");
}

TEST(SearchIndex, IndexesIncrementallyAndFindsIdentifiers) {
  test::TempDir tmp;
  auto idx = SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx) << idx.error().message;
  fs::path f = tmp.write("a/S1.jsonl", user("please fix the flux-capacitor") + result("error at engine.c:42: null pointer"));
  auto r1 = idx->index_file(f, "S1", "-p", "ctxkit:no-index");
  ASSERT_TRUE(r1) << r1.error().message;
  EXPECT_EQ(r1->lines_read, 2u);
  EXPECT_EQ(r1->rows_added, 2u);
  std::ofstream(f, std::ios::app) << assistant("The capacitor is wired now.");
  auto r2 = idx->index_file(f, "S1", "-p", "ctxkit:no-index");
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->lines_read, 1u);  // only the new line is read
  auto found = idx->search({"engine.c:42", "", "", "", 10});
  ASSERT_TRUE(found) << found.error().message;
  auto* hits = &found->hits;
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].session_id, "S1");
  EXPECT_EQ((*hits)[0].line, 2);
  EXPECT_EQ((*hits)[0].role, "tool_result");
  EXPECT_EQ((*hits)[0].snippet, "error at [engine.c:42]: null pointer");
  EXPECT_EQ(idx->search({"flux-capacitor", "", "", "", 10})->hits.size(), 1u);
  EXPECT_EQ(idx->search({"capacitor", "", "", "", 10})->hits.size(), 2u);
  EXPECT_EQ(idx->search({"wired", "", "", "", 10})->hits[0].line, 3);
}

TEST(SearchIndex, RanksByRelevanceAndFilters) {
  test::TempDir tmp;
  auto idx = SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx);
  fs::path a = tmp.write("p1/A.jsonl", user("deadlock deadlock deadlock in the scheduler", "2026-11-01T00:00:00Z"));
  fs::path b = tmp.write("p2/B.jsonl", user("a long note that mentions a deadlock once among many other words here", "2026-11-19T00:00:00Z"));
  ASSERT_TRUE(idx->index_file(a, "A", "p1", ""));
  ASSERT_TRUE(idx->index_file(b, "B", "p2", ""));
  auto found = idx->search({"deadlock", "", "", "", 10});
  auto* hits = &found->hits;
  ASSERT_EQ(hits->size(), 2u);
  EXPECT_EQ((*hits)[0].session_id, "A");
  EXPECT_LT((*hits)[0].rank, (*hits)[1].rank);
  EXPECT_EQ(idx->search({"deadlock", "p2", "", "", 10})->hits.size(), 1u);
  EXPECT_EQ(idx->search({"deadlock", "", "A", "", 10})->hits.size(), 1u);
  EXPECT_EQ(idx->search({"deadlock", "", "", "2026-11-10", 10})->hits[0].session_id, "B");
  EXPECT_EQ(idx->search({"deadlock", "", "", "", 1})->hits.size(), 1u);
}

TEST(SearchIndex, CommonWordsRankOnlyTheNewestMatches) {
  test::TempDir tmp;
  auto idx = SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx);
  std::string lines;
  for (int i = 0; i < SearchIndex::kMaxRanked + 50; ++i) lines += user("common word " + std::to_string(i));
  fs::path f = tmp.write("p/S.jsonl", lines);
  ASSERT_TRUE(idx->index_file(f, "S", "p", ""));
  auto found = idx->search({"common", "", "", "", 5});
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->capped);
  ASSERT_EQ(found->hits.size(), 5u);
  for (const auto& h : found->hits) EXPECT_GT(h.line, 50);  // the 50 oldest were not ranked
  auto rare = idx->search({"word 7", "", "", "", 5});
  EXPECT_FALSE(rare->capped);
}

TEST(SearchIndex, ExclusionMarkerRemovesTheSession) {
  test::TempDir tmp;
  auto idx = SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx);
  fs::path f = tmp.write("p/S.jsonl", user("secret plans for the flux-capacitor"));
  ASSERT_TRUE(idx->index_file(f, "S", "p", "ctxkit:no-index"));
  EXPECT_EQ(idx->search({"secret", "", "", "", 10})->hits.size(), 1u);
  std::ofstream(f, std::ios::app) << user("ctxkit:no-index please");
  auto r = idx->index_file(f, "S", "p", "ctxkit:no-index");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->excluded);
  EXPECT_EQ(idx->search({"secret", "", "", "", 10})->hits.size(), 0u);
  std::ofstream(f, std::ios::app) << user("more secret text");
  EXPECT_TRUE(idx->index_file(f, "S", "p", "ctxkit:no-index")->excluded);
  EXPECT_EQ(idx->search({"secret", "", "", "", 10})->hits.size(), 0u);
}

TEST(SearchIndex, MessageTextOfEachKind) {
  EXPECT_EQ(message_text(user("hi")).text, "hi");
  EXPECT_EQ(message_text(result("out")).role, "tool_result");
  auto tu = message_text(json{{"type", "assistant"}, {"message", {{"content", json::array({{{"type", "tool_use"}, {"name", "Bash"}, {"input", {{"command", "make"}}}}})}}}}.dump());
  EXPECT_EQ(tu.role, "tool_use");
  EXPECT_EQ(tu.text, "Bash {\"command\":\"make\"}");
  EXPECT_EQ(message_text(R"({"type":"progress","data":"x"})").text, "");
}

}  // namespace
}  // namespace ctxkit

namespace ctxkit {
namespace {

TEST(SearchIndex, SnippetCentersOnTheRarestWordAndMarksEachWord) {
  std::string text = std::string(300, 'x') + " error: common common common ... and then sym_42abc appears " + std::string(300, 'y');
  std::string s = make_snippet(text, "common sym_42abc");
  EXPECT_NE(s.find("[sym_42abc]"), std::string::npos) << s;
  EXPECT_TRUE(s.starts_with("…"));
  EXPECT_TRUE(s.ends_with("…"));
  EXPECT_LT(s.size(), 260u);
  EXPECT_EQ(make_snippet("short ERROR text", "error"), "short [ERROR] text");
}

}  // namespace
}  // namespace ctxkit
