#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "archive/archive.hpp"
#include "archive/indexer.hpp"
#include "core/locations.hpp"
#include "store/search_index.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::archive {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string user(const std::string& text, const std::string& ts = "2026-11-20T10:00:00.000Z") {
  return json{{"type", "user"},
              {"timestamp", ts},
              {"message", {{"role", "user"}, {"content", text}}}}
             .dump() +
         "\n";
}
std::string result(const std::string& text) {
  return json{{"type", "user"},
              {"timestamp", "2026-11-20T10:01:00.000Z"},
              {"message",
               {{"role", "user"},
                {"content",
                 json::array(
                     {{{"type", "tool_result"}, {"tool_use_id", "t"}, {"content", text}}})}}}}
             .dump() +
         "\n";
}
// A search with its snippets cut from the archived files, as ctx-search does.
template <class Index>
Result<store::SearchResult> search(Index& idx, const store::SearchQuery& q) {
  auto r = idx.search(q);
  if (r) fill_snippets(*r, q.words);
  return r;
}
std::string assistant(const std::string& text) {
  return json{{"type", "assistant"},
              {"timestamp", "2026-11-20T10:02:00.000Z"},
              {"message",
               {{"role", "assistant"},
                {"content", json::array({{{"type", "text"}, {"text", text}}})}}}}
             .dump() +
         "\n";
}

TEST(SearchIndex, QueriesAreTakenLiterally) {
  EXPECT_EQ(store::SearchIndex::fts_query("engine.c:42"), "\"engine.c:42\"");
  EXPECT_EQ(store::SearchIndex::fts_query("  flux-capacitor   \"quoted\" "),
            "\"flux-capacitor\" \"\"\"quoted\"\"\"");
  EXPECT_EQ(store::SearchIndex::fts_query("   "), "");
}

// A NUL inside a quoted phrase would end FTS5's reading of the expression; every control
// character separates words, as a tab always did.
TEST(SearchIndex, ControlCharactersSeparateWordsOfAQuery) {
  EXPECT_EQ(store::SearchIndex::fts_phrases(std::string("alpha\0beta\0", 12)),
            (std::vector<std::string>{"\"alpha\"", "\"beta\""}));
  EXPECT_EQ(store::SearchIndex::fts_query("x\x01y\x1b[2J\x7fz"), "\"x\" \"y\" \"[2J\" \"z\"");
  EXPECT_EQ(store::SearchIndex::fts_query(std::string("\0\0", 2)), "");
  std::string many;
  for (int i = 0; i < 65; ++i) many += std::string("w\0", 2);
  EXPECT_EQ(store::SearchIndex::query_too_long(many), "the query has 65 words; give at most 64");
}

TEST(SearchIndex, AQueryWithANulIsSearched) {
  test::TempDir tmp;
  auto idx = store::SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx) << idx.error().message;
  fs::path f = tmp.write("a/S1.jsonl", user("the KESTREL_88 report") + user("other words"));
  ASSERT_TRUE(index_file(*idx, f, "S1", "-p", ""));
  for (bool ranked : {true, false}) {
    auto found = idx->search({std::string("KESTREL_88\0report", 17), "", "", "", 10},
                             store::SearchIndex::kMaxRanked, ranked);
    ASSERT_TRUE(found) << found.error().message;
    ASSERT_EQ(found->hits.size(), 1u);
    EXPECT_EQ(found->hits[0].line, 1);
    auto counted = idx->count_matches({std::string("report\0", 7), "", "", "", 10}, 5);
    ASSERT_TRUE(counted) << counted.error().message;
    EXPECT_EQ(*counted, 1);
  }
}

// An answer can go to the model: what went wrong with a query is said without the index's path.
TEST(SearchIndex, AQueryTheIndexCannotReadIsSaidWithoutTheIndexPath) {
  test::TempDir tmp;
  auto idx = store::SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx) << idx.error().message;
  fs::path f = tmp.write("a/S1.jsonl", user("some words"));
  ASSERT_TRUE(index_file(*idx, f, "S1", "-p", ""));
  auto counts = idx->phrase_counts({"\"unterminated"});
  ASSERT_FALSE(counts);
  EXPECT_EQ(counts.error().message, "the query could not be searched: unterminated string");
  EXPECT_EQ(counts.error().kind, Error::Kind::Invalid);
}

TEST(Indexer, IndexesIncrementallyAndFindsIdentifiers) {
  test::TempDir tmp;
  auto idx = store::SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx) << idx.error().message;
  fs::path f = tmp.write("a/S1.jsonl", user("please fix the flux-capacitor") +
                                           result("error at engine.c:42: null pointer"));
  auto r1 = index_file(*idx, f, "S1", "-p", "ctxkit:no-index");
  ASSERT_TRUE(r1) << r1.error().message;
  EXPECT_EQ(r1->lines_read, 2u);
  EXPECT_EQ(r1->rows_added, 2u);
  std::ofstream(f, std::ios::app) << assistant("The capacitor is wired now.");
  auto r2 = index_file(*idx, f, "S1", "-p", "ctxkit:no-index");
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->lines_read, 1u);  // only the new line is read
  auto found = search(*idx, {"engine.c:42", "", "", "", 10});
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

