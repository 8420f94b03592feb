#include <gtest/gtest.h>
#include <sys/stat.h>

#include <sstream>

#include "install/install_records.hpp"
#include "install/mcp_edit.hpp"
#include "install/settings_edit.hpp"
#include "install/setup.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::install {
namespace {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

// A folder of programs with the two MCP servers (only their presence is read).
std::string make_bin(const test::TempDir& tmp) {
  for (const char* program : {"ctx-workflow-mcp", "ctx-archive-mcp"})
    fs::permissions(tmp.write(std::string("opt/bin/") + program, "#!/bin/sh\n"),
                    fs::perms::owner_all);
  return (tmp / "opt/bin").string();
}

SetupPlan setup_of(const test::TempDir& tmp, const std::string& bin) {
  SetupPlan s;
  s.targets = targets_for(tmp.env(), "", tmp / "records");
  s.bin_dir = bin;
  s.data_dir = tmp / "data";
  s.wrap_hint = "ctx-settings install --wrap-status-line";
  return s;
}

ojson json_of(const fs::path& p) {
  auto j = read_settings_json(p, false);
  EXPECT_TRUE(j) << j.error().message;
  return j ? *j : ojson();
}

// The MCP edit registers a server in a file it creates, records that it did, and its removal
// takes the file away again; the file of the user's keeps its ending (the client writes
// ~/.claude.json without a final newline) and gets a backup.
TEST(McpEdit, RegisterCreatesAndRecordsAndUnregisterRemovesWhatItCreated) {
  test::TempDir tmp;
  McpEdit e;
  e.config = tmp / "home/.claude.json";
  e.manifest = tmp / "records/mcp.json";
  e.command = "/opt/ctxkit/bin/ctx-workflow-mcp";
  std::ostringstream out;
  ASSERT_TRUE(edit_mcp_config(e, tmp.env(), out));
  EXPECT_EQ(json_of(e.config)["mcpServers"]["ctxkit-workflow"]["command"], e.command);
  const ojson record = json_of(e.manifest);
  EXPECT_EQ(record["created_file"], true);
  EXPECT_EQ(record["bin_dir"], "/opt/ctxkit/bin");
  e.unregister = true;
  out.str("");
  ASSERT_TRUE(edit_mcp_config(e, tmp.env(), out));
  EXPECT_FALSE(fs::exists(e.config));
  EXPECT_FALSE(fs::exists(e.manifest));
  EXPECT_NE(out.str().find("(created by the install)"), std::string::npos) << out.str();

  const fs::path users = tmp.write("home2/.claude.json", R"({"theme": "dark"})");
  McpEdit mine;
  mine.config = users;
  mine.command = e.command;
  out.str("");
  ASSERT_TRUE(edit_mcp_config(mine, tmp.env(), out));
  const std::string text = test::read_file(users);
  EXPECT_NE(text.back(), '\n');
  EXPECT_EQ(json_of(users)["theme"], "dark");
  EXPECT_NE(out.str().find("backup: " + users.string() + ".ctxkit-backup-"), std::string::npos)
      << out.str();
}

// A broken file, or a dry run: the file stays as it was, and no record is made.
TEST(McpEdit, ABrokenFileIsAnErrorAndADryRunWritesNothing) {
  test::TempDir tmp;
  const fs::path broken = tmp.write("b/.mcp.json", "{oops");
  McpEdit e;
  e.config = broken;
  e.manifest = tmp / "records/mcp.json";
  e.command = "/x/ctx-workflow-mcp";
  std::ostringstream out;
  auto r = edit_mcp_config(e, tmp.env(), out);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.rfind(broken.string() + " is not valid JSON", 0), 0u)
      << r.error().message;
  EXPECT_EQ(test::read_file(broken), "{oops");
  EXPECT_FALSE(fs::exists(e.manifest));
  e.config = tmp / "c/.mcp.json";
  e.manifest.clear();
  e.dry_run = true;
  ASSERT_TRUE(edit_mcp_config(e, tmp.env(), out));
  EXPECT_FALSE(fs::exists(e.config));
  EXPECT_NE(out.str().find("\"ctxkit-workflow\""), std::string::npos) << out.str();
}

// The whole set-up, then its removal: the hooks and status line, both servers, the records in a
// private folder; afterwards nothing of it is left. With no skills, a note says where it looked.
TEST(Setup, InstallsEveryPartAndItsRemovalLeavesNothing) {
  test::TempDir tmp;
  const SetupPlan s = setup_of(tmp, make_bin(tmp));
  std::ostringstream out, notes;
  ASSERT_TRUE(install_set_up(s, tmp.env(), out, notes)) << out.str();
  const ojson settings = json_of(s.targets.settings);
  EXPECT_TRUE(settings["hooks"].contains("PostToolUse"));
  const ojson servers = json_of(s.targets.mcp_config)["mcpServers"];
  EXPECT_EQ(servers["ctxkit-workflow"]["command"], s.bin_dir + "/ctx-workflow-mcp");
  EXPECT_EQ(servers["ctxkit-archive"]["command"], s.bin_dir + "/ctx-archive-mcp");
  for (const auto& record :
       {s.targets.settings_manifest, s.targets.mcp_manifest, s.targets.archive_mcp_manifest})
    EXPECT_TRUE(fs::exists(record)) << record;
  EXPECT_EQ(notes.str(), "ctx-settings: no skills found in " + (tmp / "data/skills").string() +
                             " (give --data-dir)\n");

  out.str("");
  ASSERT_TRUE(remove_set_up(s, tmp.env(), out)) << out.str();
  EXPECT_FALSE(fs::exists(s.targets.settings));
  EXPECT_FALSE(fs::exists(s.targets.mcp_config));
  for (const auto& record :
       {s.targets.settings_manifest, s.targets.mcp_manifest, s.targets.archive_mcp_manifest})
    EXPECT_FALSE(fs::exists(record)) << record;
  out.str("");
  ASSERT_TRUE(remove_set_up(s, tmp.env(), out));
  EXPECT_EQ(out.str(), "nothing recorded as installed for " + s.targets.settings.string() + "\n");
}

