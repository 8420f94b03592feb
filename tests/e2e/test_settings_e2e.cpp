#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "e2e/e2e_support.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

std::vector<fs::path> backups(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().starts_with("settings.json.ctxkit-backup-")) out.push_back(e.path());
  return out;
}

TEST(Settings, InstallTwiceThenUninstallRestoresTheUsersFile) {
  TempDir tmp;
  std::string original = R"({
  "model": "opus",
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  }
}
)";
  fs::path s = tmp.write("home/.claude/settings.json", original);
  fs::permissions(s, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  std::vector<std::string> args = {"install", "--settings", s.string(), "--bin-dir", "/opt/ctxkit/bin",
                                   "--manifest", (tmp / "share/manifest.json").string()};
  auto r = run_tool("ctx-settings", args, "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ojson j = ojson::parse(read_file(s));
  EXPECT_EQ(j["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "/opt/ctxkit/bin/ctx-remind");
  EXPECT_EQ(j["hooks"]["Stop"][0]["hooks"][0]["command"], "notify-send done");
  EXPECT_EQ(j["statusLine"]["command"], "/opt/ctxkit/bin/ctx-status");
  ASSERT_EQ(backups(s.parent_path()).size(), 1u);
  EXPECT_EQ(read_file(backups(s.parent_path())[0]), original);
  struct stat st {};
  ::stat(s.c_str(), &st);
  EXPECT_EQ(st.st_mode & 0777, 0640u);

  std::string once = read_file(s);
  r = run_tool("ctx-settings", args, "", tmp.env());
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(read_file(s), once);
  EXPECT_NE(r.out.find("already registered: PostToolUse hook /opt/ctxkit/bin/ctx-remind"), std::string::npos);

  args[0] = "uninstall";
  r = run_tool("ctx-settings", args, "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ojson::parse(read_file(s)), ojson::parse(original));
  EXPECT_FALSE(fs::exists(tmp / "share/manifest.json"));
}

TEST(Settings, SymlinkedSettingsAreWrittenThroughTheLink) {
  TempDir tmp;
  fs::path real = tmp.write("dotfiles/claude-settings.json", "{\"theme\":\"dark\"}\n");
  fs::create_directories(tmp / "home/.claude");
  fs::path link = tmp / "home/.claude/settings.json";
  fs::create_symlink(real, link);
  auto r = run_tool("ctx-settings", {"install", "--settings", link.string(), "--bin-dir", "/b"}, "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(ojson::parse(read_file(real))["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "/b/ctx-remind");
  EXPECT_EQ(backups(link.parent_path()).size(), 1u);
}

TEST(Settings, MissingFileIsCreatedAndRemovedAgainByUninstall) {
  TempDir tmp;
  fs::path s = tmp / "proj/.claude/settings.json";
  std::string manifest = (tmp / "m.json").string();
  auto r = run_tool("ctx-settings", {"install", "--settings", s.string(), "--bin-dir", "/b", "--manifest", manifest}, "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(ojson::parse(read_file(s)).contains("statusLine"));
  EXPECT_TRUE(backups(s.parent_path()).empty());
  r = run_tool("ctx-settings", {"uninstall", "--settings", s.string(), "--bin-dir", "/b", "--manifest", manifest}, "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(s));
  EXPECT_TRUE(backups(s.parent_path()).empty());
}

TEST(Settings, UninstallKeepsAFileTheUserAddedTo) {
  TempDir tmp;
  fs::path s = tmp / "proj/.claude/settings.json";
  std::string manifest = (tmp / "m.json").string();
  ASSERT_EQ(run_tool("ctx-settings", {"install", "--settings", s.string(), "--bin-dir", "/b", "--manifest", manifest}, "", tmp.env()).exit_code, 0);
  ojson j = ojson::parse(read_file(s));
  j["permissions"] = {{"allow", {"Bash(ls)"}}};
  std::ofstream(s) << j.dump(2);
  ASSERT_EQ(run_tool("ctx-settings", {"uninstall", "--settings", s.string(), "--bin-dir", "/b", "--manifest", manifest}, "", tmp.env()).exit_code, 0);
  EXPECT_EQ(ojson::parse(read_file(s)), (ojson{{"permissions", {{"allow", {"Bash(ls)"}}}}}));
}

TEST(Settings, InvalidJsonIsRefusedAndNothingIsWritten) {
  TempDir tmp;
  fs::path s = tmp.write("settings.json", "{\"hooks\": {,}\n");
  auto r = run_tool("ctx-settings", {"install", "--settings", s.string(), "--bin-dir", "/b"}, "", tmp.env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1u);
  EXPECT_TRUE(r.err.starts_with("ctx-settings: error: " + s.string() + " is not valid JSON: parse error at line 1")) << r.err;
  EXPECT_EQ(read_file(s), "{\"hooks\": {,}\n");
  EXPECT_TRUE(backups(tmp.path()).empty());
}

// README, "When things go wrong": a settings file of an unexpected shape is refused whole.
TEST(Settings, UnexpectedShapeIsRefusedAndNothingIsWritten) {
  for (const char* text : {"[]\n", "{\"hooks\": []}\n", "{\"hooks\": {\"PostToolUse\": {}}}\n",
                           "{\"hooks\": {\"PostToolUse\": [7]}}\n", "{\"statusLine\": 3}\n"}) {
    TempDir tmp;
    fs::path s = tmp.write("settings.json", text);
    auto r = run_tool("ctx-settings", {"install", "--settings", s.string(), "--bin-dir", "/b"}, "", tmp.env());
    EXPECT_EQ(r.exit_code, 1) << text << r.out;
    EXPECT_EQ(line_count(r.err), 1u) << text << r.err;
    EXPECT_TRUE(r.err.starts_with("ctx-settings: error: ")) << r.err;
    EXPECT_EQ(read_file(s), text);
    EXPECT_TRUE(backups(tmp.path()).empty()) << text;
  }
}

}  // namespace
}  // namespace ctxkit::test