TEST(Indexer, RanksByRelevanceAndFilters) {
  test::TempDir tmp;
  auto idx = store::SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx);
  fs::path a = tmp.write(
      "p1/A.jsonl", user("deadlock deadlock deadlock in the scheduler", "2026-11-01T00:00:00Z"));
  fs::path b = tmp.write(
      "p2/B.jsonl", user("a long note that mentions a deadlock once among many other words here",
                         "2026-11-19T00:00:00Z"));
  ASSERT_TRUE(index_file(*idx, a, "A", "p1", ""));
  ASSERT_TRUE(index_file(*idx, b, "B", "p2", ""));
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

TEST(Indexer, CommonWordsRankOnlyTheNewestMatches) {
  test::TempDir tmp;
  auto idx = store::SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx);
  std::string lines;
  for (int i = 0; i < store::SearchIndex::kMaxRanked + 50; ++i)
    lines += user("common word " + std::to_string(i));
  fs::path f = tmp.write("p/S.jsonl", lines);
  ASSERT_TRUE(index_file(*idx, f, "S", "p", ""));
  auto found = idx->search({"common", "", "", "", 5});
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->capped);
  ASSERT_EQ(found->hits.size(), 5u);
  for (const auto& h : found->hits) EXPECT_GT(h.line, 50);  // the 50 oldest were not ranked
  auto rare = idx->search({"word 7", "", "", "", 5});
  EXPECT_FALSE(rare->capped);
}

TEST(Indexer, ExclusionMarkerRemovesTheSession) {
  test::TempDir tmp;
  auto idx = store::SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx);
  fs::path f = tmp.write("p/S.jsonl", user("secret plans for the flux-capacitor"));
  ASSERT_TRUE(index_file(*idx, f, "S", "p", "ctxkit:no-index"));
  EXPECT_EQ(idx->search({"secret", "", "", "", 10})->hits.size(), 1u);
  std::ofstream(f, std::ios::app) << user("ctxkit:no-index please");
  auto r = index_file(*idx, f, "S", "p", "ctxkit:no-index");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->excluded);
  EXPECT_EQ(idx->search({"secret", "", "", "", 10})->hits.size(), 0u);
  std::ofstream(f, std::ios::app) << user("more secret text");
  EXPECT_TRUE(index_file(*idx, f, "S", "p", "ctxkit:no-index")->excluded);
  EXPECT_EQ(idx->search({"secret", "", "", "", 10})->hits.size(), 0u);
}

}  // namespace
}  // namespace ctxkit::archive

namespace ctxkit::archive {
namespace {

TEST(SearchIndex, SnippetCentersOnTheRarestWordAndMarksEachWord) {
  std::string text = std::string(300, 'x') +
                     " error: common common common ... and then sym_42abc appears " +
                     std::string(300, 'y');
  std::string s = store::make_snippet(text, "common sym_42abc");
  EXPECT_NE(s.find("[sym_42abc]"), std::string::npos) << s;
  EXPECT_TRUE(s.starts_with("…"));
  EXPECT_TRUE(s.ends_with("…"));
  EXPECT_LT(s.size(), 260u);
  EXPECT_EQ(store::make_snippet("short ERROR text", "error"), "short [ERROR] text");
}

}  // namespace
}  // namespace ctxkit::archive