// An MCP configuration that cannot be merged stops the set-up before anything is written (not a
// settings.json with hooks and no server); a dry run writes nothing either.
TEST(Setup, ABrokenMcpConfigurationStopsItBeforeAnythingIsWritten) {
  test::TempDir tmp;
  SetupPlan s = setup_of(tmp, make_bin(tmp));
  tmp.write("home/.claude.json", "[1, 2");
  std::ostringstream out, notes;
  auto r = install_set_up(s, tmp.env(), out, notes);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("is not valid JSON"), std::string::npos) << r.error().message;
  EXPECT_FALSE(fs::exists(s.targets.settings));
  EXPECT_FALSE(fs::exists(tmp / "records"));

  fs::remove(tmp / "home/.claude.json");
  s.options.dry_run = true;
  ASSERT_TRUE(install_set_up(s, tmp.env(), out, notes));
  EXPECT_FALSE(fs::exists(s.targets.settings));
  EXPECT_FALSE(fs::exists(s.targets.mcp_config));
  EXPECT_FALSE(fs::exists(tmp / "records"));
}

// A folder of programs without the workflow server is not installed from.
TEST(Setup, AFolderWithoutTheWorkflowServerIsRefused) {
  test::TempDir tmp;
  fs::create_directories(tmp / "empty");
  std::ostringstream out, notes;
  auto r = install_set_up(setup_of(tmp, (tmp / "empty").string()), tmp.env(), out, notes);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, (tmp / "empty").string() +
                                   " has no ctx-workflow-mcp; give --bin-dir (nothing written)");
}

// Run from a plugin's bin/, the status line only: the servers a settings install registered go
// (the plugin brings its own), and the status line stays.
TEST(Setup, FromThePluginTheStatusLineStaysAndTheServersGo) {
  test::TempDir tmp;
  const std::string bin = make_bin(tmp);
  std::ostringstream out, notes;
  ASSERT_TRUE(install_set_up(setup_of(tmp, bin), tmp.env(), out, notes)) << out.str();
  tmp.write("opt/.claude-plugin/plugin.json", "{}");
  ASSERT_TRUE(is_plugin_bin(bin));
  SetupPlan plugin = setup_of(tmp, bin);
  plugin.options.status_line_only = true;
  out.str("");
  ASSERT_TRUE(install_set_up(plugin, tmp.env(), out, notes)) << out.str();
  EXPECT_FALSE(fs::exists(plugin.targets.mcp_config));
  EXPECT_TRUE(json_of(plugin.targets.settings).contains("statusLine"));
  EXPECT_NE(out.str().find("ctxkit runs as the plugin"), std::string::npos) << out.str();
}

// The plugin's files: refused while a program is missing; then the manifest with the version,
// the hooks, and both servers under ${CLAUDE_PLUGIN_ROOT}.
TEST(Setup, ThePluginIsWrittenOnlyOnceItsProgramsAreThere) {
  test::TempDir tmp;
  const fs::path out_dir = tmp / "plugin";
  std::ostringstream out;
  auto missing = write_plugin(out_dir, tmp / "data", tmp / "data/skills", "9.8.7", out);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find(" is missing; copy the programs into "), std::string::npos)
      << missing.error().message;
  for (const auto& program : claude::hook_programs())
    tmp.write("plugin/bin/" + program, "#!/bin/sh\n");
  tmp.write("plugin/bin/ctx-workflow-mcp", "#!/bin/sh\n");
  tmp.write("plugin/bin/ctx-archive-mcp", "#!/bin/sh\n");
  ASSERT_TRUE(write_plugin(out_dir, tmp / "data", tmp / "data/skills", "9.8.7", out)) << out.str();
  EXPECT_EQ(json_of(out_dir / ".claude-plugin/plugin.json")["version"], "9.8.7");
  EXPECT_TRUE(json_of(out_dir / "hooks/hooks.json")["hooks"].contains("PostToolUse"));
  const ojson mcp = json_of(out_dir / ".mcp.json")["mcpServers"];
  EXPECT_EQ(mcp["ctxkit-workflow"]["command"], "${CLAUDE_PLUGIN_ROOT}/bin/ctx-workflow-mcp");
  EXPECT_EQ(mcp["ctxkit-archive"]["command"], "${CLAUDE_PLUGIN_ROOT}/bin/ctx-archive-mcp");
}

}  // namespace
}  // namespace ctxkit::install
