// The archive's search as its tools answer it: citations, subagents, resume commands, ranges of
// lines, and projects the user excluded.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "archive/recall.hpp"
#include "core/locations.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::archive {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kSession = "6a0e7c7e-0b1c-4d2e-9f30-1a2b3c4d5e6f";
const std::string kOther = "7b1f8d8f-1c2d-4e3f-8a41-2b3c4d5e6f70";

std::string line(const std::string& type, const std::string& role, const json& content, int n) {
  return json{{"type", type},
              {"sessionId", kSession},
              {"cwd", "/home/me/app dir"},
              {"uuid", "u" + std::to_string(n)},
              {"timestamp", "2026-11-20T10:00:00.000Z"},
              {"message", {{"role", role}, {"content", content}}}}
             .dump() +
         "\n";
}
std::string user(const std::string& text, int n) {
  return line("user", "user", text, n);
}
std::string tool_result(const std::string& text, int n) {
  return line("user", "user",
              json::array({{{"type", "tool_result"}, {"tool_use_id", "t"}, {"content", text}}}), n);
}
std::string fmt_line(int n) {
  return "message number " + std::to_string(n) + " of the long session";
}
std::string meta(int n) {
  return json{{"type", "system"}, {"subtype", "x"}, {"uuid", "m" + std::to_string(n)}}.dump() +
         "\n";
}

struct Archive {
  test::TempDir tmp;
  core::Locations loc = core::Locations::resolve(tmp.env(), (tmp / "state").string());
  fs::path write(const std::string& project, const std::string& rel, const std::string& text) {
    fs::path p = loc.archive_dir() / project / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }
};

TEST(Recall, HitsAreCitedWithTheirLineAndTheCommandThatResumesTheSession) {
  Archive a;
  std::string text;
  for (int i = 1; i <= 40; ++i)
    text += i % 3 == 0 ? meta(i) : user("ordinary chatter number " + std::to_string(i), i);
  text += tool_result("the build failed with ERR_QUOKKA_7731 in stage two", 41);
  a.write("-home-me-app-dir", kSession + ".jsonl", text);
  ArchiveRecall recall(a.loc, {});
  auto found = recall.search({"ERR_QUOKKA_7731", "", "", "", 10});
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_EQ(found->hits.size(), 1u);
  const auto& h = found->hits[0];
  EXPECT_EQ(h.cite, kSession + ":41");
  EXPECT_EQ(h.line, 41);
  EXPECT_EQ(h.kind, "tool_result");
  EXPECT_EQ(h.project, "-home-me-app-dir");
  EXPECT_EQ(h.agent, "");
  EXPECT_EQ(h.snippet, "the build failed with [ERR_QUOKKA_7731] in stage two");
  EXPECT_EQ(h.resume, "cd '/home/me/app dir' && claude --resume " + kSession);
  EXPECT_EQ(recall.index_status().note, "");
  EXPECT_TRUE(recall.index_status().caught_up);
  EXPECT_TRUE(recall.index_status().progress.complete());
}

TEST(Recall, ShowReadsTheCitedLineAndItsNeighboursWithoutTheMetadataLines) {
  Archive a;
  std::string text;
  for (int i = 1; i <= 3000; ++i) text += i % 2 == 0 ? meta(i) : user(fmt_line(i), i);
  a.write("-p", kSession + ".jsonl", text);
  ArchiveRecall recall(a.loc, {});
  ASSERT_TRUE(recall.search({"message", "", "", "", 1}));  // indexes the archive
  auto shown = recall.show({kSession, ""}, 2001, 2, 2);
  ASSERT_TRUE(shown) << shown.error().message;
  ASSERT_EQ(shown->messages.size(), 3u);  // 1999, 2001, 2003; the even lines carry no message text
  EXPECT_EQ(shown->messages[0].line, 1999);
  EXPECT_EQ(shown->messages[1].text, fmt_line(2001));
  EXPECT_EQ(shown->messages[2].line, 2003);
  // The cited line itself is shown even when it holds no message text.
  auto bare = recall.show({kSession, ""}, 2000, 0, 0);
  ASSERT_TRUE(bare) << bare.error().message;
  ASSERT_EQ(bare->messages.size(), 1u);
  EXPECT_EQ(bare->messages[0].role, "");
  auto past = recall.show({kSession, ""}, 3001, 0, 0);
  ASSERT_FALSE(past);
  EXPECT_EQ(past.error().message, "session " + kSession + " has no line 3001");
  auto unknown = recall.show({kOther, ""}, 1, 0, 0);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "session " + kOther + " is not in the searchable archive");
}