namespace ctxkit::archive {
namespace {

std::string many_lines(int n, const std::string& prefix) {
  std::string lines;
  for (int i = 0; i < n; ++i)
    lines += user(prefix + " message number " + std::to_string(i) + " with padding " +
                  std::string(200, 'p'));
  return lines;
}

// Every message that matches (not only the newest store::SearchIndex::kMaxRanked a search ranks).
int64_t count_hits(store::SearchIndex& idx, const std::string& words) {
  auto r = idx.search({words, "", "", "", 100000}, 100000, /*ranked=*/false);
  return r ? static_cast<int64_t>(r->hits.size()) : -1;
}
int64_t count_hits(ArchiveIndex& idx, const std::string& words) {
  int64_t n = 0;
  for (int i = 0; i < idx.size(); ++i) {
    const int64_t c = count_hits(idx.shard(i), words);
    if (c < 0) return -1;
    n += c;
  }
  return n;
}

// The bytes in the shards' write-ahead logs (what the indexer has written and not yet
// checkpointed).
uint64_t wal_bytes(const core::Locations& loc) {
  uint64_t n = 0;
  for (int shard = 0; shard < kIndexShards; ++shard) {
    std::error_code ec;
    const auto size = fs::file_size(fs::path(loc.index_db(shard).string() + "-wal"), ec);
    if (!ec) n += size;
  }
  return n;
}

// Killed at moments told by what it has written, not by a clock: at once, as soon as a shard's
// log has a byte, and once the logs hold 64 KiB and 512 KiB (when the indexer ends before, the
// kill finds it done: that moment is tested too).
TEST(Indexer, AKillAtAnyMomentLosesNothingAndDuplicatesNothing) {
  test::TempDir tmp;
  fs::path f = tmp.write("state/archive/p/S.jsonl",
                         many_lines(3000, "alpha") + user("the last line says zebra"));
  const fs::path state = tmp / "state";
  const core::Locations loc = core::Locations::resolve(tmp.env(), state.string());
  for (uint64_t kill_at : {uint64_t{0}, uint64_t{1}, uint64_t{64} << 10, uint64_t{512} << 10}) {
    for (int shard = 0; shard < kIndexShards; ++shard)
      for (const char* end : {"", "-wal", "-shm"})
        fs::remove(fs::path(loc.index_db(shard).string() + end));
    pid_t pid = ::fork();
    if (pid == 0) {
      auto idx = open_index(loc, nullptr);
      if (idx)
        (void)index_pending(*idx, loc, {},
                            16 << 10);  // many small transactions, every shard at once
      ::_exit(0);
    }
    // Until the logs hold kill_at bytes or the indexer has ended (60 s at most).
    bool ended = false;
    for (int i = 0; kill_at > 0 && i < 60000 && !ended && wal_bytes(loc) < kill_at; ++i) {
      ended = ::waitpid(pid, nullptr, WNOHANG) == pid;
      if (!ended) ::usleep(1000);
    }
    if (!ended) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    auto idx = open_index(loc, nullptr);
    ASSERT_TRUE(idx) << idx.error().message;
    auto before = index_progress(*idx, loc, {});
    ASSERT_TRUE(before);
    EXPECT_EQ(before->archived_bytes, fs::file_size(f));
    // Whatever a shard committed is found once, never twice; the rest is said to be pending.
    EXPECT_LE(count_hits(*idx, "zebra"), 1);
    if (before->complete()) {
      EXPECT_EQ(count_hits(*idx, "zebra"), 1);
    }
    auto run = index_pending(*idx, loc, {});
    ASSERT_TRUE(run) << run.error().message;
    EXPECT_TRUE(index_progress(*idx, loc, {})->complete());
    EXPECT_EQ(count_hits(*idx, "zebra"), 1) << "after a kill at " << kill_at << " bytes of log";
    EXPECT_EQ(count_hits(*idx, "alpha"), 3000) << "after a kill at " << kill_at << " bytes of log";
  }
}

TEST(Indexer, ACorruptIndexIsQuarantinedAndRebuiltFromTheArchive) {
  test::TempDir tmp;
  const fs::path state = tmp / "state";
  const core::Locations loc = core::Locations::resolve(tmp.env(), state.string());
  tmp.write("state/archive/p/S.jsonl", user("the quokka was found"));
  tmp.write("state/archive/index.db", std::string(8192, 'x'));
  std::string note;
  auto idx = open_index(loc, &note);
  ASSERT_TRUE(idx) << idx.error().message;
  EXPECT_NE(note.find("was corrupt; moved it to"), std::string::npos) << note;
  size_t aside = 0;
  for (const auto& e : fs::directory_iterator(state / "archive"))
    if (e.path().filename().string().starts_with("index.db.corrupt-")) ++aside;
  EXPECT_EQ(aside, 1u);
  EXPECT_FALSE(index_progress(*idx, loc, {})->complete());
  ASSERT_TRUE(index_pending(*idx, loc, {}));
  EXPECT_EQ(count_hits(*idx, "quokka"), 1);
}

TEST(Indexer, OneIndexerAtATime) {
  test::TempDir tmp;
  const core::Locations loc = core::Locations::resolve(tmp.env(), (tmp / "state").string());
  EXPECT_EQ(IndexLock::acquire(loc, false).error().kind, Error::Kind::NotFound);
  fs::create_directories(tmp / "state/archive");
  auto first = IndexLock::acquire(loc, false);
  ASSERT_TRUE(first && *first);
  auto second = IndexLock::acquire(loc, false);
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->has_value());
  struct stat st {};
  ASSERT_EQ(::stat((tmp / "state/archive/.index.lock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  first->reset();
  auto third = IndexLock::acquire(loc, false);
  ASSERT_TRUE(third);
  EXPECT_TRUE(third->has_value());
}

TEST(Indexer, ExcludedProjectsAreNeitherIndexedNorPending) {
  test::TempDir tmp;
  const fs::path state = tmp / "state";
  const core::Locations loc = core::Locations::resolve(tmp.env(), state.string());
  tmp.write("state/archive/-secret/A.jsonl", user("wombat in the secret project"));
  tmp.write("state/archive/-open/B.jsonl", user("wombat in the open project"));
  core::ArchiveConfig cfg;
  cfg.exclude_projects = {"-secret"};
  auto idx = open_index(loc, nullptr);
  ASSERT_TRUE(idx);
  ASSERT_TRUE(index_pending(*idx, loc, cfg));
  EXPECT_TRUE(index_progress(*idx, loc, cfg)->complete());
  auto hits = idx->search({"wombat", "", "", "", 10});
  ASSERT_EQ(hits->hits.size(), 1u);
  EXPECT_EQ(hits->hits[0].project, "-open");
}

// The capped outputs' folder (<archive>/tool-outputs) is not a project: nothing in it is walked as
// a project's transcripts.
TEST(Indexer, TheCappedOutputsFolderIsNoProject) {
  test::TempDir tmp;
  const fs::path state = tmp / "state";
  const core::Locations loc = core::Locations::resolve(tmp.env(), state.string());
  tmp.write("state/archive/tool-outputs/X.jsonl", user("wombat in a file of the outputs"));
  tmp.write("state/archive/-open/B.jsonl", user("wombat in the open project"));
  core::ArchiveConfig cfg;
  auto idx = open_index(loc, nullptr);
  ASSERT_TRUE(idx);
  ASSERT_TRUE(index_pending(*idx, loc, cfg));
  EXPECT_EQ(index_progress(*idx, loc, cfg)->files, 1u);
  auto hits = idx->search({"wombat", "", "", "", 10});
  ASSERT_EQ(hits->hits.size(), 1u);
  EXPECT_EQ(hits->hits[0].project, "-open");
}

// All the matches fit in the limit: newest first, without bm25 (whose document frequencies cost a
// pass over the index for a common phrase); more matches than the limit: ranked by bm25.
TEST(Indexer, MatchesThatAllFitInTheLimitComeNewestFirstOthersByRank) {
  test::TempDir tmp;
  const core::Locations loc = core::Locations::resolve(tmp.env(), (tmp / "state").string());
  tmp.write("state/archive/p1/A.jsonl",
            user("deadlock deadlock deadlock in the scheduler", "2026-11-01T00:00:00Z"));
  tmp.write("state/archive/p2/B.jsonl",
            user("a long note that mentions a deadlock once among many other words here",
                 "2026-11-19T00:00:00Z"));
  auto idx = open_index(loc, nullptr);
  ASSERT_TRUE(idx);
  ASSERT_TRUE(index_pending(*idx, loc, {}));
  auto all = idx->search({"deadlock", "", "", "", 10});
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->hits.size(), 2u);
  EXPECT_EQ(all->hits[0].session_id, "B");
  EXPECT_EQ(all->hits[1].session_id, "A");
  auto best = idx->search({"deadlock", "", "", "", 1});
  ASSERT_TRUE(best) << best.error().message;
  ASSERT_EQ(best->hits.size(), 1u);
  EXPECT_EQ(best->hits[0].session_id, "A");
  EXPECT_LT(best->hits[0].rank, 0);
  EXPECT_EQ(*idx->shard(0).count_matches({"deadlock", "", "", "", 10}, 10) +
                *idx->shard(1).count_matches({"deadlock", "", "", "", 10}, 10),
            2);
  EXPECT_EQ(*idx->shard(0).count_matches({"deadlock", "p1", "", "", 10}, 10) +
                *idx->shard(1).count_matches({"deadlock", "p1", "", "", 10}, 10),
            1);
}

TEST(Indexer, ExcludedSessionLeavesNoTokenBehind) {
  test::TempDir tmp;
  const fs::path state = tmp / "state";
  const core::Locations loc = core::Locations::resolve(tmp.env(), state.string());
  fs::path a = tmp.write("state/archive/p/A.jsonl", user("the platypus plan"));
  auto all = open_index(loc, nullptr);
  ASSERT_TRUE(all);
  store::SearchIndex* idx = &all->shard(0);
  ASSERT_TRUE(index_file(*idx, a, "A", "p", "ctxkit:no-index"));
  std::ofstream(a, std::ios::app) << user("ctxkit:no-index");
  EXPECT_EQ(*idx->token_documents("platypus"), 1);
  ASSERT_TRUE(index_file(*idx, a, "A", "p", "ctxkit:no-index")->excluded);
  // The contentless table forgot the message's tokens, not only its row.
  EXPECT_EQ(*idx->token_documents("platypus"), 0);
  fs::path b = tmp.write("state/archive/p/B.jsonl", user("a platypus again"));
  ASSERT_TRUE(index_file(*idx, b, "B", "p", "ctxkit:no-index"));
  auto hits = idx->search({"platypus", "", "", "", 10});
  ASSERT_TRUE(hits) << hits.error().message;
  ASSERT_EQ(hits->hits.size(), 1u);
  EXPECT_EQ(hits->hits[0].session_id, "B");
  EXPECT_EQ(*idx->token_documents("platypus"), 1);
}

// Rows a shard holds for a word (its own view, without the other shards).
int64_t shard_hits(ArchiveIndex& idx, int shard, const std::string& words) {
  auto r = idx.shard(shard).search({words, "", "", "", 100000}, 100000);
  return r ? static_cast<int64_t>(r->hits.size()) : -1;
}

TEST(Indexer, EveryLineLandsInExactlyOneShardAndSearchesSeeThemAll) {
  static_assert(kIndexShards >= 2);
  test::TempDir tmp;
  const fs::path state = tmp / "state";
  const core::Locations loc = core::Locations::resolve(tmp.env(), state.string());
  // About 1.5 MB: several stretches, so that every shard owns some lines.
  fs::path f = tmp.write("state/archive/p/S.jsonl",
                         many_lines(5000, "alpha") + user("the last line says zebra"));
  ASSERT_GT(fs::file_size(f), kShardStretch * kIndexShards);
  auto idx = open_index(loc, nullptr);
  ASSERT_TRUE(idx) << idx.error().message;
  auto run = index_pending(*idx, loc, {});
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->files, 1u);
  EXPECT_TRUE(index_progress(*idx, loc, {})->complete());
  int64_t total = 0;
  for (int s = 0; s < kIndexShards; ++s) {
    int64_t mine = shard_hits(*idx, s, "alpha");
    EXPECT_GT(mine, 0) << "shard " << s;
    total += mine;
  }
  EXPECT_EQ(total, 5000);
  // Together the shards rank the newest kMaxRanked matches, as one index did.
  auto common = idx->search({"alpha", "", "", "", 100000});
  ASSERT_TRUE(common);
  EXPECT_TRUE(common->capped);
  EXPECT_EQ(static_cast<int64_t>(common->hits.size()), store::SearchIndex::kMaxRanked);
  auto top = search(*idx, {"zebra", "", "", "", 10});
  ASSERT_TRUE(top);
  ASSERT_EQ(top->hits.size(), 1u);
  EXPECT_EQ(top->hits[0].line, 5001);
  EXPECT_NE(top->hits[0].snippet.find("[zebra]"), std::string::npos);
  // The merged list keeps the limit and the best ranks first.
  auto few = idx->search({"alpha", "", "", "", 7});
  ASSERT_TRUE(few);
  ASSERT_EQ(few->hits.size(), 7u);
  for (size_t i = 1; i < few->hits.size(); ++i) EXPECT_LE(few->hits[i - 1].rank, few->hits[i].rank);
  // Indexing again finds nothing pending and adds nothing.
  ASSERT_TRUE(index_pending(*idx, loc, {}));
  EXPECT_EQ(shard_hits(*idx, 0, "alpha") + shard_hits(*idx, 1, "alpha"), 5000);
}

TEST(Indexer, AShardThatIsBehindMakesTheFilePendingAndCatchesUpAlone) {
  test::TempDir tmp;
  const fs::path state = tmp / "state";
  const core::Locations loc = core::Locations::resolve(tmp.env(), state.string());
  fs::path f = tmp.write("state/archive/p/S.jsonl", many_lines(3000, "alpha"));
  {
    // Only shard 0 did its part (the other was killed before its first commit).
    auto idx = open_index(loc, nullptr);
    ASSERT_TRUE(
        index_file(idx->shard(0), f, "S", "p", "", kIndexBatchBytes, Shard{0, kIndexShards}));
    auto progress = index_progress(*idx, loc, {});
    EXPECT_FALSE(progress->complete());
    EXPECT_EQ(progress->indexed_bytes, 0u);
    EXPECT_LT(count_hits(*idx, "alpha"), 3000);
  }
  auto idx = open_index(loc, nullptr);
  ASSERT_TRUE(index_pending(*idx, loc, {}));
  EXPECT_TRUE(index_progress(*idx, loc, {})->complete());
  EXPECT_EQ(count_hits(*idx, "alpha"), 3000);
}

TEST(Indexer, OneCorruptShardIsRebuiltWithoutDuplicatingTheOthers) {
  test::TempDir tmp;
  const fs::path state = tmp / "state";
  const core::Locations loc = core::Locations::resolve(tmp.env(), state.string());
  tmp.write("state/archive/p/S.jsonl", many_lines(3000, "alpha"));
  {
    auto idx = open_index(loc, nullptr);
    ASSERT_TRUE(index_pending(*idx, loc, {}));
  }
  const fs::path second = loc.index_db(1);
  for (const char* end : {"-wal", "-shm"}) fs::remove(fs::path(second.string() + end));
  { std::ofstream(second, std::ios::binary | std::ios::trunc) << std::string(8192, 'x'); }
  std::string note;
  auto idx = open_index(loc, &note);
  ASSERT_TRUE(idx) << idx.error().message;
  EXPECT_NE(note.find("index-1.db was corrupt"), std::string::npos) << note;
  EXPECT_FALSE(index_progress(*idx, loc, {})->complete());
  ASSERT_TRUE(index_pending(*idx, loc, {}));
  EXPECT_EQ(count_hits(*idx, "alpha"), 3000);
}

TEST(Indexer, TheExclusionMarkerEmptiesEveryShard) {
  test::TempDir tmp;
  const fs::path state = tmp / "state";
  const core::Locations loc = core::Locations::resolve(tmp.env(), state.string());
  fs::path f = tmp.write("state/archive/p/S.jsonl", many_lines(3000, "alpha"));
  core::ArchiveConfig cfg;
  auto idx = open_index(loc, nullptr);
  ASSERT_TRUE(index_pending(*idx, loc, cfg));
  EXPECT_EQ(count_hits(*idx, "alpha"), 3000);
  std::ofstream(f, std::ios::app) << user("keep this out: " + cfg.exclude_marker);
  ASSERT_TRUE(index_pending(*idx, loc, cfg));
  EXPECT_EQ(count_hits(*idx, "alpha"), 0);
  for (int s = 0; s < kIndexShards; ++s)
    EXPECT_EQ(*idx->shard(s).token_documents("alpha"), 0) << "shard " << s;
  EXPECT_TRUE(index_progress(*idx, loc, cfg)->complete());
}

// Killed after one shard excluded a session and before the other did: searches already leave
// the session out.
TEST(Indexer, ASessionOneShardExcludedIsFoundInNone) {
  test::TempDir tmp;
  const fs::path state = tmp / "state";
  const core::Locations loc = core::Locations::resolve(tmp.env(), state.string());
  fs::path f = tmp.write("state/archive/p/S.jsonl", many_lines(3000, "alpha"));
  core::ArchiveConfig cfg;
  auto idx = open_index(loc, nullptr);
  ASSERT_TRUE(index_pending(*idx, loc, cfg));
  ASSERT_GT(shard_hits(*idx, 1, "alpha"), 0);
  std::ofstream(f, std::ios::app) << user("keep this out: " + cfg.exclude_marker);
  ASSERT_TRUE(index_file(idx->shard(0), f, "S", "p", cfg.exclude_marker, kIndexBatchBytes,
                         Shard{0, kIndexShards})
                  ->excluded);
  EXPECT_GT(shard_hits(*idx, 1, "alpha"), 0);  // not there yet
  auto found = idx->search({"alpha", "", "", "", 50});
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->hits.size(), 0u);
  EXPECT_FALSE(index_progress(*idx, loc, cfg)->complete());
  ASSERT_TRUE(index_pending(*idx, loc, cfg));
  EXPECT_EQ(shard_hits(*idx, 1, "alpha"), 0);
  EXPECT_TRUE(index_progress(*idx, loc, cfg)->complete());
}

TEST(Indexer, StaleTemporariesOfOursAreRemovedFreshOnesKept) {
  test::TempDir tmp;
  fs::path old_tmp = tmp.write("p/.0123.jsonl.tmp.AbC123", "half a copy");
  fs::path fresh_tmp = tmp.write("p/.4567.jsonl.tmp.XyZ789", "a copy being written");
  fs::path other = tmp.write("p/.notes.tmp.AbC123", "not ours");
  fs::path session = tmp.write("p/0123.jsonl", "{}\n");
  timespec times[2] = {{0, UTIME_OMIT}, {::time(nullptr) - 3600, 0}};
  for (const auto& p : {old_tmp, other, session})
    ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times, 0), 0);
  EXPECT_EQ(remove_stale_temporaries(tmp / "p"), 1u);
  EXPECT_FALSE(fs::exists(old_tmp));
  EXPECT_TRUE(fs::exists(fresh_tmp));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_TRUE(fs::exists(session));
}

}  // namespace
}  // namespace ctxkit::archive

