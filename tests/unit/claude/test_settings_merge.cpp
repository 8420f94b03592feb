#include <gtest/gtest.h>

#include <algorithm>

#include "claude/settings_merge.hpp"

namespace ctxkit::claude {
namespace {
using ojson = nlohmann::ordered_json;

TEST(SettingsMerge, AddsHookAndStatusLineKeepingUserEntries) {
  ojson s = ojson::parse(
      R"({"model":"opus","hooks":{"PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"mine"}]}]},"env":{"A":"1"}})");
  SettingsReport r;
  ASSERT_EQ(merge_settings(s, default_plan("/opt/ctx/bin/"), r), "");
  EXPECT_TRUE(r.changed);
  ASSERT_EQ(s["hooks"]["PostToolUse"].size(), 3u);
  EXPECT_EQ(s["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "mine");
  EXPECT_EQ(s["hooks"]["PostToolUse"][2]["matcher"], "Bash|mcp__.*");
  EXPECT_EQ(s["hooks"]["PostToolUse"][2]["hooks"][0]["command"], "/opt/ctx/bin/ctx-cap");
  EXPECT_EQ(s["hooks"]["PostToolUse"][1]["matcher"], "*");
  EXPECT_EQ(s["hooks"]["PostToolUse"][1]["hooks"][0]["command"], "/opt/ctx/bin/ctx-remind");
  EXPECT_EQ(s["hooks"]["PostToolUse"][1]["hooks"][0]["timeout"], 10);
  EXPECT_EQ(s["statusLine"]["command"], "/opt/ctx/bin/ctx-status");
  // Key order of the user's file survives.
  EXPECT_EQ(s.begin().key(), "model");
  EXPECT_EQ(r.created, (std::vector<std::string>{"hooks.SessionStart", "hooks.Stop",
                                                 "hooks.PreCompact", "hooks.SessionEnd",
                                                 "hooks.PostCompact", "hooks.UserPromptSubmit"}));
}

TEST(SettingsMerge, RunningTwiceRegistersOnce) {
  ojson s = ojson::object();
  SettingsReport r1, r2;
  merge_settings(s, default_plan("/b"), r1);
  ojson once = s;
  merge_settings(s, default_plan("/b"), r2);
  EXPECT_FALSE(r2.changed);
  EXPECT_EQ(s, once);
  EXPECT_EQ(r1.created,
            (std::vector<std::string>{"hooks", "hooks.PostToolUse", "hooks.SessionStart",
                                      "hooks.Stop", "hooks.PreCompact", "hooks.SessionEnd",
                                      "hooks.PostCompact", "hooks.UserPromptSubmit"}));
  EXPECT_EQ(s["hooks"]["SessionEnd"][0]["hooks"][0]["command"], "/b/ctx-session-hook");
  EXPECT_FALSE(s["hooks"]["SessionEnd"][0].contains("matcher"));
  // The workflow gate answers only after /clear and /compact (its output is replayed on resume).
  ASSERT_EQ(s["hooks"]["SessionStart"].size(), 2u);
  EXPECT_EQ(s["hooks"]["SessionStart"][1]["matcher"], "clear|compact");
  EXPECT_EQ(s["hooks"]["SessionStart"][1]["hooks"][0]["command"], "/b/ctx-gate --hook");
}

TEST(SettingsMerge, AFileTheClientWouldRejectIsRefusedUnchanged) {
  for (const char* text :
       {R"({"hooks":{"PostToolUse":[7]}})", R"({"hooks":{"Stop":{}}})", R"({"statusLine":3})"}) {
    ojson s = ojson::parse(text), before = s;
    SettingsReport r;
    EXPECT_NE(merge_settings(s, default_plan("/b"), r), "") << text;
    EXPECT_EQ(s, before) << text;
  }
}

TEST(SettingsMerge, UsersOwnStatusLineIsKept) {
  ojson s = ojson::parse(R"({"statusLine":{"type":"command","command":"my-line"}})");
  SettingsReport r;
  merge_settings(s, default_plan("/b"), r);
  EXPECT_EQ(s["statusLine"]["command"], "my-line");
  EXPECT_EQ(r.kept_status_command, "my-line");
  EXPECT_FALSE(r.wrapped);
}

TEST(SettingsMerge, WrapsTheUsersStatusLineOnceAndRemovalPutsItBack) {
  const ojson original =
      ojson::parse(R"({"statusLine":{"command":"my line 'x'","type":"command","padding":1}})");
  ojson s = original;
  SettingsPlan plan = default_plan("/b");
  plan.hooks.clear();
  plan.wrap_status_line = true;
  SettingsReport r;
  ASSERT_EQ(merge_settings(s, plan, r), "");
  ASSERT_TRUE(r.wrapped);
  EXPECT_EQ(s["statusLine"]["command"], R"(/b/ctx-status --wrap 'my line '\''x'\''')");
  EXPECT_EQ(r.wrapped->command, s["statusLine"]["command"]);
  EXPECT_EQ(r.wrapped->original.dump(), original["statusLine"].dump());
  EXPECT_TRUE(r.kept_status_command.empty());
  SettingsReport again;
  ojson twice = s;
  merge_settings(twice, plan, again);
  EXPECT_EQ(twice, s);
  EXPECT_FALSE(again.wrapped);
  EXPECT_FALSE(again.changed);
  SettingsReport removal;
  ASSERT_EQ(remove_settings(s, plan, {}, removal, r.wrapped), "");
  EXPECT_EQ(s.dump(), original.dump());
}

TEST(SettingsMerge, UninstallRemovesExactlyWhatWasAdded) {
  ojson original =
      ojson::parse(R"({"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}})");
  ojson s = original;
  SettingsReport r;
  merge_settings(s, default_plan("/b"), r);
  // The user adds a hook of their own to our group in between.
  s["hooks"]["PostToolUse"][0]["hooks"].push_back({{"type", "command"}, {"command", "theirs"}});
  SettingsReport u;
  ASSERT_EQ(remove_settings(s, default_plan("/b"), r.created, u), "");
  EXPECT_EQ(s["hooks"]["PostToolUse"].size(), 1u);
  EXPECT_EQ(s["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "theirs");
  EXPECT_FALSE(s.contains("statusLine"));
  s["hooks"]["PostToolUse"][0]["hooks"].clear();
  s["hooks"].erase("PostToolUse");
  EXPECT_EQ(s, original);  // the user's Stop hook stays, ours is gone
}

TEST(SettingsMerge, UninstallDropsContainersItCreated) {
  ojson s = ojson::object();
  SettingsReport r, u;
  merge_settings(s, default_plan("/b"), r);
  remove_settings(s, default_plan("/b"), r.created, u);
  EXPECT_EQ(s, ojson::object());
}

TEST(SettingsMerge, PathsWithSpacesAreQuoted) {
  auto plan = default_plan("/opt/my tools/bin");
  EXPECT_EQ(plan.hooks[0].command, "'/opt/my tools/bin/ctx-remind'");
}

TEST(SettingsMerge, UnexpectedShapeIsAnError) {
  ojson s = ojson::parse(R"({"hooks":[]})");
  SettingsReport r;
  EXPECT_EQ(merge_settings(s, default_plan("/b"), r), "\"hooks\" is not an object");
}

// The commands of every hook of `settings`, "event[matcher] command", in order.
std::vector<std::string> hook_list(const ojson& settings) {
  std::vector<std::string> out;
  for (const auto& [event, groups] : settings["hooks"].items())
    for (const auto& g : groups)
      for (const auto& h : g["hooks"])
        out.push_back(event + "[" + g.value("matcher", "") + "] " +
                      h["command"].get<std::string>());
  return out;
}

TEST(SettingsMerge, CtxkitsHooksAreRecognisedByProgramAndArgumentsWhereverTheyAre) {
  EXPECT_EQ(ctxkit_hook_key("PostToolUse", "/opt/ctxkit/bin/ctx-remind"), "ctx-remind");
  EXPECT_EQ(ctxkit_hook_key("PostToolUse", "'/opt/my tools/bin/ctx-remind'"), "ctx-remind");
  EXPECT_EQ(ctxkit_hook_key("PostToolUse", "\"$HOME/.local/bin/ctx-remind\""), "ctx-remind");
  EXPECT_EQ(ctxkit_hook_key("PostToolUse", "ctx-remind"), "ctx-remind");
  EXPECT_EQ(ctxkit_hook_key("SessionStart", "~/.local/bin/ctx-gate --hook"), "ctx-gate --hook");
  EXPECT_EQ(ctxkit_hook_key("SessionStart", "'/usr/bin/ctx-gate' '--hook'"), "ctx-gate --hook");
  EXPECT_EQ(ctxkit_hook_key("Stop", "\"${CLAUDE_PLUGIN_ROOT}/bin/ctx-session-hook\""),
            "ctx-session-hook");
  // The user's own: other arguments, another event, another program, a shell pipeline.
  EXPECT_EQ(ctxkit_hook_key("SessionStart", "/usr/bin/ctx-gate"), "");
  EXPECT_EQ(ctxkit_hook_key("PostToolUse", "/usr/bin/ctx-remind --verbose"), "");
  EXPECT_EQ(ctxkit_hook_key("Stop", "/usr/bin/ctx-remind"), "");
  EXPECT_EQ(ctxkit_hook_key("PostToolUse", "/usr/bin/my-ctx-remind"), "");
  EXPECT_EQ(ctxkit_hook_key("PostToolUse", "/usr/bin/ctx-remind | tee log"), "");
  EXPECT_TRUE(runs_ctx_status("'/opt/a b/ctx-status' --wrap 'x | y'"));
  EXPECT_FALSE(runs_ctx_status("ccstatusline"));
  EXPECT_EQ(command_program_dir("\"$HOME/.local/bin/ctx-remind\"", "/home/u"),
            "/home/u/.local/bin");
  EXPECT_EQ(command_program_dir("'/opt/x y/bin/ctx-gate' --hook", "/h"), "/opt/x y/bin");
  EXPECT_EQ(command_program_dir("/opt/x/../y/ctx-remind", "/h"), "/opt/y");
  EXPECT_EQ(command_program_dir("ctx-remind", "/h"), "");
}

// The issue's case: an install from ~/.local, then one from /opt/ctxkit. Each registration is
// taken over (in place, one line each), nothing registered twice, the user's hooks untouched.
TEST(SettingsMerge, AnInstallFromAnotherFolderTakesOverEveryRegistration) {
  ojson s = ojson::parse(
      R"({"hooks":{"PostToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"prettier --write"}]}]}})");
  SettingsReport first;
  ASSERT_EQ(merge_settings(s, default_plan("/home/u/.local/bin"), first), "");
  SettingsReport second;
  ASSERT_EQ(merge_settings(s, default_plan("/opt/ctxkit/bin"), second), "");
  EXPECT_TRUE(second.changed);
  EXPECT_EQ(hook_list(s),
            (std::vector<std::string>{"PostToolUse[Edit] prettier --write",
                                      "PostToolUse[*] /opt/ctxkit/bin/ctx-remind",
                                      "PostToolUse[Bash|mcp__.*] /opt/ctxkit/bin/ctx-cap",
                                      "SessionStart[] /opt/ctxkit/bin/ctx-session-hook",
                                      "SessionStart[clear|compact] /opt/ctxkit/bin/ctx-gate --hook",
                                      "Stop[] /opt/ctxkit/bin/ctx-session-hook",
                                      "PreCompact[] /opt/ctxkit/bin/ctx-session-hook",
                                      "PreCompact[] /opt/ctxkit/bin/ctx-pin --hook",
                                      "SessionEnd[] /opt/ctxkit/bin/ctx-session-hook",
                                      "PostCompact[] /opt/ctxkit/bin/ctx-pin --hook",
                                      "UserPromptSubmit[] /opt/ctxkit/bin/ctx-pin --hook"}));
  EXPECT_EQ(s["statusLine"]["command"], "/opt/ctxkit/bin/ctx-status");
  EXPECT_EQ(second.lines,
            (std::vector<std::string>{
                "replaced: PostToolUse hook /home/u/.local/bin/ctx-remind (now "
                "/opt/ctxkit/bin/ctx-remind)",
                "replaced: PostToolUse hook /home/u/.local/bin/ctx-cap (now "
                "/opt/ctxkit/bin/ctx-cap)",
                "replaced: SessionStart hook /home/u/.local/bin/ctx-session-hook (now "
                "/opt/ctxkit/bin/ctx-session-hook)",
                "replaced: Stop hook /home/u/.local/bin/ctx-session-hook (now "
                "/opt/ctxkit/bin/ctx-session-hook)",
                "replaced: PreCompact hook /home/u/.local/bin/ctx-session-hook (now "
                "/opt/ctxkit/bin/ctx-session-hook)",
                "replaced: SessionEnd hook /home/u/.local/bin/ctx-session-hook (now "
                "/opt/ctxkit/bin/ctx-session-hook)",
                "replaced: PreCompact hook /home/u/.local/bin/ctx-pin --hook (now "
                "/opt/ctxkit/bin/ctx-pin --hook)",
                "replaced: PostCompact hook /home/u/.local/bin/ctx-pin --hook (now "
                "/opt/ctxkit/bin/ctx-pin --hook)",
                "replaced: UserPromptSubmit hook /home/u/.local/bin/ctx-pin --hook (now "
                "/opt/ctxkit/bin/ctx-pin --hook)",
                "replaced: SessionStart hook /home/u/.local/bin/ctx-gate --hook (now "
                "/opt/ctxkit/bin/ctx-gate --hook)",
                "replaced: statusLine /home/u/.local/bin/ctx-status (now "
                "/opt/ctxkit/bin/ctx-status)"}));
  EXPECT_EQ(second.replaced_commands.size(), 11u);
  EXPECT_TRUE(second.created.empty());
  // And back: the first folder takes them over again; a third run changes nothing.
  SettingsReport back, again;
  merge_settings(s, default_plan("/home/u/.local/bin"), back);
  ojson once = s;
  merge_settings(s, default_plan("/home/u/.local/bin"), again);
  EXPECT_FALSE(again.changed);
  EXPECT_EQ(s, once);
  EXPECT_EQ(hook_list(s).size(), 11u);
}