TEST(Recall, ALongMessageIsCutAndSaysHowMuchWasLeftOut) {
  Archive a;
  a.write("-p", kSession + ".jsonl", user("head " + std::string(5000, 'x'), 1));
  ArchiveRecall recall(a.loc, {});
  auto shown = recall.show({kSession, ""}, 1, 0, 0, 1000, 100);
  ASSERT_TRUE(shown) << shown.error().message;
  ASSERT_EQ(shown->messages.size(), 1u);
  EXPECT_EQ(shown->messages[0].text.size(), 1000u);
  EXPECT_EQ(shown->messages[0].omitted_chars, 4005u);
}

TEST(Recall, ASubagentsTranscriptIsSearchedAsItsSessionsAndSaysWhichAgent) {
  Archive a;
  a.write("-p", kSession + ".jsonl", user("the parent asked for a review", 1));
  a.write("-p", kSession + "/subagents/agent-a12aac722b824f25d.jsonl",
          user("review task", 1) + tool_result("found WOMBAT_SENTINEL_99 in the config", 2));
  ArchiveRecall recall(a.loc, {});
  auto found = recall.search({"WOMBAT_SENTINEL_99", "", kSession, "", 10});
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_EQ(found->hits.size(), 1u);
  EXPECT_EQ(found->hits[0].session_id, kSession);
  EXPECT_EQ(found->hits[0].agent, "agent-a12aac722b824f25d");
  EXPECT_EQ(found->hits[0].cite, kSession + "/agent-a12aac722b824f25d:2");
  EXPECT_EQ(found->hits[0].resume, "cd '/home/me/app dir' && claude --resume " + kSession);
  auto ref = parse_session_ref(kSession + "/agent-a12aac722b824f25d");
  ASSERT_TRUE(ref);
  auto shown = recall.show(*ref, 2, 0, 0);
  ASSERT_TRUE(shown) << shown.error().message;
  ASSERT_EQ(shown->messages.size(), 1u);
  EXPECT_EQ(shown->messages[0].text, "found WOMBAT_SENTINEL_99 in the config");
  // The parent's own line 2 does not exist: the agent's file was read, not the parent's.
  EXPECT_FALSE(recall.show({kSession, ""}, 2, 0, 0));
}

TEST(Recall, SessionReferencesAreSessionIdsOrASessionsAgent) {
  EXPECT_TRUE(parse_session_ref(kSession));
  EXPECT_FALSE(parse_session_ref("../../etc/passwd"));
  EXPECT_FALSE(parse_session_ref(kSession + "/../x"));
  EXPECT_FALSE(parse_session_ref(kSession + "/agent-"));
  EXPECT_FALSE(parse_session_ref(kSession + "/agent-x/y"));
}