// --- the rank: bm25 with bounded document frequencies --------------------------------------------

namespace ctxkit::archive {
namespace {

// bm25() as FTS5 computes it, by line, for `match` on the index at `db_path`.
std::map<int64_t, double> bm25_by_line(const fs::path& db_path, const std::string& match) {
  std::map<int64_t, double> out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db,
                               "SELECT m.line, bm25(fts) FROM fts CROSS JOIN messages m ON m.id = "
                               "fts.rowid WHERE fts MATCH ?1",
                               -1, &s, nullptr),
            SQLITE_OK);
  sqlite3_bind_text(s, 1, match.c_str(), -1, SQLITE_TRANSIENT);
  while (sqlite3_step(s) == SQLITE_ROW)
    out[sqlite3_column_int64(s, 0)] = sqlite3_column_double(s, 1);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

// Messages of varied length and word counts, newest last.
std::string varied_lines(int n) {
  std::string lines;
  const char* words[] = {"alpha", "beta", "gamma", "delta", "parser", "socket"};
  for (int i = 0; i < n; ++i) {
    std::string text;
    for (int w = 0; w < 3 + i % 17; ++w)
      text += std::string(words[(i * 7 + w * 5) % 6]) + (w % 5 == 0 ? " filler " : " ");
    lines += user(text);
  }
  return lines;
}

// Below kPhraseSample matches a word, its count is exact: the rank is FTS5's bm25, score for score.
TEST(SearchRank, IsBm25WhenEveryWordIsCountedExactly) {
  test::TempDir tmp;
  auto idx = store::SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx);
  fs::path f = tmp.write("p/S.jsonl", varied_lines(300));
  ASSERT_TRUE(index_file(*idx, f, "S", "p", ""));
  for (const std::string words : {"alpha", "alpha beta", "parser socket filler", "gamma delta"}) {
    auto found = idx->search({words, "", "", "", 1000});
    ASSERT_TRUE(found) << found.error().message;
    ASSERT_FALSE(found->hits.empty()) << words;
    const auto expected = bm25_by_line(tmp / "index.db", store::SearchIndex::fts_query(words));
    ASSERT_EQ(found->hits.size(), expected.size()) << words;
    for (size_t i = 0; i < found->hits.size(); ++i) {
      const auto& h = found->hits[i];
      ASSERT_TRUE(expected.contains(h.line)) << words << " line " << h.line;
      EXPECT_NEAR(h.rank, expected.at(h.line), 1e-9) << words << " line " << h.line;
      if (i > 0) {
        EXPECT_LE(found->hits[i - 1].rank, h.rank) << words;
      }
    }
  }
}