// A file an earlier version left with every hook twice (two prefixes, an old matcher, ours in a
// group of the user's): one of each stays, the user's hook keeps its group.
TEST(SettingsMerge, SecondRegistrationsAndOldMatchersAreRepaired) {
  ojson s = ojson::parse(R"({"hooks":{
    "PostToolUse":[
      {"matcher":"*","hooks":[{"type":"command","command":"/a/ctx-remind","timeout":10}]},
      {"matcher":"*","hooks":[{"type":"command","command":"mine"},{"type":"command","command":"'/b/ctx-remind'","timeout":10}]}],
    "SessionStart":[
      {"matcher":"startup|clear|compact","hooks":[{"type":"command","command":"/b/ctx-gate --hook","timeout":10}]},
      {"hooks":[{"type":"command","command":"/b/ctx-session-hook","timeout":10}]},
      {"hooks":[{"type":"command","command":"/a/ctx-session-hook","timeout":10}]}]}})");
  SettingsReport r;
  ASSERT_EQ(merge_settings(s, default_plan("/b"), r), "");
  EXPECT_EQ(hook_list(s), (std::vector<std::string>{
                              "PostToolUse[*] /b/ctx-remind", "PostToolUse[*] mine",
                              "PostToolUse[Bash|mcp__.*] /b/ctx-cap",
                              "SessionStart[clear|compact] /b/ctx-gate --hook",
                              "SessionStart[] /b/ctx-session-hook", "Stop[] /b/ctx-session-hook",
                              "PreCompact[] /b/ctx-session-hook", "PreCompact[] /b/ctx-pin --hook",
                              "SessionEnd[] /b/ctx-session-hook", "PostCompact[] /b/ctx-pin --hook",
                              "UserPromptSubmit[] /b/ctx-pin --hook"}));
  auto has = [&](const std::string& line) {
    return std::find(r.lines.begin(), r.lines.end(), line) != r.lines.end();
  };
  EXPECT_TRUE(has("replaced: PostToolUse hook /a/ctx-remind (now /b/ctx-remind)")) << r.lines[0];
  EXPECT_TRUE(
      has("removed: PostToolUse hook '/b/ctx-remind' (a second registration of "
          "ctx-remind)"));
  EXPECT_TRUE(
      has("replaced: SessionStart[startup|clear|compact] hook /b/ctx-gate --hook (now "
          "/b/ctx-gate --hook on [clear|compact])"));
  EXPECT_TRUE(has("already registered: SessionStart hook /b/ctx-session-hook"));
  EXPECT_TRUE(
      has("removed: SessionStart hook /a/ctx-session-hook (a second registration of "
          "ctx-session-hook)"));
}