// An index built before the project was excluded still holds it: the answers leave it out.
TEST(Recall, AProjectExcludedAfterItWasIndexedIsNeverAnsweredFrom) {
  Archive a;
  a.write("-home-me-secretproj", kSession + ".jsonl", user("the launch code is PANGOLIN_42", 1));
  a.write("-home-me-open", kOther + ".jsonl", user("the public code is PANGOLIN_42", 1));
  {
    ArchiveRecall before(a.loc, {});
    auto all = before.search({"PANGOLIN_42", "", "", "", 10});
    ASSERT_TRUE(all) << all.error().message;
    EXPECT_EQ(all->hits.size(), 2u);
  }
  core::ArchiveConfig cfg;
  cfg.exclude_projects = {"secretproj"};
  ArchiveRecall recall(a.loc, cfg);
  auto found = recall.search({"PANGOLIN_42", "", "", "", 10});
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_EQ(found->hits.size(), 1u);
  EXPECT_EQ(found->hits[0].session_id, kOther);
  auto shown = recall.show({kSession, ""}, 1, 0, 0);
  ASSERT_FALSE(shown);
  EXPECT_EQ(shown.error().message, "session " + kSession + " is not in the searchable archive");
}

// ctx-search and the MCP server share this use case: what each of them prints of the index comes
// from index_status().
TEST(Recall, NothingArchivedIsNoErrorForASearchAndOneForAShow) {
  Archive a;
  ArchiveRecall recall(a.loc, {});
  auto found = recall.search({"anything", "", "", "", 10});
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_TRUE(found->hits.empty());
  EXPECT_FALSE(recall.index_status().archived);
  auto shown = recall.show({kSession, ""}, 1, 0, 0);
  ASSERT_FALSE(shown);
  EXPECT_EQ(shown.error().message, "nothing is archived yet");
  EXPECT_FALSE(fs::exists(a.loc.archive_dir()));  // looking created nothing
}

TEST(Recall, WithAnotherIndexerAtWorkTheStatusSaysHowFarTheIndexGot) {
  Archive a;
  fs::path p = a.write("-p", kSession + ".jsonl", user("the word is CAPYBARA_9", 1));
  {
    auto held = IndexLock::acquire(a.loc, false);
    ASSERT_TRUE(held && *held);
    bool called = false;
    ArchiveRecall recall(a.loc, {}, [&](const IndexProgress&) { called = true; });
    auto found = recall.search({"CAPYBARA_9", "", "", "", 10});
    ASSERT_TRUE(found) << found.error().message;
    EXPECT_TRUE(found->hits.empty());  // nothing indexed yet
    const IndexStatus& st = recall.index_status();
    EXPECT_TRUE(st.archived);
    EXPECT_FALSE(st.caught_up);
    EXPECT_FALSE(called);  // this process did not index
    EXPECT_EQ(st.progress.files, 1u);
    EXPECT_EQ(st.progress.files_pending, 1u);
    EXPECT_EQ(st.progress.archived_bytes, fs::file_size(p));
    EXPECT_EQ(st.progress.indexed_bytes, 0u);
  }
  // The other indexer is gone: this one finishes the work first, and says how much there was.
  std::optional<IndexProgress> before;
  ArchiveRecall recall(a.loc, {}, [&](const IndexProgress& now) { before = now; });
  auto found = recall.search({"CAPYBARA_9", "", "", "", 10});
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->hits.size(), 1u);
  ASSERT_TRUE(before);
  EXPECT_EQ(before->files_pending, 1u);
  EXPECT_EQ(before->archived_bytes - before->indexed_bytes, fs::file_size(p));
  EXPECT_TRUE(recall.index_status().caught_up);
  EXPECT_TRUE(recall.index_status().progress.complete());
  EXPECT_EQ(recall.index_status().progress.indexed_bytes, fs::file_size(p));
}

TEST(Recall, HitsWithoutResumeCommandsReadNoSessionHead) {
  Archive a;
  a.write("-p", kSession + ".jsonl", user("the word is NUMBAT_3", 1));
  ArchiveRecall recall(a.loc, {});
  auto found = recall.search({"NUMBAT_3", "", "", "", 10}, false);
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_EQ(found->hits.size(), 1u);
  EXPECT_EQ(found->hits[0].cite, kSession + ":1");
  EXPECT_EQ(found->hits[0].cwd, "");
  EXPECT_EQ(found->hits[0].resume, "");
  auto with = recall.search({"NUMBAT_3", "", "", "", 10});
  ASSERT_TRUE(with) << with.error().message;
  EXPECT_EQ(with->hits[0].resume, "cd '/home/me/app dir' && claude --resume " + kSession);
}

