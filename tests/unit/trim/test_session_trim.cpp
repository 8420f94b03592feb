#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/config.hpp"
#include "store/state_access.hpp"
#include "store/state_store.hpp"
#include "trim/session_trim.hpp"
#include "unit/temp_dir.hpp"
#include "unit/trim/bash_session.hpp"

namespace ctxkit::trim {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kParent = "11111111-1111-4111-8111-111111111111";
constexpr const char* kChild = "22222222-2222-4222-8222-222222222222";

// A session of `results` Bash calls, each answered by 6,000 characters.
std::string session_lines(int results) {
  return test::bash_session_lines(
      results, kParent, {{"cwd", "/home/me/app"}, {"timestamp", "2026-01-02T03:04:05.000Z"}});
}

struct Fixture {
  test::TempDir tmp;
  util::Env env = tmp.env();
  core::Config cfg;
  fs::path transcript;
  int background_calls = 0;
  SessionTrimRequest request;

  explicit Fixture(int results = 4) {
    env.set("CLAUDE_PROJECT_DIR", tmp.path().string());
    transcript = tmp.write("home/.claude/projects/-work-app/" + std::string(kParent) + ".jsonl",
                           session_lines(results));
    request.session = transcript.string();
    request.tools = std::set<std::string>{"Bash"};
    request.threshold = 500;
    request.new_session_id = kChild;
    request.trimmed_at = "2026-01-02T04:00:00.000Z";
    request.tool_version = "ctxkit test";
    request.in_background = [this](const std::function<void()>&) { ++background_calls; };
  }
};

TEST(SessionTrim, WritesTheCopyArchivesTheOriginalAndRecordsTheLineage) {
  Fixture f;
  const std::string original = test::read_file(f.transcript);
  auto t = trim_and_record(f.request, f.cfg, f.env);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->parent_id, kParent);
  EXPECT_EQ(t->project, "-work-app");
  EXPECT_EQ(t->new_session_id, kChild);
  ASSERT_TRUE(t->outcome.written);
  EXPECT_EQ(t->outcome.output, f.transcript.parent_path() / (std::string(kChild) + ".jsonl"));
  EXPECT_EQ(t->outcome.stats.results_trimmed, 4u);
  EXPECT_EQ(t->outcome.snapshot_bytes, original.size());
  EXPECT_EQ(t->outcome.output_bytes, fs::file_size(t->outcome.output));
  EXPECT_LT(t->outcome.output_bytes, original.size());
  // The original is untouched; its archived copy is byte for byte the same, under the state folder.
  EXPECT_EQ(test::read_file(f.transcript), original);
  const core::Locations loc = f.cfg.locations(f.env);
  EXPECT_EQ(t->archive.transcript,
            loc.archive_dir() / "-work-app" / (std::string(kParent) + ".jsonl"));
  EXPECT_EQ(test::read_file(t->archive.transcript), original);
  // The new session's first line names both.
  const std::string copy = test::read_file(t->outcome.output);
  const json meta = json::parse(copy.substr(0, copy.find('\n')))["trim_metadata"];
  EXPECT_EQ(meta["parent_session_id"], kParent);
  EXPECT_EQ(meta["archive_file"], t->archive.transcript.string());
  EXPECT_EQ(meta["tool"], "ctxkit test");
  // The derivation is in the state database, and the indexing was handed on once.
  EXPECT_TRUE(t->warning.empty()) << t->warning;
  std::string note;
  auto store = store::open_state(loc, f.cfg, note);
  ASSERT_TRUE(store) << note;
  auto child = store->session(kChild);
  ASSERT_TRUE(child && *child);
  EXPECT_EQ((*child)->parent_id, kParent);
  EXPECT_EQ(f.background_calls, 1);
  EXPECT_TRUE(t->indexing_started);
  EXPECT_EQ(resume_command(t->outcome.cwd, t->new_session_id),
            std::string("cd /home/me/app && claude --resume ") + kChild);
}

TEST(SessionTrim, DryRunWritesNothingAndIndexesNothing) {
  Fixture f;
  f.request.dry_run = true;
  auto t = trim_and_record(f.request, f.cfg, f.env);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_FALSE(t->outcome.written);
  EXPECT_EQ(t->outcome.stats.results_trimmed, 4u);
  EXPECT_FALSE(fs::exists(t->archive.transcript));
  EXPECT_FALSE(fs::exists(f.transcript.parent_path() / (std::string(kChild) + ".jsonl")));
  EXPECT_FALSE(fs::exists(f.cfg.locations(f.env).state_db()));
  EXPECT_EQ(f.background_calls, 0);
  EXPECT_FALSE(t->indexing_started);
}

TEST(SessionTrim, TooLittleToSaveArchivesButWritesNoSessionAndRecordsNoLineage) {
  Fixture f(0);
  f.transcript = f.tmp.write(
      "home/.claude/projects/-work-app/" + std::string(kParent) + ".jsonl",
      json({{"type", "user"}, {"sessionId", kParent}, {"message", {{"content", "hi"}}}}).dump() +
          "\n");
  auto t = trim_and_record(f.request, f.cfg, f.env);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_FALSE(t->outcome.written);
  EXPECT_EQ(t->outcome.output_bytes, 0u);
  EXPECT_TRUE(fs::exists(t->archive.transcript));
  std::string note;
  auto store = store::open_state(f.cfg.locations(f.env), f.cfg, note);
  ASSERT_TRUE(store) << note;
  auto child = store->session(kChild);
  ASSERT_TRUE(child);
  EXPECT_FALSE(child->has_value());
}

TEST(SessionTrim, AnExcludedProjectIsArchivedButNotIndexed) {
  Fixture f;
  f.cfg.archive.exclude_projects = {"-work-app"};
  auto t = trim_and_record(f.request, f.cfg, f.env);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_TRUE(t->outcome.written);
  EXPECT_TRUE(fs::exists(t->archive.transcript));
  EXPECT_EQ(f.background_calls, 0);
  EXPECT_FALSE(t->indexing_started);
}

TEST(SessionTrim, AToolNeitherKnownNorUsedIsRefusedBeforeAnythingIsWritten) {
  Fixture f;
  f.request.tools = std::set<std::string>{"Bash", "Frobnicate"};
  auto t = trim_and_record(f.request, f.cfg, f.env);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message,
            "unknown tool 'Frobnicate' (not a Claude Code tool and not used in this session)");
  EXPECT_FALSE(fs::exists(
      archive::archive_location(f.cfg.locations(f.env), "-work-app", kParent).transcript));
  EXPECT_EQ(f.background_calls, 0);
}

TEST(SessionTrim, ToolsAndThresholdDefaultToTheConfiguration) {
  Fixture f;
  f.request.tools.reset();
  f.request.threshold.reset();
  f.cfg.context.trim_target_tools = {"Read"};
  f.cfg.context.trim_threshold_chars = 1234;
  f.request.dry_run = true;
  auto t = trim_and_record(f.request, f.cfg, f.env);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->tools, std::set<std::string>{"Read"});
  EXPECT_EQ(t->threshold, 1234u);
  EXPECT_EQ(t->outcome.stats.results_trimmed, 0u);  // Bash is no target now
}

TEST(SessionTrim, AMissingSessionIsAnError) {
  Fixture f;
  f.request.session = (f.tmp / "nowhere.jsonl").string();
  auto t = trim_and_record(f.request, f.cfg, f.env);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("nowhere.jsonl"), std::string::npos) << t.error().message;
}

}  // namespace
}  // namespace ctxkit::trim
