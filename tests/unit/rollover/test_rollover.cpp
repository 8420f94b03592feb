#include <fmt/core.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "rollover/rollover.hpp"
#include "unit/temp_dir.hpp"
#include "util/process.hpp"

namespace ctxkit::rollover {
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
  EXPECT_TRUE(
      text->starts_with("## Session Continuation\n\nThis is session #3 in this line of work. The "
                        "previous session rolled over at 78% context"));
  EXPECT_NE(text->find("### Handoff Summary\n\n### Current Task\nWire the flux-capacitor."),
            std::string::npos);
  EXPECT_NE(text->find("    /opt/bin/ctx-search \"what you need to find\""), std::string::npos);
  EXPECT_NE(text->find("/opt/bin/ctx-search --show SESSION:LINE"), std::string::npos);
  EXPECT_NE(
      text->find("Parent session: aaaa-1\nParent transcript: /h/.claude/projects/-p/aaaa-1.jsonl"),
      std::string::npos);
  EXPECT_NE(text->find("Archived copy: /s/archive/-p/aaaa-1.jsonl"), std::string::npos);
}

TEST(Rollover, ContinuationPromptNamesTheSearchToolWhenTheSessionHasIt) {
  ContinuationInfo info;
  info.parent_session_id = "aaaa-1";
  info.search_command = "/opt/bin/ctx-search";
  info.retrieval = "Search with archive_search (session \"aaaa-1\").";
  auto text = render_continuation(continuation_template(std::nullopt), info);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_NE(
      text->find("### Retrieving Details\n\nSearch with archive_search (session \"aaaa-1\").\n"),
      std::string::npos)
      << *text;
  EXPECT_EQ(text->find("/opt/bin/ctx-search"), std::string::npos) << *text;
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
  EXPECT_EQ(read_summary(tmp / "nope.md").error().message,
            "summary file " + (tmp / "nope.md").string() + " does not exist");
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

TEST(Rollover, SummaryWithANulByteIsRefused) {
  test::TempDir tmp;
  // Everything after the NUL would silently be missing from the new session's prompt.
  auto p = tmp.write("nul.md", std::string("### Task\nfirst half\0second half\n", 33));
  auto s = read_summary(p);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message,
            "summary file " + p.string() + " contains a NUL byte (it must be text)");
}

TEST(Rollover, PromptMustFitInOneProgramArgument) {
  EXPECT_EQ(util::max_argument_bytes(), 32 * static_cast<size_t>(::sysconf(_SC_PAGESIZE)) - 1);
  EXPECT_TRUE(check_prompt_fits(std::string(util::max_argument_bytes(), 'x'), "/s.md"));
  auto over = check_prompt_fits(std::string(util::max_argument_bytes() + 1, 'x'), "/s.md");
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().message,
            fmt::format("the continuation prompt would be {} bytes, over the {} bytes one program "
                        "argument can hold: "
                        "shorten the summary /s.md",
                        util::max_argument_bytes() + 1, util::max_argument_bytes()));
  EXPECT_FALSE(check_prompt_fits(std::string("a\0b", 3), "/s.md"));
}

TEST(Rollover, FindProgramInPath) {
  test::TempDir tmp;
  util::Env env;
  env.set("PATH", "/nonexistent:/bin:/usr/bin");
  EXPECT_TRUE(find_program("sh", env));
  auto missing = find_program("no-such-claude", env);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message,
            "no-such-claude not found in PATH (set rollover.claude_bin or pass --claude-bin)");
  EXPECT_EQ(find_program("/nonexistent/claude", env).error().message,
            "/nonexistent/claude not found or not executable");
  EXPECT_EQ(find_program("", env).error().message,
            "no program to start (rollover.claude_bin is empty)");
}

}  // namespace
}  // namespace ctxkit::rollover
