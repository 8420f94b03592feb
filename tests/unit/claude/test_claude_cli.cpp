#include <gtest/gtest.h>

#include "claude/claude_cli.hpp"

namespace ctxkit::claude {
namespace {
using Argv = std::vector<std::string>;

TEST(ClaudeCli, LaunchArgv) {
  EXPECT_EQ(launch_argv("/b/claude", {"--model", "opus"}, true, "ID", "P"),
            (Argv{"/b/claude", "--model", "opus", "-p", "--session-id", "ID", "P"}));
  EXPECT_EQ(launch_argv("claude", {}, false, "ID", "P"),
            (Argv{"claude", "--session-id", "ID", "P"}));
}

TEST(ClaudeCli, RelaunchDropsWhatPicksASessionAndTheTrailingPrompt) {
  EXPECT_EQ(relaunch_args({"claude", "--resume", "X", "--model", "opus", "hello there"}),
            (Argv{"claude", "--model", "opus"}));
  EXPECT_EQ(relaunch_args({"claude", "-c", "--dangerously-skip-permissions", "--session-id=Q"}),
            (Argv{"claude", "--dangerously-skip-permissions"}));
  EXPECT_EQ(relaunch_args({"claude", "--model", "opus"}), (Argv{"claude", "--model", "opus"}));
  EXPECT_EQ(relaunch_args({"claude", "-r", "X", "--fork-session", "--resume=Y"}), (Argv{"claude"}));
  EXPECT_EQ(relaunch_argv({"claude", "--model", "opus", "old prompt"}, "NEW", "P"),
            (Argv{"claude", "--model", "opus", "--session-id", "NEW", "P"}));
}

TEST(ClaudeCli, CompactArgvRunsTheSlashCommandHeadless) {
  EXPECT_EQ(compact_argv("claude", {}, "S", "keep the test plan"),
            (Argv{"claude", "-p", "--resume", "S", "/compact keep the test plan"}));
  EXPECT_EQ(compact_argv("/b/claude", {"--model", "opus"}, "S", ""),
            (Argv{"/b/claude", "--model", "opus", "-p", "--resume", "S", "/compact"}));
}

}  // namespace
}  // namespace ctxkit::claude