// A project excluded after it was indexed can hold the best hits: the limit is still filled from
// the others.
TEST(Recall, HitsOfAnExcludedProjectDoNotTakeThePlacesOfOthers) {
  Archive a;
  std::string secret;
  for (int i = 1; i <= 10; ++i)
    secret += user("GECKO_51 GECKO_51 GECKO_51 " + std::to_string(i), i);
  a.write("-home-me-secretproj", kSession + ".jsonl", secret);
  a.write(
      "-home-me-open", kOther + ".jsonl",
      user("GECKO_51 once, in a much longer message than the others " + std::string(300, 'w'), 1) +
          user("GECKO_51 and again " + std::string(300, 'v'), 2));
  ASSERT_TRUE(ArchiveRecall(a.loc, {}).search({"GECKO_51", "", "", "", 10}));  // indexes both
  core::ArchiveConfig cfg;
  cfg.exclude_projects = {"secretproj"};
  ArchiveRecall recall(a.loc, cfg);
  auto found = recall.search({"GECKO_51", "", "", "", 2});
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_EQ(found->hits.size(), 2u);
  for (const auto& h : found->hits) EXPECT_EQ(h.session_id, kOther);
}

TEST(Recall, AShowWithoutLimitsGivesTheWholeMessageAndItsRole) {
  Archive a;
  a.write("-p", kSession + ".jsonl",
          user("head " + std::string(100000, 'x'), 1) + tool_result("short", 2));
  ArchiveRecall recall(a.loc, {});
  auto shown = recall.show({kSession, ""}, 1, 0, 1, SIZE_MAX, SIZE_MAX);
  ASSERT_TRUE(shown) << shown.error().message;
  ASSERT_EQ(shown->messages.size(), 2u);
  EXPECT_EQ(shown->messages[0].text.size(), 100005u);
  EXPECT_EQ(shown->messages[0].omitted_chars, 0u);
  EXPECT_EQ(shown->messages[0].role, "user");
  EXPECT_EQ(shown->messages[1].role, "tool_result");
  EXPECT_EQ(shown->project, "-p");
  EXPECT_EQ(shown->resume, "cd '/home/me/app dir' && claude --resume " + kSession);
}

// The marker keeps a session out of the archive's answers whole: the search never finds it, and
// a show of it (the model knows session ids) is refused the same way.
TEST(Recall, ASessionThatCarriesTheMarkerIsNeverShown) {
  Archive a;
  a.write("-p", kSession + ".jsonl",
          user("before the marker SECRET_TAPIR_1", 1) +
              user("keep this one out: ctxkit:no-index", 2) + user("after it SECRET_TAPIR_2", 3));
  a.write("-p", kOther + ".jsonl", user("an open SECRET_TAPIR_3", 1));
  ArchiveRecall recall(a.loc, {});
  auto found = recall.search({"SECRET_TAPIR_1", "", "", "", 10});
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_TRUE(found->hits.empty());
  for (int64_t line : {1, 2, 3}) {
    auto shown = recall.show({kSession, ""}, line, 1, 1);
    ASSERT_FALSE(shown) << line;
    EXPECT_EQ(shown.error().message, "session " + kSession + " is not in the searchable archive");
  }
  auto open = recall.show({kOther, ""}, 1, 0, 0);
  ASSERT_TRUE(open) << open.error().message;
  EXPECT_EQ(open->messages[0].text, "an open SECRET_TAPIR_3");
  // A marker of the user's own choosing, or none.
  core::ArchiveConfig none;
  none.exclude_marker = "";
  a.write("-q", "8c2a9e9f-2d3e-4f50-9b52-3c4d5e6f7081.jsonl", user("ctxkit:no-index here", 1));
  ArchiveRecall unmarked(a.loc, none);
  EXPECT_TRUE(unmarked.show({"8c2a9e9f-2d3e-4f50-9b52-3c4d5e6f7081", ""}, 1, 0, 0));
}

