#include <gtest/gtest.h>

#include "core/config.hpp"
#include "core/locations.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::core {
namespace {
namespace fs = std::filesystem;

util::Env home_only(const test::TempDir& tmp) {
  util::Env env;
  env.set("HOME", (tmp / "home").string());
  return env;
}

TEST(Locations, HomeAloneGivesTheDefaultFolders) {
  test::TempDir tmp;
  const fs::path home = tmp / "home";
  const Locations loc = Locations::resolve(home_only(tmp));
  EXPECT_EQ(loc.home, home);
  EXPECT_EQ(loc.config_dir, home / ".config/ctxkit");
  EXPECT_EQ(loc.state_dir, home / ".local/state/ctxkit");
  EXPECT_EQ(loc.claude_config_dir, home / ".claude");
  EXPECT_EQ(loc.claude_projects_dir(), home / ".claude/projects");
}

TEST(Locations, WellKnownFilesAreUnderTheirFolders) {
  test::TempDir tmp;
  const Locations loc = Locations::resolve(home_only(tmp));
  const fs::path config = loc.config_dir, state = loc.state_dir;
  EXPECT_EQ(loc.config_file(), config / "config.toml");
  EXPECT_EQ(loc.workflows_dir(), config / "workflows");
  EXPECT_EQ(loc.state_db(), state / "state.db");
  EXPECT_EQ(loc.archive_dir(), state / "archive");
  EXPECT_EQ(loc.index_db(), state / "archive/index.db");
  EXPECT_EQ(loc.index_db(1), state / "archive/index-1.db");
  EXPECT_EQ(loc.index_lock(), state / "archive/.index.lock");
  EXPECT_EQ(loc.archive_log(), state / "archive.log");
  EXPECT_EQ(loc.rollovers_dir(), state / "rollovers");
  EXPECT_EQ(loc.supervisors_dir(), state / "supervisors");
}

TEST(Locations, XdgVariablesMoveTheConfigAndStateFolders) {
  test::TempDir tmp;
  util::Env env = home_only(tmp);
  env.set("XDG_CONFIG_HOME", (tmp / "cfg").string());
  env.set("XDG_STATE_HOME", (tmp / "st").string());
  const Locations loc = Locations::resolve(env);
  EXPECT_EQ(loc.config_dir, tmp / "cfg/ctxkit");
  EXPECT_EQ(loc.config_file(), tmp / "cfg/ctxkit/config.toml");
  EXPECT_EQ(loc.state_dir, tmp / "st/ctxkit");
  EXPECT_EQ(loc.index_db(), tmp / "st/ctxkit/archive/index.db");
  // Neither moves the Claude Code folders.
  EXPECT_EQ(loc.claude_config_dir, tmp / "home/.claude");
}

TEST(Locations, RelativeOrEmptyXdgVariablesAreIgnored) {
  test::TempDir tmp;
  for (const std::string value : {"relative/dir", "", "./here"}) {
    util::Env env = home_only(tmp);
    env.set("XDG_CONFIG_HOME", value);
    env.set("XDG_STATE_HOME", value);
    const Locations loc = Locations::resolve(env);
    EXPECT_EQ(loc.config_dir, tmp / "home/.config/ctxkit") << "'" << value << "'";
    EXPECT_EQ(loc.state_dir, tmp / "home/.local/state/ctxkit") << "'" << value << "'";
  }
}

TEST(Locations, ClaudeConfigDirMovesTheClaudeFolders) {
  test::TempDir tmp;
  util::Env env = home_only(tmp);
  env.set("CLAUDE_CONFIG_DIR", (tmp / "claude-alt").string());
  Locations loc = Locations::resolve(env);
  EXPECT_EQ(loc.claude_config_dir, tmp / "claude-alt");
  EXPECT_EQ(loc.claude_projects_dir(), tmp / "claude-alt/projects");
  // ctxkit's own folders stay where they were.
  EXPECT_EQ(loc.state_dir, tmp / "home/.local/state/ctxkit");
  env.set("CLAUDE_CONFIG_DIR", "");
  loc = Locations::resolve(env);
  EXPECT_EQ(loc.claude_config_dir, tmp / "home/.claude");
}

TEST(Locations, StateDirSettingMovesOnlyTheStateFolder) {
  test::TempDir tmp;
  const util::Env env = tmp.env();
  Locations loc = Locations::resolve(env, (tmp / "elsewhere").string());
  EXPECT_EQ(loc.state_dir, tmp / "elsewhere");
  EXPECT_EQ(loc.state_db(), tmp / "elsewhere/state.db");
  EXPECT_EQ(loc.archive_dir(), tmp / "elsewhere/archive");
  EXPECT_EQ(loc.config_dir, tmp / "home/.config/ctxkit");
  loc = Locations::resolve(env, "~/private/ctx");
  EXPECT_EQ(loc.state_dir, tmp / "home/private/ctx");
}

TEST(Locations, UserConfigFileSetsTheStateDirAndTheEnvironmentWins) {
  test::TempDir tmp;
  tmp.write("home/.config/ctxkit/config.toml", "[state]\ndir = \"~/from-user-file\"\n");
  util::Env env = tmp.env();
  Config c = load_config(env, {});
  EXPECT_EQ(c.locations(env).state_dir, tmp / "home/from-user-file");
  env.set("CTXKIT_STATE_DIR", (tmp / "from-env").string());
  c = load_config(env, {});
  EXPECT_EQ(c.locations(env).state_dir, tmp / "from-env");
}

TEST(Locations, UserConfigFileIsFoundThroughXdgConfigHome) {
  test::TempDir tmp;
  tmp.write("cfg/ctxkit/config.toml", "[state]\ndir = \"~/moved\"\n");
  util::Env env = tmp.env();
  env.set("XDG_CONFIG_HOME", (tmp / "cfg").string());
  const Config c = load_config(env, {});
  EXPECT_EQ(c.files, (std::vector<fs::path>{tmp / "cfg/ctxkit/config.toml"}));
  EXPECT_EQ(c.locations(env).state_dir, tmp / "home/moved");
}

TEST(Locations, AProjectFileCannotMoveThem) {
  test::TempDir tmp;
  tmp.write("proj/.work.toml", "[state]\ndir = \"" + (tmp / "stolen").string() + "\"\n");
  const util::Env env = tmp.env();
  const Config c = load_config(env, {tmp / "proj"});
  const Locations loc = c.locations(env);
  EXPECT_EQ(loc.state_dir, tmp / "home/.local/state/ctxkit");
  EXPECT_EQ(loc.config_dir, tmp / "home/.config/ctxkit");
  EXPECT_EQ(loc.claude_config_dir, tmp / "home/.claude");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("'state.dir' is ignored in a project file"), std::string::npos)
      << c.warnings[0];
  // Under the user's own setting, the project file still changes nothing.
  tmp.write("home/.config/ctxkit/config.toml", "[state]\ndir = \"~/mine\"\n");
  EXPECT_EQ(load_config(env, {tmp / "proj"}).locations(env).state_dir, tmp / "home/mine");
}

}  // namespace
}  // namespace ctxkit::core