TEST(SettingsMerge, AStatusLineOfAnotherInstallIsTakenOverWithItsArguments) {
  ojson s = ojson::parse(
      R"({"statusLine":{"type":"command","command":"/a/ctx-status --wrap 'my line'","padding":1}})");
  SettingsPlan plan = default_plan("/b");
  plan.hooks.clear();
  SettingsReport r;
  ASSERT_EQ(merge_settings(s, plan, r), "");
  EXPECT_EQ(s["statusLine"]["command"], "/b/ctx-status --wrap 'my line'");
  EXPECT_EQ(r.lines, std::vector<std::string>{"replaced: statusLine /a/ctx-status --wrap 'my "
                                              "line' (now /b/ctx-status --wrap 'my line')"});
  ASSERT_TRUE(r.wrapped);
  EXPECT_EQ(r.wrapped->command, "/b/ctx-status --wrap 'my line'");
  EXPECT_EQ(r.wrapped->original.dump(), R"({"type":"command","command":"my line","padding":1})");
  // Removal of any folder's gives the user's command back.
  ojson t = ojson::parse(R"({"statusLine":{"type":"command","command":"/c/ctx-status --wrap x"}})");
  SettingsReport u;
  ASSERT_EQ(remove_settings(t, plan, {}, u, std::nullopt, RemoveScope{true, "/h"}), "");
  EXPECT_EQ(t["statusLine"]["command"], "x");
}