// A word FTS5 drops (punctuation alone) is left out of the counts too: the rank of the others
// is unchanged.
TEST(SearchRank, PunctuationBesideTheWordsLeavesTheirRankAsItIs) {
  test::TempDir tmp;
  auto idx = store::SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx);
  fs::path f = tmp.write("p/S.jsonl", varied_lines(200));
  ASSERT_TRUE(index_file(*idx, f, "S", "p", ""));
  auto plain = idx->search({"parser socket", "", "", "", 1000});
  ASSERT_TRUE(plain);
  for (const std::string words :
       {"* parser socket", "parser - socket", "parser socket ()", "\" parser socket"}) {
    auto found = idx->search({words, "", "", "", 1000});
    ASSERT_TRUE(found) << words << ": " << found.error().message;
    ASSERT_EQ(found->hits.size(), plain->hits.size()) << words;
    for (size_t i = 0; i < found->hits.size(); ++i) {
      EXPECT_EQ(found->hits[i].line, plain->hits[i].line) << words;
      EXPECT_NEAR(found->hits[i].rank, plain->hits[i].rank, 1e-12) << words;
    }
  }
}

// Counted exactly below the sample; beyond it, estimated from how densely the newest matches lie.
TEST(SearchRank, PhraseCountsAreExactBelowTheSampleAndCloseAboveIt) {
  test::TempDir tmp;
  auto idx = store::SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx);
  std::string lines;
  for (int i = 0; i < 3000; ++i)
    lines += user(std::string("everywhere ") + (i % 2 ? "odd" : "even") +
                  (i % 1000 == 0 ? " seldom" : ""));
  fs::path f = tmp.write("p/S.jsonl", lines);
  ASSERT_TRUE(index_file(*idx, f, "S", "p", ""));
  auto c = idx->phrase_counts(
      {"\"everywhere\"", "\"odd\"", "\"seldom\"", "\"nowhere\"", "\"odd everywhere\""}, 400);
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->size(), 5u);
  EXPECT_NEAR((*c)[0], 3000, 30);
  EXPECT_NEAR((*c)[1], 1500, 30);
  EXPECT_EQ((*c)[2], 3);
  EXPECT_EQ((*c)[3], 0);
  EXPECT_EQ((*c)[4], 0);  // a phrase: "odd" never comes before "everywhere"
  auto exact = idx->phrase_counts({"\"everywhere\"", "\"odd\""}, 5000);
  ASSERT_TRUE(exact);
  EXPECT_EQ((*exact)[0], 3000);
  EXPECT_EQ((*exact)[1], 1500);
}

