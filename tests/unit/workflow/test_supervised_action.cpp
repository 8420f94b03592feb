#include <gtest/gtest.h>
#include <sys/stat.h>

#include "store/state_store.hpp"
#include "unit/temp_dir.hpp"
#include "workflow/supervised_action.hpp"

namespace ctxkit::workflow {
namespace {
namespace fs = std::filesystem;

core::Config config_in(const test::TempDir& tmp) {
  core::Config cfg;
  cfg.state.dir = (tmp / "state").string();
  return cfg;
}

WorkflowEvent handed_out(const std::string& action, const std::string& focus = "") {
  WorkflowEvent e;
  e.kind = "handed_out";
  e.action = action;
  e.focus = focus;
  return e;
}

// A client in session s-1 under the supervisor `token`.
struct Supervised {
  test::TempDir tmp;
  util::Env env = tmp.env();
  core::Config cfg = config_in(tmp);
  std::string token;

  explicit Supervised(std::string supervisor) : token(std::move(supervisor)) {
    env.set("CTXKIT_SUPERVISOR", token);
    env.set("CLAUDE_CODE_SESSION_ID", "s-1");
  }
  Result<void> hand_out(const std::string& action, const std::string& focus = "") {
    return request_supervised_action(cfg, env, tmp.path(), handed_out(action, focus));
  }
  // The action waiting for the supervisor, as its state database holds it.
  Result<std::optional<store::PendingRollover>> pending() {
    auto store = store::StateStore::open(cfg.locations(env).state_db(), 1000);
    if (!store) return std::unexpected(store.error());
    return store->pending_rollover(token);
  }
};

TEST(SupervisedAction, OnlyASupervisedClientHandsAnActionOver) {
  test::TempDir tmp;
  util::Env env = tmp.env();
  EXPECT_FALSE(under_supervisor(env));
  auto r = request_supervised_action(config_in(tmp), env, tmp.path(), handed_out("compact"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "not under a supervisor");
  EXPECT_FALSE(fs::exists(tmp / "state"));
  env.set("CTXKIT_SUPERVISOR", "tok");
  EXPECT_TRUE(under_supervisor(env));
  r = request_supervised_action(config_in(tmp), env, tmp.path(), handed_out("squash"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "unknown context action 'squash'");
}

// A compaction acts on the session it was handed out in, with its focus; its prompt is a private
// file the supervisor gives the compacted session.
TEST(SupervisedAction, ACompactionIsRecordedForTheSupervisorWithItsFocusAndPrompt) {
  Supervised c("tok-7");
  ASSERT_TRUE(c.hand_out("compact", "the parser"));
  const auto p = c.pending();
  ASSERT_TRUE(p) << p.error().message;
  ASSERT_TRUE(*p);
  const auto& pending = **p;
  EXPECT_EQ(pending.action, "compact");
  EXPECT_EQ(pending.focus, "the parser");
  EXPECT_EQ(pending.session_id, "s-1");
  EXPECT_EQ(pending.new_session_id, "s-1");
  EXPECT_EQ(pending.cwd, c.tmp.path().string());
  EXPECT_FALSE(pending.ready);
  struct stat st {};
  ASSERT_EQ(::stat(pending.prompt_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(test::read_file(pending.prompt_path).find("workflow_status"), std::string::npos);
}

// A second action handed to the same supervisor takes the place of the first, and so does its
// prompt file: the first one's goes.
TEST(SupervisedAction, AnActionThatReplacesAnotherTakesItsPromptFileAway) {
  Supervised c("tok-8");
  ASSERT_TRUE(c.hand_out("compact", "one"));
  ASSERT_TRUE(c.hand_out("clear"));
  const auto p = c.pending();
  ASSERT_TRUE(p) << p.error().message;
  ASSERT_TRUE(*p);
  EXPECT_EQ((*p)->action, "clear");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(c.cfg.locations(c.env).rollovers_dir()))
    files.push_back(e.path().string());
  EXPECT_EQ(files, std::vector<std::string>{(*p)->prompt_path});
}

// A clear starts a new session: it gets an id of its own.
TEST(SupervisedAction, AClearNamesANewSession) {
  Supervised c("tok-8");
  ASSERT_TRUE(c.hand_out("clear"));
  const auto p = c.pending();
  ASSERT_TRUE(p) << p.error().message;
  ASSERT_TRUE(*p);
  EXPECT_EQ((*p)->action, "clear");
  EXPECT_EQ((*p)->session_id, "s-1");
  EXPECT_FALSE((*p)->new_session_id.empty());
  EXPECT_NE((*p)->new_session_id, "s-1");
}

}  // namespace
}  // namespace ctxkit::workflow
