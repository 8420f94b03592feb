#include <gtest/gtest.h>
#include <sys/stat.h>

#include <sstream>

#include "install/settings_edit.hpp"
#include "install/skills.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::install {
namespace {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

SettingsEdit edit_of(const std::string& action, const test::TempDir& tmp) {
  SettingsEdit e;
  e.action = action;
  e.settings = tmp / "claude" / "settings.json";
  e.plan = claude::default_plan("/opt/ctxkit/bin");
  e.manifest = tmp / "records" / "settings.json";
  e.scope = claude::RemoveScope{false, tmp.path().string()};
  return e;
}

// An install into a folder with no settings.json makes the file, with the hooks and the status
// line, and a record that says so; its uninstall removes the file it made and the record.
TEST(SettingsEdit, AnInstallMakesTheFileAndItsUninstallRemovesIt) {
  test::TempDir tmp;
  std::ostringstream out;
  ASSERT_TRUE(edit_settings(edit_of("install", tmp), tmp.env(), out));
  auto settings = read_settings_json(tmp / "claude" / "settings.json", false);
  ASSERT_TRUE(settings) << settings.error().message;
  EXPECT_TRUE((*settings)["hooks"].contains("PostToolUse"));
  EXPECT_NE(
      (*settings)["statusLine"]["command"].get<std::string>().find("/opt/ctxkit/bin/ctx-status"),
      std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat((tmp / "claude" / "settings.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto record = read_settings_json(tmp / "records" / "settings.json", false);
  ASSERT_TRUE(record);
  EXPECT_EQ((*record)["created_file"], true);
  EXPECT_EQ((*record)["bin_dir"], "/opt/ctxkit/bin");

  out.str("");
  ASSERT_TRUE(edit_settings(edit_of("uninstall", tmp), tmp.env(), out));
  EXPECT_FALSE(fs::exists(tmp / "claude" / "settings.json"));
  EXPECT_FALSE(fs::exists(tmp / "records" / "settings.json"));
  EXPECT_NE(out.str().find("(created by the install)"), std::string::npos) << out.str();
}

// A file of the user's keeps its own keys and gets a backup before it is changed; a dry run
// prints the result and writes nothing.
TEST(SettingsEdit, TheUsersFileIsBackedUpAndADryRunWritesNothing) {
  test::TempDir tmp;
  const fs::path file = tmp.write("claude/settings.json", R"({"model": "opus"})");
  std::ostringstream out;
  auto dry = edit_of("install", tmp);
  dry.dry_run = true;
  dry.manifest.clear();
  ASSERT_TRUE(edit_settings(dry, tmp.env(), out));
  EXPECT_EQ(test::read_file(file), R"({"model": "opus"})");
  EXPECT_NE(out.str().find("\"PostToolUse\""), std::string::npos);

  out.str("");
  ASSERT_TRUE(edit_settings(edit_of("install", tmp), tmp.env(), out));
  auto settings = read_settings_json(file, false);
  ASSERT_TRUE(settings);
  EXPECT_EQ((*settings)["model"], "opus");
  const std::string said = out.str();
  const auto at = said.find("backup: ");
  ASSERT_NE(at, std::string::npos) << said;
  const std::string backup = said.substr(at + 8, said.find('\n', at) - at - 8);
  EXPECT_EQ(test::read_file(backup), R"({"model": "opus"})");
}

TEST(SettingsEdit, AFileThatIsNotJsonIsAnErrorAndStaysAsItWas) {
  test::TempDir tmp;
  const fs::path file = tmp.write("claude/settings.json", "{not json");
  std::ostringstream out;
  auto r = edit_settings(edit_of("install", tmp), tmp.env(), out);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("is not valid JSON"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("(nothing written)"), std::string::npos);
  EXPECT_EQ(test::read_file(file), "{not json");
  EXPECT_EQ(out.str(), "");
}

// The skills are copied with the programs' folder filled in, listed, and removed with the folders
// they leave empty.
TEST(Skills, AreCopiedWithTheProgramsFolderListedAndRemoved) {
  test::TempDir tmp;
  tmp.write("src/trim/SKILL.md", "run @CTXKIT_BIN@/ctx-trim now");
  tmp.write("src/notes/README.md", "no SKILL.md: not a skill");
  std::ostringstream out;
  auto written = copy_skills(tmp / "src", tmp / "dest", "/opt/bin", out);
  ASSERT_TRUE(written) << written.error().message;
  ASSERT_EQ(written->size(), 1u);
  EXPECT_EQ(test::read_file(tmp / "dest" / "trim" / "SKILL.md"), "run /opt/bin/ctx-trim now");
  EXPECT_EQ(out.str(), "installed skill /trim\n");
  EXPECT_FALSE(fs::exists(tmp / "dest" / "notes"));
  const fs::path list = tmp / "dest" / ".ctxkit-installed";
  ASSERT_TRUE(write_skills_list(list, "/opt/bin", *written));
  EXPECT_EQ(skills_owner(list), "/opt/bin");
  EXPECT_EQ(listed_skills(list), *written);

  // For the plugin, the programs are called by name.
  std::ostringstream plugin_out;
  ASSERT_TRUE(copy_skills(tmp / "src", tmp / "plugin", "", plugin_out));
  EXPECT_EQ(test::read_file(tmp / "plugin" / "trim" / "SKILL.md"), "run ctx-trim now");

  out.str("");
  remove_skills(list, out);
  EXPECT_FALSE(fs::exists(tmp / "dest" / "trim"));
  EXPECT_FALSE(fs::exists(list));
  EXPECT_NE(out.str().find("removed: "), std::string::npos);
}

}  // namespace
}  // namespace ctxkit::install