// Words most messages hold: the best matches among the newest still come first (the message that
// holds every word, often, in few words), with the commonest word weighing least.
TEST(SearchRank, CommonWordsStillRankTheBestMatchFirst) {
  test::TempDir tmp;
  auto idx = store::SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx);
  std::string lines;
  for (int i = 0; i < 6000; ++i) {
    std::string text = "the function returns " + std::to_string(i) + " " +
                       std::string(i % 7 == 0 ? "value " : "") + std::string(60, 'w');
    if (i == 5500) text = "function value function value";
    if (i == 5800) text = "function value " + std::string(400, 'z') + " and more words here";
    lines += user(text);
  }
  fs::path f = tmp.write("p/S.jsonl", lines);
  ASSERT_TRUE(index_file(*idx, f, "S", "p", ""));
  auto found = idx->search({"function value", "", "", "", 5});
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_EQ(found->hits.size(), 5u);
  EXPECT_EQ(found->hits[0].line, 5501);
  auto three = idx->search({"the function value", "", "", "", 5});
  ASSERT_TRUE(three);
  ASSERT_FALSE(three->hits.empty());
  EXPECT_EQ(three->hits[0].line % 7, 1);  // "the" is not in line 5501: the best holds all three
}

}  // namespace
}  // namespace ctxkit::archive

