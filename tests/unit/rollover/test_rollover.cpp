#include <gtest/gtest.h>

#include "rollover/rollover.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit {
namespace {

TEST(Rollover, ContinuationPromptCarriesEverything) {
  ContinuationInfo info;
  info.number = 3;
  info.previous_percent = 78;
  info.summary = "### Current Task\nWire the flux-capacitor.";
  info.parent_session_id = "aaaa-1";
  info.parent_transcript = "/h/.claude/projects/-p/aaaa-1.jsonl";
  info.archive = "/s/archive/-p/aaaa-1.jsonl";
  info.search_command = "/opt/bin/ctx-search";
  auto text = render_continuation(continuation_template(std::nullopt), info);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_TRUE(text->starts_with("## Session Continuation\n\nThis is session #3 in this line of work. The previous session rolled over at 78% context"));
  EXPECT_NE(text->find("### Handoff Summary\n\n### Current Task\nWire the flux-capacitor."), std::string::npos);
  EXPECT_NE(text->find("    /opt/bin/ctx-search \"what you need to find\""), std::string::npos);
  EXPECT_NE(text->find("/opt/bin/ctx-search --show SESSION:LINE"), std::string::npos);
  EXPECT_NE(text->find("Parent session: aaaa-1\nParent transcript: /h/.claude/projects/-p/aaaa-1.jsonl"), std::string::npos);
  EXPECT_NE(text->find("Archived copy: /s/archive/-p/aaaa-1.jsonl"), std::string::npos);
}

TEST(Rollover, InstalledTemplateOverridesTheBuiltInOne) {
  test::TempDir tmp;
  tmp.write("share/ctxkit/prompts/continuation.md", "Session {number}: {summary}");
  ContinuationInfo info;
  info.summary = "S";
  EXPECT_EQ(*render_continuation(continuation_template(tmp / "bin"), info), "Session 2: S");
}

TEST(Rollover, BrokenTemplateIsAnError) {
  ContinuationInfo info;
  auto r = render_continuation("Session {nmber}", info);
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().message.starts_with("continuation template: ")) << r.error().message;
}

TEST(Rollover, SummaryChecks) {
  test::TempDir tmp;
  EXPECT_EQ(read_summary(tmp / "nope.md").error().message, "summary file " + (tmp / "nope.md").string() + " does not exist");
  auto blank = tmp.write("blank.md", "  \n\t\n");
  EXPECT_EQ(read_summary(blank).error().message, "summary file " + blank.string() + " is empty");
  auto ok = tmp.write("ok.md", "\n### Task\nDo the thing now.\n\n");
  auto s = read_summary(ok);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text, "### Task\nDo the thing now.");
  EXPECT_EQ(s->words, 6u);
  EXPECT_FALSE(s->too_long());
  std::string many;
  for (int i = 0; i < 600; ++i) many += "word ";
  EXPECT_TRUE(read_summary(tmp.write("long.md", many))->too_long());
}

TEST(Rollover, LaunchAndRelaunchArguments) {
  EXPECT_EQ(launch_argv("/b/claude", {"--model", "opus"}, true, "ID", "P"),
            (std::vector<std::string>{"/b/claude", "--model", "opus", "-p", "--session-id", "ID", "P"}));
  EXPECT_EQ(relaunch_args({"claude", "--resume", "X", "--model", "opus", "hello there"}),
            (std::vector<std::string>{"claude", "--model", "opus"}));
  EXPECT_EQ(relaunch_args({"claude", "-c", "--dangerously-skip-permissions", "--session-id=Q"}),
            (std::vector<std::string>{"claude", "--dangerously-skip-permissions"}));
  EXPECT_EQ(relaunch_args({"claude", "--model", "opus"}), (std::vector<std::string>{"claude", "--model", "opus"}));
}

TEST(Rollover, FindProgramInPath) {
  test::TempDir tmp;
  util::Env env;
  env.set("PATH", "/nonexistent:/bin:/usr/bin");
  EXPECT_TRUE(find_program("sh", env));
  auto missing = find_program("no-such-claude", env);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "no-such-claude not found in PATH (set rollover.claude_bin or pass --claude-bin)");
}

}  // namespace
}  // namespace ctxkit
