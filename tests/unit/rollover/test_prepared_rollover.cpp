#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/config.hpp"
#include "rollover/prepared_rollover.hpp"
#include "store/state_access.hpp"
#include "store/state_store.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::rollover {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kParent = "11111111-1111-4111-8111-111111111111";

struct Fixture {
  test::TempDir tmp;
  util::Env env = tmp.env();
  core::Config cfg;
  fs::path transcript, summary, project;
  RolloverRequest request;

  Fixture() {
    project = tmp / "app";
    fs::create_directories(project);
    env.set("CLAUDE_PROJECT_DIR", project.string());
    env.set("CLAUDECODE", "1");
    std::string lines;
    for (int i = 0; i < 3; ++i)
      lines += json({{"type", "user"},
                     {"sessionId", kParent},
                     {"cwd", project.string()},
                     {"timestamp", "2026-01-02T03:04:05.000Z"},
                     {"message", {{"role", "user"}, {"content", "step " + std::to_string(i)}}}})
                   .dump() +
               "\n";
    transcript = tmp.write("home/.claude/projects/-app/" + std::string(kParent) + ".jsonl", lines);
    summary = tmp.write("summary.md", "### Current Task\nWire the flux-capacitor.\n");
    request.summary_file = summary;
    request.session = transcript.string();
    request.retrieval = [](const std::string& cwd, const std::string& parent) {
      return "search " + parent + " from " + cwd;
    };
  }
  std::optional<store::StateStore> store() {
    std::string note;
    auto s = store::open_state(cfg.locations(env), cfg, note);
    EXPECT_TRUE(s) << note;
    return s;
  }
};

TEST(PreparedRollover, InsideClaudeCodeArchivesWritesThePromptAndRecordsTheLineage) {
  Fixture f;
  auto r = prepare_rollover(f.request, f.cfg, f.env);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->inside);
  EXPECT_FALSE(r->supervised);
  EXPECT_EQ(r->parent_session_id, kParent);
  EXPECT_EQ(r->number, 2);
  EXPECT_EQ(r->cwd, f.project.string());
  // The archive holds the session as it is.
  EXPECT_EQ(test::read_file(r->archive.transcript), test::read_file(f.transcript));
  // The prompt (private) carries the summary and the retrieval text made for this session.
  struct stat st {};
  ASSERT_EQ(::stat(r->prompt_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string prompt = test::read_file(r->prompt_file);
  EXPECT_NE(prompt.find("Wire the flux-capacitor."), std::string::npos);
  EXPECT_NE(prompt.find("search " + std::string(kParent) + " from " + f.project.string()),
            std::string::npos);
  // The new session starts with that prompt as its last argument, under the new id.
  ASSERT_GE(r->launch.argv.size(), 3u);
  EXPECT_EQ(r->launch.argv.front(), "claude");
  EXPECT_EQ(r->launch.argv.back(), prompt);
  // Plain paths need no quotes.
  EXPECT_EQ(start_command(*r), "cd " + f.project.string() + " && claude --session-id " +
                                   r->new_session_id + " \"$(cat " + r->prompt_file.string() +
                                   ")\"");
  auto store = f.store();
  ASSERT_TRUE(store);
  auto child = store->session(r->new_session_id);
  ASSERT_TRUE(child && *child);
  EXPECT_EQ((*child)->parent_id, kParent);
  EXPECT_EQ((*child)->summary, "### Current Task\nWire the flux-capacitor.");
}

TEST(PreparedRollover, UnderASupervisorTheHandOverIsQueuedForIt) {
  Fixture f;
  f.env.set("CTXKIT_SUPERVISOR", "token-1");
  auto r = prepare_rollover(f.request, f.cfg, f.env);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->supervised);
  auto store = f.store();
  ASSERT_TRUE(store);
  auto pending = store->pending_rollover("token-1");
  ASSERT_TRUE(pending && *pending);
  EXPECT_EQ((*pending)->session_id, kParent);
  EXPECT_EQ((*pending)->new_session_id, r->new_session_id);
  EXPECT_EQ((*pending)->prompt_path, r->prompt_file.string());
  EXPECT_FALSE((*pending)->ready);

  // Prepared again before the supervisor carried it out: the new hand-over replaces it, and the
  // replaced one's prompt file goes.
  auto again = prepare_rollover(f.request, f.cfg, f.env);
  ASSERT_TRUE(again) << again.error().message;
  pending = store->pending_rollover("token-1");
  ASSERT_TRUE(pending && *pending);
  EXPECT_EQ((*pending)->prompt_path, again->prompt_file.string());
  EXPECT_TRUE(fs::exists(again->prompt_file));
  EXPECT_FALSE(fs::exists(r->prompt_file));
}

TEST(PreparedRollover, ASecondRolloverIsTheThirdSession) {
  Fixture f;
  auto first = prepare_rollover(f.request, f.cfg, f.env);
  ASSERT_TRUE(first) << first.error().message;
  // The new session's transcript, as the client would write it.
  const fs::path next = f.transcript.parent_path() / (first->new_session_id + ".jsonl");
  std::ofstream(next) << json({{"type", "user"},
                               {"sessionId", first->new_session_id},
                               {"cwd", f.project.string()},
                               {"message", {{"role", "user"}, {"content", "go on"}}}})
                             .dump()
                      << "\n";
  f.request.session = next.string();
  auto second = prepare_rollover(f.request, f.cfg, f.env);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->number, 3);
  EXPECT_EQ(second->parent_session_id, first->new_session_id);
}

TEST(PreparedRollover, AnEmptySummaryIsRefusedAndNothingIsArchived) {
  Fixture f;
  f.tmp.write("summary.md", "  \n");
  auto r = prepare_rollover(f.request, f.cfg, f.env);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "summary file " + f.summary.string() + " is empty");
  EXPECT_FALSE(fs::exists(f.cfg.locations(f.env).archive_dir()));
  EXPECT_FALSE(fs::exists(f.cfg.locations(f.env).state_db()));
}

TEST(PreparedRollover, OutsideClaudeCodeAMissingClientIsRefusedBeforeAnythingIsArchived) {
  Fixture f;
  f.env = f.tmp.env();
  f.env.set("CLAUDE_PROJECT_DIR", f.project.string());
  f.env.set("PATH", (f.tmp / "empty-bin").string());
  f.request.claude_bin = "no-such-claude";
  auto r = prepare_rollover(f.request, f.cfg, f.env);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no-such-claude"), std::string::npos) << r.error().message;
  EXPECT_FALSE(fs::exists(f.cfg.locations(f.env).archive_dir()));
}

}  // namespace
}  // namespace ctxkit::rollover