TEST(Recall, ASubagentThatCarriesTheMarkerKeepsItsWholeSessionFromBeingShown) {
  Archive a;
  a.write("-p", kSession + ".jsonl", user("the parent's own words", 1));
  a.write("-p", kSession + "/subagents/agent-a12aac722b824f25d.jsonl",
          user("review task", 1) + tool_result("ctxkit:no-index", 2));
  ArchiveRecall recall(a.loc, {});
  auto found = recall.search({"parent's", "", "", "", 10});
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_TRUE(found->hits.empty());
  auto main = recall.show({kSession, ""}, 1, 0, 0);
  ASSERT_FALSE(main);
  EXPECT_EQ(main.error().message, "session " + kSession + " is not in the searchable archive");
  auto agent = recall.show({kSession, "agent-a12aac722b824f25d"}, 1, 0, 0);
  ASSERT_FALSE(agent);
  EXPECT_EQ(agent.error().message,
            "session " + kSession + "/agent-a12aac722b824f25d is not in the searchable archive");
}

// Another indexer at work has not read the marker yet: the show reads what it has not.
TEST(Recall, TheMarkerInWhatTheIndexHasNotReadYetKeepsTheSessionFromBeingShown) {
  Archive a;
  fs::path p = a.write("-p", kSession + ".jsonl", user("indexed first GIRAFFE_40", 1));
  ASSERT_TRUE(ArchiveRecall(a.loc, {}).search({"GIRAFFE_40", "", "", "", 10}));
  std::ofstream(p, std::ios::app) << user("then ctxkit:no-index", 2);
  auto held = IndexLock::acquire(a.loc, false);
  ASSERT_TRUE(held && *held);
  ArchiveRecall recall(a.loc, {});
  auto shown = recall.show({kSession, ""}, 1, 0, 0);
  ASSERT_FALSE(shown);
  EXPECT_FALSE(recall.index_status().caught_up);
  EXPECT_EQ(shown.error().message, "session " + kSession + " is not in the searchable archive");
}

// Runs `f`; when it is still at work after 10 s, opens the FIFO at `fifo` for writing (which lets
// an open of it for reading go on) and fails the test.
template <class F>
void without_blocking_on(const fs::path& fifo, F f) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false, rescued = false;
  std::thread guard([&] {
    std::unique_lock<std::mutex> lock(m);
    if (cv.wait_for(lock, std::chrono::seconds(10), [&] { return done; })) return;
    rescued = true;
    for (int i = 0; i < 100; ++i) {
      if (int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC); fd >= 0) {
        ::close(fd);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  f();
  {
    std::lock_guard<std::mutex> lock(m);
    done = true;
  }
  cv.notify_one();
  guard.join();
  EXPECT_FALSE(rescued) << "blocked on the FIFO " << fifo;
}

TEST(Recall, AnArchivedTranscriptReplacedByAFifoBlocksNeitherSearchNorShow) {
  Archive a;
  fs::path p = a.write("-p", kSession + ".jsonl", user("the word is OCELOT_17", 1));
  ASSERT_TRUE(ArchiveRecall(a.loc, {}).search({"OCELOT_17", "", "", "", 10}));
  fs::remove(p);
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  without_blocking_on(p, [&] {
    ArchiveRecall recall(a.loc, {});
    auto found = recall.search({"OCELOT_17", "", "", "", 10});
    ASSERT_TRUE(found) << found.error().message;
    ASSERT_EQ(found->hits.size(), 1u);  // the index still holds it; its text is not to be had
    EXPECT_EQ(found->hits[0].snippet, "");
    auto shown = recall.show({kSession, ""}, 1, 0, 0);
    ASSERT_FALSE(shown);
    EXPECT_EQ(shown.error().message, "reading " + p.string() + ": not a regular file");
  });
}

}  // namespace
}  // namespace ctxkit::archive
