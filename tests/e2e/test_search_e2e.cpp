// The archive's search index as users meet it: ctx-trim returns before indexing, a detached
// indexer (or ctx-search itself) makes the archive searchable, exclusions, a corrupt index, and
// the trim report that counts what was cut.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "e2e/e2e_support.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kSid = RecordedSession::kId;

// Waits (6 s at most) until the detached indexer a trim started has run: its lock is free and the
// index it creates under that lock exists. The lock file alone is not enough: the indexer creates
// it, then locks it, and a test that took the lock in between went on before the indexer ran,
// which then rebuilt the index the test had just corrupted.
void wait_for_indexer(const fs::path& state) {
  fs::path lock = state / "archive/.index.lock";
  fs::path index = state / "archive/index.db";
  for (int i = 0; i < 600; ++i) {
    if (int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
      ::flock(fd, LOCK_EX);
      const bool ran = fs::exists(index);
      ::close(fd);
      if (ran) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string line(const json& j) {
  return j.dump() + "\n";
}

json result_line(const std::string& id, const json& content) {
  return {
      {"type", "user"},
      {"sessionId", "S"},
      {"uuid", "u-" + id},
      {"timestamp", "2026-11-20T10:00:00.000Z"},
      {"cwd", "/"},
      {"message",
       {{"role", "user"},
        {"content",
         json::array({{{"type", "tool_result"}, {"tool_use_id", id}, {"content", content}}})}}}};
}
json tool_use_line(const std::string& id) {
  return {{"type", "assistant"},
          {"sessionId", "S"},
          {"uuid", "a-" + id},
          {"timestamp", "2026-11-20T10:00:00.000Z"},
          {"cwd", "/"},
          {"message",
           {{"role", "assistant"},
            {"content", json::array({{{"type", "tool_use"},
                                      {"id", id},
                                      {"name", "Bash"},
                                      {"input", {{"command", "ls"}}}}})}}}};
}
json image(size_t n) {
  return {
      {"type", "image"},
      {"source", {{"type", "base64"}, {"media_type", "image/png"}, {"data", std::string(n, 'Q')}}}};
}

// A session of 4 long text results, one result that is only an image, one with long text and an
// image: 5 results get a truncation notice, 2 images a placeholder.
fs::path write_session_with_images(TempDir& tmp, const std::string& sid) {
  std::string text;
  int n = 0;
  auto add = [&](const json& content) {
    std::string id = "toolu_" + std::to_string(++n);
    text += line(tool_use_line(id));
    text += line(result_line(id, content));
  };
  for (int i = 0; i < 4; ++i) add(std::string(5000, 'x'));
  add(json::array({{{"type", "text"}, {"text", "small"}}, image(40000)}));
  add(json::array({{{"type", "text"}, {"text", std::string(5000, 'y')}}, image(30000)}));
  return tmp.write("home/.claude/projects/-img/" + sid + ".jsonl", text);
}

TEST(TrimReport, CountsToolResultsAndImagesApart) {
  TempDir tmp;
  util::Env env = tmp.env();
  const std::string sid = "0b7c3a52-1c1e-4d7e-9a55-7a3c2d1e0f00";
  fs::path t = write_session_with_images(tmp, sid);
  auto dry = run_tool("ctx-trim", {t.string(), "--dry-run"}, "", env);
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("would trim 5 tool results, 2 images and 0 tool inputs:"),
            std::string::npos)
      << dry.out;
  auto r = run_tool("ctx-trim", {t.string()}, "", env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Trimmed 5 tool results, 2 images and 0 tool inputs (Bash 6):"),
            std::string::npos)
      << r.out;
  auto j = json::parse(run_tool("ctx-trim", {t.string(), "--dry-run", "--json"}, "", env).out);
  EXPECT_EQ(j["results_cut"], 5);
  EXPECT_EQ(j["images_replaced"], 2);
  EXPECT_EQ(j["results_trimmed"], 6);
  // The written copy holds exactly that many notices and placeholders.
  auto pos = r.out.find("claude --resume ");
  ASSERT_NE(pos, std::string::npos);
  std::string copy = read_file(t.parent_path() / (r.out.substr(pos + 16, 36) + ".jsonl"));
  size_t notices = 0, placeholders = 0;
  for (size_t p = copy.find("[...truncated"); p != std::string::npos;
       p = copy.find("[...truncated", p + 1))
    ++notices;
  for (size_t p = copy.find("[image removed by ctx-trim"); p != std::string::npos;
       p = copy.find("[image removed by ctx-trim", p + 1))
    ++placeholders;
  EXPECT_EQ(notices, 5u);
  EXPECT_EQ(placeholders, 2u);
  wait_for_indexer(tmp / "home/.local/state/ctxkit");
}

// ctx-trim does not wait for the indexing it starts: with the index lock held (an indexer at
// work) it still returns, the archive not yet indexed; once the lock is let go the archive
// becomes searchable.
TEST(SearchIndexing, TrimReturnsFirstAndTheArchiveBecomesSearchable) {
  RecordedSession s;
  fs::create_directories(s.state() / "archive");
  ::chmod(s.state().c_str(), 0700);
  ::chmod((s.state() / "archive").c_str(), 0700);
  int fd = ::open((s.state() / "archive/.index.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  auto t = run_tool("ctx-trim", {kSid}, "", s.env);
  EXPECT_FALSE(t.timed_out);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.err, "");
  auto busy = run_tool("ctx-search", {"output line 500 of"}, "", s.env);
  EXPECT_TRUE(busy.out.starts_with("The search index is being built: 0 KB of "))
      << busy.out;  // nothing indexed yet
  ::close(fd);
  // Until the index is complete (the detached indexer's work, or ctx-search's own; 30 s at most).
  for (int i = 0; i < 1500 && run_tool("ctx-search", {"output line 500 of"}, "", s.env)
                                  .out.starts_with("The search index is");
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto hits = run_tool("ctx-search", {"output line 500 of", "--json"}, "", s.env);
  ASSERT_EQ(hits.exit_code, 0) << hits.err;
  EXPECT_EQ(hits.err, "");  // complete: nothing to say
  auto j = json::parse(hits.out);
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j[0]["session_id"], kSid);
  EXPECT_NE(j[0]["snippet"].get<std::string>().find("[output]"), std::string::npos)
      << j[0]["snippet"];
}

// The recorded session of every version and model: trimmed (the original archived) and found by
// what its tool output held.
class SearchOnRecorded : public ::testing::TestWithParam<std::string> {};

TEST_P(SearchOnRecorded, TrimmedSessionIsFoundByItsCutOutput) {
  RecordedSession s(20000, GetParam());
  auto t = run_tool("ctx-trim", {s.id}, "", s.env);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.err, "");
  wait_for_indexer(s.state());
  // The detached indexer may take the lock after the wait above saw it free (a loaded machine):
  // ctx-search then answers from what is indexed so far. Ask again until the session is in the
  // index, for at most 30 s.
  json j;
  util::ProcessResult hits;
  for (int i = 0; i < 300; ++i) {
    hits = run_tool("ctx-search", {"output line 500 of", "--json"}, "", s.env);
    ASSERT_EQ(hits.exit_code, 0) << hits.err;
    j = json::parse(hits.out);
    if (!j.empty()) break;
    wait_for_indexer(s.state());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(j.empty()) << hits.out;
  EXPECT_EQ(j[0]["session_id"], s.id);
}

INSTANTIATE_TEST_SUITE_P(EveryVersion, SearchOnRecorded, ::testing::ValuesIn(fixture_sets("basic")),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           return fixture_set_name(p.param);
                         });

TEST(SearchIndexing, SearchSaysWhenTheIndexIsBeingBuiltAndFinishesItOtherwise) {
  RecordedSession s;
  // Archived but never indexed (as after a killed indexer): hold the lock as an indexer would.
  fs::path archived = s.state() / "archive/-proj" / (kSid + ".jsonl");
  fs::create_directories(archived.parent_path());
  fs::copy_file(s.transcript, archived);
  int fd = ::open((s.state() / "archive/.index.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  auto busy = run_tool("ctx-search", {"output line 500 of"}, "", s.env);
  EXPECT_EQ(busy.exit_code, 0) << busy.err;
  EXPECT_TRUE(busy.out.starts_with("The search index is being built: 0 KB of ")) << busy.out;
  EXPECT_NE(busy.out.find(" KB of archived sessions indexed (0%, 1 of 1 sessions pending); results "
                          "come from what is indexed so far.\n"),
            std::string::npos)
      << busy.out;
  ::close(fd);  // the indexer is gone (killed): ctx-search finishes its work before answering
  auto done = run_tool("ctx-search", {"output line 500 of"}, "", s.env);
  EXPECT_EQ(done.exit_code, 0) << done.err;
  EXPECT_EQ(done.out.find("The search index is"), std::string::npos) << done.out;
  EXPECT_NE(done.out.find(kSid + ":"), std::string::npos) << done.out;
}

TEST(SearchIndexing, ACorruptIndexIsQuarantinedAndRebuilt) {
  RecordedSession s;
  ASSERT_EQ(run_tool("ctx-trim", {kSid}, "", s.env).exit_code, 0);
  wait_for_indexer(s.state());
  { std::ofstream(s.state() / "archive/index.db", std::ios::trunc) << std::string(20000, 'z'); }
  fs::remove(s.state() / "archive/index.db-wal");
  fs::remove(s.state() / "archive/index.db-shm");
  auto r = run_tool("ctx-search", {"output line 500 of"}, "", s.env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("was corrupt; moved it to"), std::string::npos) << r.err;
  EXPECT_EQ(line_count(r.err), 1u);
  EXPECT_NE(r.out.find(kSid + ":"), std::string::npos) << r.out;
  bool aside = false;
  for (const auto& e : fs::directory_iterator(s.state() / "archive"))
    aside = aside || e.path().filename().string().starts_with("index.db.corrupt-");
  EXPECT_TRUE(aside);
}

// Both kinds of exclusion, each beside a control that the same words do find.
TEST(SearchIndexing, ExcludedProjectsAndSessionsAreNotFoundWhereOthersAre) {
  TempDir tmp;
  util::Env env = tmp.env();
  env.set("CTXKIT_ARCHIVE_EXCLUDE_PROJECTS", "-secret");
  auto session = [&](const std::string& project, const std::string& sid, const std::string& extra) {
    std::string text;
    for (int i = 0; i < 3; ++i) {
      std::string id = "toolu_" + std::to_string(i);
      text += line(tool_use_line(id));
      text += line(result_line(id, "the marmot report " + extra + std::string(4000, 'x')));
    }
    return tmp.write("home/.claude/projects/" + project + "/" + sid + ".jsonl", text);
  };
  const std::string open_sid = "11111111-1111-4111-8111-111111111111",
                    secret_sid = "22222222-2222-4222-8222-222222222222",
                    marked_sid = "33333333-3333-4333-8333-333333333333";
  for (const auto& [project, sid, extra] :
       {std::tuple{"-open", open_sid, ""}, std::tuple{"-secret", secret_sid, ""},
        std::tuple{"-open", marked_sid, "ctxkit:no-index"}}) {
    auto r = run_tool("ctx-trim", {session(project, sid, extra).string()}, "", env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  fs::path state = tmp / "home/.local/state/ctxkit";
  wait_for_indexer(state);
  EXPECT_TRUE(
      fs::exists(state / "archive/-secret" / (secret_sid + ".jsonl")));  // archived all the same
  auto found = run_tool("ctx-search", {"marmot", "--json"}, "", env);
  ASSERT_EQ(found.exit_code, 0) << found.err;
  std::set<std::string> sessions;
  for (const auto& h : json::parse(found.out)) sessions.insert(h["session_id"].get<std::string>());
  EXPECT_EQ(sessions, std::set<std::string>{open_sid});
}

TEST(SearchIndexing, SinceTakesEveryFormItsHelpPromises) {
  RecordedSession r;
  ASSERT_EQ(run_tool("ctx-trim", {kSid}, "", r.env).exit_code, 0);
  wait_for_indexer(r.state());
  // The session's tool results were written between 12:55:27 and 12:55:29 UTC.
  auto count = [&](const std::string& since) {
    auto s = run_tool("ctx-search", {"output line 500 of", "--json", "--since", since}, "", r.env);
    EXPECT_EQ(s.exit_code, 0) << since << ": " << s.err;
    return s.exit_code == 0 ? json::parse(s.out).size() : size_t{999};
  };
  EXPECT_GT(count("2026-11-21"), 0u);
  EXPECT_GT(count("2026-11-21T12:55"), 0u);
  EXPECT_GT(count("2026-11-21T13:55+01:00"), 0u);
  EXPECT_EQ(count("2026-11-21T12:56"), 0u);
  EXPECT_EQ(count("2026-11-21 12:56:00Z"), 0u);
  auto bad = run_tool("ctx-search", {"x", "--since", "2026-11-21T12:55junk"}, "", r.env);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err,
            "ctx-search: error: --since '2026-11-21T12:55junk' is not a date or time "
            "(YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM])\n");
}

TEST(SearchIndexing, TrimRemovesStaleTemporariesOfAKilledTrim) {
  RecordedSession s;
  fs::path stale =
      s.tmp.write("home/.claude/projects/-proj/." + kSid + ".jsonl.tmp.Ab12Cd", "half a copy");
  fs::path stale_archive =
      s.tmp.write("home/.local/state/ctxkit/archive/-proj/." + kSid + ".jsonl.tmp.Ef34Gh", "half");
  fs::path fresh = s.tmp.write(
      "home/.claude/projects/-proj/.0b7c3a52-1c1e-4d7e-9a55-7a3c2d1e0f00.jsonl.tmp.Zz99Yy",
      "in use");
  timespec times[2] = {{0, UTIME_OMIT}, {::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, stale.c_str(), times, 0), 0);
  ASSERT_EQ(::utimensat(AT_FDCWD, stale_archive.c_str(), times, 0), 0);
  auto r = run_tool("ctx-trim", {kSid}, "", s.env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(stale_archive));
  EXPECT_TRUE(fs::exists(fresh));  // may be another trim's copy being written
  wait_for_indexer(s.state());
}

// The client names a project's folder with one '-' per character of its path (a UTF-16 code
// unit: two for an emoji), not per byte: an exclusion or a --project given as a path with
// non-ASCII characters finds that folder.
TEST(SearchIndexing, ProjectsWithNonAsciiPathsAreExcludedAndFilteredByTheirPath) {
  TempDir tmp;
  struct Project {
    std::string path, folder, sid;
  };
  const std::vector<Project> projects = {
      {"/home/me/caf\xc3\xa9", "-home-me-caf-", "44444444-4444-4444-8444-444444444444"},
      {"/home/me/\xd0\x9f\xd1\x80\xd0\xbe\xd0\xb5\xd0\xba\xd1\x82", "-home-me-------",
       "55555555-5555-4555-8555-555555555555"},
      {"/home/me/app \xf0\x9f\x9a\x80x", "-home-me-app---x",
       "66666666-6666-4666-8666-666666666666"},
      {"/home/me/open", "-home-me-open", "77777777-7777-4777-8777-777777777777"}};
  util::Env env = tmp.env();
  for (const auto& p : projects) {
    fs::path t = tmp.write("home/.claude/projects/" + p.folder + "/" + p.sid + ".jsonl",
                           line(tool_use_line("toolu_1")) +
                               line(result_line("toolu_1", "the ermine report of " + p.sid)));
    json payload{{"session_id", p.sid},
                 {"transcript_path", t.string()},
                 {"cwd", p.path},
                 {"hook_event_name", "SessionEnd"},
                 {"reason", "exit"}};
    auto r = run_tool("ctx-session-hook", {"SessionEnd", "--foreground"}, payload.dump(), env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  auto sessions = [&](const util::Env& e, std::vector<std::string> args) {
    args.insert(args.begin(), {"ermine", "--json"});
    auto r = run_tool("ctx-search", args, "", e);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::set<std::string> out;
    for (const auto& h : json::parse(r.exit_code == 0 ? r.out : "[]"))
      out.insert(h["session_id"].get<std::string>());
    return out;
  };
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(sessions(env, {"--project", projects[i].path}),
              std::set<std::string>{projects[i].sid})
        << projects[i].folder;
    util::Env excluded = env;
    excluded.set("CTXKIT_ARCHIVE_EXCLUDE_PROJECTS", projects[i].path);
    std::set<std::string> others;
    for (size_t k = 0; k < projects.size(); ++k)
      if (k != i) others.insert(projects[k].sid);
    EXPECT_EQ(sessions(excluded, {}), others) << projects[i].folder;
  }
}

}  // namespace
}  // namespace ctxkit::test
