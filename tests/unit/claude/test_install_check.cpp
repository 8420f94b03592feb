#include <gtest/gtest.h>

#include "claude/install_check.hpp"

namespace ctxkit::claude {
namespace {
using json = nlohmann::json;
using Words = std::vector<std::string>;

json settings_from_plan(const std::string& bin) {
  nlohmann::ordered_json s;
  SettingsReport report;
  merge_settings(s, default_plan(bin), report);
  return json::parse(s.dump());
}

TEST(InstallCheck, EveryHookOfAFreshInstallIsFoundOnce) {
  auto cov = match_hooks(command_hooks(settings_from_plan("/opt/ctx kit/bin")), "/home/u");
  ASSERT_EQ(cov.size(), default_plan("/x").hooks.size());
  for (const auto& c : cov) {
    ASSERT_EQ(c.found.size(), 1u) << c.expected.event << " " << c.program;
    EXPECT_EQ(c.found[0].front(), "/opt/ctx kit/bin/" + c.program);
  }
  EXPECT_EQ(cov.back().program, "ctx-gate");
  EXPECT_EQ(cov.back().found[0], (Words{"/opt/ctx kit/bin/ctx-gate", "--hook"}));
}

TEST(InstallCheck, AMissingWrongMatcherOrDuplicateHookIsSeen) {
  json s = settings_from_plan("/b");
  s["hooks"]["Stop"] = json::array();                               // gone
  s["hooks"]["PostToolUse"][0]["matcher"] = "Bash";                 // wrong matcher
  s["hooks"]["SessionEnd"].push_back(s["hooks"]["SessionEnd"][0]);  // twice
  s["hooks"]["SessionEnd"][1]["hooks"][0]["command"] = "$HOME/.local/bin/ctx-session-hook";
  auto cov = match_hooks(command_hooks(s), "/home/u");
  auto of = [&](const std::string& event, const std::string& program) {
    for (const auto& c : cov)
      if (c.expected.event == event && c.program == program) return c.found;
    return std::vector<Words>{{"?"}};
  };
  EXPECT_TRUE(of("Stop", "ctx-session-hook").empty());
  EXPECT_TRUE(of("PostToolUse", "ctx-remind").empty());
  EXPECT_EQ(of("SessionEnd", "ctx-session-hook"),
            (std::vector<Words>{{"/b/ctx-session-hook"}, {"/home/u/.local/bin/ctx-session-hook"}}));
  EXPECT_EQ(of("SessionStart", "ctx-session-hook").size(), 1u);
}

TEST(InstallCheck, CommandWordsExpandHomeAndThePluginRootOnly) {
  EXPECT_EQ(command_words("$HOME/.local/bin/ctx-remind", "/h"),
            (Words{"/h/.local/bin/ctx-remind"}));
  EXPECT_EQ(command_words("${HOME}/x y", "/h w"), (Words{"/h w/x", "y"}));
  EXPECT_EQ(command_words("~/x", "/h"), (Words{"/h/x"}));
  EXPECT_EQ(command_words("\"${CLAUDE_PLUGIN_ROOT}/bin/ctx-gate\" --hook", "/h", "/p r"),
            (Words{"/p r/bin/ctx-gate", "--hook"}));
  EXPECT_FALSE(command_words("$OTHER/x", "/h"));
  EXPECT_FALSE(command_words("ctx-remind | tee log", "/h"));
}

TEST(InstallCheck, SettingsAndPluginInstallsAreTold) {
  EXPECT_TRUE(runs_ctxkit(command_hooks(settings_from_plan("/b")), "/h"));
  json other = {
      {"hooks", {{"PostToolUse", {{{"hooks", {{{"type", "command"}, {"command", "my-hook"}}}}}}}}}};
  EXPECT_FALSE(runs_ctxkit(command_hooks(other), "/h"));
  json s = {{"enabledPlugins",
             {{"ctxkit@local", true},
              {"ctxkit@old", false},
              {"other@local", true},
              {"ctxkit-probe@m", true}}}};
  EXPECT_EQ(enabled_ctxkit_plugins(s), (Words{"ctxkit@local"}));
  json installed = {
      {"version", 2},
      {"plugins", {{"ctxkit@local", {{{"scope", "user"}, {"installPath", "/c/ctxkit/0.1.0"}}}}}}};
  EXPECT_EQ(plugin_install_paths(installed, "ctxkit@local"), (Words{"/c/ctxkit/0.1.0"}));
  EXPECT_TRUE(plugin_install_paths(installed, "ctxkit@other").empty());
}

TEST(InstallCheck, McpServersAreFoundByTheirProgram) {
  json doc = {{"mcpServers",
               {{"mine", {{"command", "/usr/bin/python3"}, {"args", {"x.py"}}}},
                {"ctxkit-workflow",
                 {{"type", "stdio"}, {"command", "/b/ctx-workflow-mcp"}, {"args", json::array()}}},
                {"plugin",
                 {{"command", "${CLAUDE_PLUGIN_ROOT}/bin/ctx-workflow-mcp"}, {"args", {"--v"}}}}}}};
  auto found = find_mcp_servers(doc, "ctx-workflow-mcp", "/h", "/p");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].name, "ctxkit-workflow");
  EXPECT_EQ(found[0].argv, (Words{"/b/ctx-workflow-mcp"}));
  EXPECT_EQ(found[1].argv, (Words{"/p/bin/ctx-workflow-mcp", "--v"}));
  EXPECT_TRUE(find_mcp_servers(json::object(), "ctx-workflow-mcp", "/h").empty());
}

TEST(InstallCheck, ClaudeVersions) {
  EXPECT_EQ(claude_version_of("2.1.197 (Claude Code)\n"), "2.1.197");
  EXPECT_EQ(claude_version_of("claude 2"), "");
  EXPECT_EQ(compare_versions("2.1.197", "2.1.197"), 0);
  EXPECT_EQ(compare_versions("2.1.200", "2.1.197"), 1);
  EXPECT_EQ(compare_versions("2.10.0", "2.9.9"), 1);
  EXPECT_EQ(compare_versions("2.1", "2.1.0"), 0);
  EXPECT_EQ(compare_versions("1.9.500", "2.1.197"), -1);
}

}  // namespace
}  // namespace ctxkit::claude