TEST(SettingsMerge, ReplaceTakesTheUsersStatusLineAndRemovalPutsItBack) {
  const ojson original = ojson::parse(R"({"statusLine":{"type":"command","command":"my-line"}})");
  ojson s = original;
  SettingsPlan plan = default_plan("/b");
  plan.hooks.clear();
  plan.replace_status_line = true;
  SettingsReport r;
  ASSERT_EQ(merge_settings(s, plan, r), "");
  EXPECT_EQ(s["statusLine"]["command"], "/b/ctx-status");
  EXPECT_TRUE(r.kept_status_command.empty());
  ASSERT_TRUE(r.wrapped);
  SettingsReport u;
  ASSERT_EQ(remove_settings(s, plan, {}, u, r.wrapped), "");
  EXPECT_EQ(s, original);
}

TEST(SettingsMerge, AnInstallDisablesAnEnabledCtxkitPluginWhenAsked) {
  ojson s = ojson::parse(R"({"enabledPlugins":{"ctxkit@ctxkit":true,"other@x":true}})");
  SettingsPlan plan = default_plan("/b");
  plan.disable_plugins = true;
  SettingsReport r;
  ASSERT_EQ(merge_settings(s, plan, r), "");
  EXPECT_EQ(s["enabledPlugins"].dump(), R"({"ctxkit@ctxkit":false,"other@x":true})");
  EXPECT_EQ(r.disabled_plugins, std::vector<std::string>{"ctxkit@ctxkit"});
  ojson t = ojson::parse(R"({"enabledPlugins":{"ctxkit@ctxkit":true}})");
  SettingsReport r2;
  merge_settings(t, default_plan("/b"), r2);
  EXPECT_EQ(t["enabledPlugins"]["ctxkit@ctxkit"], true) << "only when asked";
}