namespace ctxkit::archive {
namespace {
// A capped output is found by the words ctx-cap left out of the window: the line of its preview is
// indexed with the whole archived output its note names, and the snippet is cut from it.
TEST(SearchIndex, FindsTheWordsOfACappedOutputByItsPreviewsLine) {
  test::TempDir tmp;
  auto idx = store::SearchIndex::open(tmp / "index.db");
  ASSERT_TRUE(idx) << idx.error().message;
  const fs::path outputs = tmp / "tool-outputs";
  std::string whole;
  for (int i = 0; i < 3000; ++i) whole += "ok test_case_" + std::to_string(i) + "\n";
  whole += "FAILED test_quokka_ledger: expected 3 got 4\n";
  for (int i = 0; i < 3000; ++i) whole += "ok later_case_" + std::to_string(i) + "\n";
  tmp.write("tool-outputs/toolu_01Cap.txt", whole);
  tmp.write("tool-outputs/secret.txt", "never indexed: ORYX_SECRET\n");
  const std::string preview =
      "ok test_case_0\n[ctxkit: lines 2-6000 of 6001 (99 of 100 bytes) left out here; the whole "
      "output is archived. Get them with archive_show {\"handle\": \"toolu_01Cap\", \"lines\": "
      "\"2:6000\"} (or a \"search\"), or in a shell: ctx-search --show toolu_01Cap --lines "
      "2:6000]\nok later_case_2999\n";
  // A note naming a path instead of a handle, and one naming an output that is gone.
  const std::string hostile =
      "archive_show {\"handle\": \"../tool-outputs/secret\"} archive_show {\"handle\": \"gone\"}";
  fs::path f = tmp.write("a/S1.jsonl", user("run the tests") + result(preview) + result(hostile));
  ASSERT_TRUE(index_file(*idx, f, "S1", "-p", "", kIndexBatchBytes, {}, outputs));
  auto found = idx->search({"quokka_ledger", "", "", "", 10});
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_EQ(found->hits.size(), 1u);
  EXPECT_EQ(found->hits[0].line, 2);
  fill_snippets(*found, "quokka_ledger", outputs);
  EXPECT_NE(found->hits[0].snippet.find("quokka_ledger"), std::string::npos)
      << found->hits[0].snippet;
  // Without the folder, only the preview's words are there.
  auto bare = store::SearchIndex::open(tmp / "bare.db");
  ASSERT_TRUE(bare);
  ASSERT_TRUE(index_file(*bare, f, "S1", "-p", ""));
  auto none = bare->search({"quokka_ledger", "", "", "", 10});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->hits.empty());
  auto secret = idx->search({"ORYX_SECRET", "", "", "", 10});
  ASSERT_TRUE(secret);
  EXPECT_TRUE(secret->hits.empty());
}

TEST(SearchIndex, AnOutputLargerThanWhatIsIndexedGivesItsFirstPart) {
  test::TempDir tmp;
  tmp.write("o/big.txt",
            std::string(100, 'a') + " FIRSTPART " + std::string(100, 'b') + " SECONDPART\n");
  const std::string note = "archive_show {\"handle\": \"big\"}";
  const std::string text = with_capped_outputs(note, tmp / "o", 150);
  EXPECT_NE(text.find("FIRSTPART"), std::string::npos);
  EXPECT_EQ(text.find("SECONDPART"), std::string::npos);
  EXPECT_EQ(with_capped_outputs(note, {}), note);
}

// A FIFO or a link in an output's place is neither read nor waited on: the text stays as it was.
TEST(SearchIndex, AFifoOrALinkInAnOutputsPlaceAddsNothing) {
  test::TempDir tmp;
  fs::create_directories(tmp / "o");
  ASSERT_EQ(::mkfifo((tmp / "o/fifo.txt").c_str(), 0600), 0);
  tmp.write("elsewhere.txt", "LINKED_SECRET\n");
  fs::create_symlink(tmp / "elsewhere.txt", tmp / "o/link.txt");
  const std::string note =
      "archive_show {\"handle\": \"fifo\"} archive_show {\"handle\": \"link\"}";
  EXPECT_EQ(with_capped_outputs(note, tmp / "o"), note);
}
}  // namespace
}  // namespace ctxkit::archive
