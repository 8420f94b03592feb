#include <gtest/gtest.h>

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
  ASSERT_EQ(s["hooks"]["PostToolUse"].size(), 2u);
  EXPECT_EQ(s["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "mine");
  EXPECT_EQ(s["hooks"]["PostToolUse"][1]["matcher"], "*");
  EXPECT_EQ(s["hooks"]["PostToolUse"][1]["hooks"][0]["command"], "/opt/ctx/bin/ctx-remind");
  EXPECT_EQ(s["hooks"]["PostToolUse"][1]["hooks"][0]["timeout"], 10);
  EXPECT_EQ(s["statusLine"]["command"], "/opt/ctx/bin/ctx-status");
  // Key order of the user's file survives.
  EXPECT_EQ(s.begin().key(), "model");
  EXPECT_EQ(r.created, (std::vector<std::string>{"hooks.SessionStart", "hooks.Stop",
                                                 "hooks.PreCompact", "hooks.SessionEnd"}));
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
                                      "hooks.Stop", "hooks.PreCompact", "hooks.SessionEnd"}));
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

}  // namespace
}  // namespace ctxkit::claude