// A removal takes this install's entries (its folder, "$HOME" read), or with `all` ctxkit's of
// every folder; the user's hooks, even those running a ctxkit program otherwise, stay.
TEST(SettingsMerge, RemovalTakesThisInstallsEntriesOrAllOfCtxkitsNeverTheUsers) {
  const char* text = R"({"hooks":{
    "PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"\"$HOME/.local/bin/ctx-remind\""}]},
                   {"hooks":[{"type":"command","command":"/x/ctx-remind --verbose"}]}],
    "Stop":[{"hooks":[{"type":"command","command":"/opt/c/ctx-session-hook"},{"type":"command","command":"notify"}]}]},
    "statusLine":{"type":"command","command":"/opt/c/ctx-status"}})";
  ojson s = ojson::parse(text);
  SettingsReport r;
  ASSERT_EQ(remove_settings(s, default_plan("/home/u/.local/bin"), {}, r, std::nullopt,
                            RemoveScope{false, "/home/u"}),
            "");
  EXPECT_EQ(hook_list(s),
            (std::vector<std::string>{"PostToolUse[] /x/ctx-remind --verbose",
                                      "Stop[] /opt/c/ctx-session-hook", "Stop[] notify"}));
  EXPECT_EQ(s["statusLine"]["command"], "/opt/c/ctx-status");
  SettingsReport all;
  ASSERT_EQ(remove_settings(s, default_plan("/home/u/.local/bin"), {}, all, std::nullopt,
                            RemoveScope{true, "/home/u"}),
            "");
  EXPECT_EQ(hook_list(s),
            (std::vector<std::string>{"PostToolUse[] /x/ctx-remind --verbose", "Stop[] notify"}));
  EXPECT_FALSE(s.contains("statusLine"));
  EXPECT_EQ(all.replaced_commands,
            (std::vector<std::string>{"/opt/c/ctx-session-hook", "/opt/c/ctx-status"}));
}

}  // namespace
}  // namespace ctxkit::claude
