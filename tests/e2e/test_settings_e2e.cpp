#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "e2e/e2e_support.hpp"
#include "util/process.hpp"
#include "util/shell.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

std::vector<fs::path> backups(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().starts_with("settings.json.ctxkit-backup-"))
      out.push_back(e.path());
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
  std::vector<std::string> args = {"install",
                                   "--settings",
                                   s.string(),
                                   "--bin-dir",
                                   "/opt/ctxkit/bin",
                                   "--manifest",
                                   (tmp / "share/manifest.json").string()};
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
  EXPECT_NE(r.out.find("already registered: PostToolUse hook /opt/ctxkit/bin/ctx-remind"),
            std::string::npos);

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
  auto r = run_tool("ctx-settings", {"install", "--settings", link.string(), "--bin-dir", "/b"}, "",
                    tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(ojson::parse(read_file(real))["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
            "/b/ctx-remind");
  EXPECT_EQ(backups(link.parent_path()).size(), 1u);
}

TEST(Settings, MissingFileIsCreatedAndRemovedAgainByUninstall) {
  TempDir tmp;
  fs::path s = tmp / "proj/.claude/settings.json";
  std::string manifest = (tmp / "m.json").string();
  auto r =
      run_tool("ctx-settings",
               {"install", "--settings", s.string(), "--bin-dir", "/b", "--manifest", manifest}, "",
               tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(ojson::parse(read_file(s)).contains("statusLine"));
  EXPECT_TRUE(backups(s.parent_path()).empty());
  r = run_tool("ctx-settings",
               {"uninstall", "--settings", s.string(), "--bin-dir", "/b", "--manifest", manifest},
               "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(s));
  EXPECT_TRUE(backups(s.parent_path()).empty());
}

TEST(Settings, UninstallKeepsAFileTheUserAddedTo) {
  TempDir tmp;
  fs::path s = tmp / "proj/.claude/settings.json";
  std::string manifest = (tmp / "m.json").string();
  ASSERT_EQ(
      run_tool("ctx-settings",
               {"install", "--settings", s.string(), "--bin-dir", "/b", "--manifest", manifest}, "",
               tmp.env())
          .exit_code,
      0);
  ojson j = ojson::parse(read_file(s));
  j["permissions"] = {{"allow", {"Bash(ls)"}}};
  std::ofstream(s) << j.dump(2);
  ASSERT_EQ(
      run_tool("ctx-settings",
               {"uninstall", "--settings", s.string(), "--bin-dir", "/b", "--manifest", manifest},
               "", tmp.env())
          .exit_code,
      0);
  EXPECT_EQ(ojson::parse(read_file(s)), (ojson{{"permissions", {{"allow", {"Bash(ls)"}}}}}));
}

TEST(Settings, InvalidJsonIsRefusedAndNothingIsWritten) {
  TempDir tmp;
  fs::path s = tmp.write("settings.json", "{\"hooks\": {,}\n");
  auto r = run_tool("ctx-settings", {"install", "--settings", s.string(), "--bin-dir", "/b"}, "",
                    tmp.env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1u);
  EXPECT_TRUE(r.err.starts_with("ctx-settings: error: " + s.string() +
                                " is not valid JSON: parse error at line 1"))
      << r.err;
  EXPECT_EQ(read_file(s), "{\"hooks\": {,}\n");
  EXPECT_TRUE(backups(tmp.path()).empty());
}

// docs/troubleshooting.md, "When things go wrong": a settings file of an unexpected shape is
// refused whole.
TEST(Settings, UnexpectedShapeIsRefusedAndNothingIsWritten) {
  for (const char* text : {"[]\n", "{\"hooks\": []}\n", "{\"hooks\": {\"PostToolUse\": {}}}\n",
                           "{\"hooks\": {\"PostToolUse\": [7]}}\n", "{\"statusLine\": 3}\n"}) {
    TempDir tmp;
    fs::path s = tmp.write("settings.json", text);
    auto r = run_tool("ctx-settings", {"install", "--settings", s.string(), "--bin-dir", "/b"}, "",
                      tmp.env());
    EXPECT_EQ(r.exit_code, 1) << text << r.out;
    EXPECT_EQ(line_count(r.err), 1u) << text << r.err;
    EXPECT_TRUE(r.err.starts_with("ctx-settings: error: ")) << r.err;
    EXPECT_EQ(read_file(s), text);
    EXPECT_TRUE(backups(tmp.path()).empty()) << text;
  }
}

// The per-user set-up (no --settings): hooks and status line, the MCP server, the skills.
namespace setup {

// A data folder like <prefix>/share/ctxkit with the project's skills.
fs::path data_dir(const TempDir& tmp) {
  fs::path d = tmp / "data";
  fs::create_directories(d);
  fs::copy(fs::path(CTXKIT_SOURCE_DIR) / "skills", d / "skills", fs::copy_options::recursive);
  return d;
}

std::vector<std::string> args(const std::string& action, const TempDir& tmp,
                              std::vector<std::string> more = {}) {
  std::vector<std::string> a{action, "--bin-dir", bin_dir(), "--data-dir", (tmp / "data").string()};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

const char* kUserSettings = R"({
  "model": "opus",
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  }
}
)";
const char* kClaudeJson =
    R"({"numStartups":3,"mcpServers":{"other":{"type":"stdio","command":"/usr/bin/other","args":[],"env":{}}}})";

}  // namespace setup

TEST(SettingsSetup, InstallRegistersHooksMcpAndSkillsAndUninstallRemovesExactlyThat) {
  TempDir tmp;
  setup::data_dir(tmp);
  fs::path s = tmp.write("home/.claude/settings.json", setup::kUserSettings);
  fs::path cj = tmp.write("home/.claude.json", setup::kClaudeJson);
  const std::string bin = bin_dir();

  auto r = run_tool("ctx-settings", setup::args("install", tmp), "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ojson j = ojson::parse(read_file(s));
  EXPECT_EQ(j["hooks"]["PostToolUse"][0]["hooks"][0]["command"], bin + "/ctx-remind");
  EXPECT_EQ(j["hooks"]["Stop"][0]["hooks"][0]["command"], "notify-send done");
  EXPECT_EQ(j["hooks"]["SessionStart"].size(), 2u);
  EXPECT_EQ(j["statusLine"]["command"], bin + "/ctx-status");
  ojson c = ojson::parse(read_file(cj));
  EXPECT_EQ(c["numStartups"], 3);
  EXPECT_EQ(c["mcpServers"]["other"]["command"], "/usr/bin/other");
  EXPECT_EQ(c["mcpServers"]["ctxkit-workflow"]["command"], bin + "/ctx-workflow-mcp");
  EXPECT_EQ(c["mcpServers"]["ctxkit-archive"]["command"], bin + "/ctx-archive-mcp");
  std::string skill = read_file(tmp / "home/.claude/skills/trim/SKILL.md");
  EXPECT_NE(skill.find(bin + "/ctx-trim"), std::string::npos);
  EXPECT_EQ(skill.find("@CTXKIT_BIN@"), std::string::npos);
  EXPECT_TRUE(fs::exists(tmp / "home/.claude/skills/workflow/SKILL.md"));
  std::string recall = read_file(tmp / "home/.claude/skills/recall/SKILL.md");
  EXPECT_NE(recall.find("allowed-tools: mcp__ctxkit-archive__archive_search,"), std::string::npos);
  EXPECT_NE(recall.find("Bash(" + bin + "/ctx-search:*)"), std::string::npos);
  EXPECT_NE(r.out.find("installed skill /trim"), std::string::npos);
  EXPECT_FALSE(fs::is_empty(tmp / "home/.local/state/ctxkit/install"));

  // Twice: nothing changes.
  std::string s1 = read_file(s), c1 = read_file(cj);
  r = run_tool("ctx-settings", setup::args("install", tmp), "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(s), s1);
  EXPECT_EQ(read_file(cj), c1);

  // A skill folder the user added beside ours stays.
  tmp.write("home/.claude/skills/mine/SKILL.md", "---\nname: mine\n---\n");
  r = run_tool("ctx-settings", setup::args("uninstall", tmp), "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ojson::parse(read_file(s)), ojson::parse(setup::kUserSettings));
  EXPECT_EQ(ojson::parse(read_file(cj)), ojson::parse(setup::kClaudeJson));
  EXPECT_FALSE(fs::exists(tmp / "home/.claude/skills/trim"));
  EXPECT_FALSE(fs::exists(tmp / "home/.claude/skills/recall"));
  EXPECT_FALSE(fs::exists(tmp / "home/.claude/skills/.ctxkit-installed"));
  EXPECT_TRUE(fs::exists(tmp / "home/.claude/skills/mine/SKILL.md"));
  EXPECT_TRUE(fs::is_empty(tmp / "home/.local/state/ctxkit/install"));

  // Nothing recorded: a second uninstall changes nothing.
  std::string s2 = read_file(s);
  r = run_tool("ctx-settings", setup::args("uninstall", tmp), "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nothing recorded as installed"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(s), s2);
}

// A settings file whose status line is the user's own script (with a space in its path).
struct TheirStatusLine {
  fs::path settings, script;
  std::string command;
  ojson original;
  explicit TheirStatusLine(const TempDir& tmp) {
    script = tmp.write("my scripts/line.sh",
                       "#!/bin/sh\nin=$(cat)\ncase \"$in\" in *'\"session_id\":\"S\"'*) echo "
                       "\"mine $1\";; *) echo wrong input;; esac\n");
    ::chmod(script.c_str(), 0755);
    command = util::shell_quote(script.string()) + " \"it's\"";
    original = ojson{{"type", "command"}, {"command", command}, {"padding", 2}};
    ojson s{{"model", "opus"}, {"statusLine", original}, {"theme", "dark"}};
    settings = tmp.write("home/.claude/settings.json", s.dump(2) + "\n");
  }
};

TEST(SettingsSetup, KeepsTheUsersStatusLineAndOffersToWrapIt) {
  TempDir tmp;
  setup::data_dir(tmp);
  TheirStatusLine theirs(tmp);
  auto r = run_tool("ctx-settings", setup::args("install", tmp), "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ojson j = ojson::parse(read_file(theirs.settings));
  EXPECT_EQ(j["statusLine"].dump(), theirs.original.dump());
  EXPECT_EQ(j["hooks"]["PostToolUse"][0]["hooks"][0]["command"], bin_dir() + "/ctx-remind");
  const std::string offer =
      "ctxkit: your status line '" + theirs.command + "' is kept; to show ctxkit's beside it run: ";
  auto at = r.out.find(offer);
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string hint = r.out.substr(at + offer.size(), r.out.find('\n', at) - at - offer.size());
  EXPECT_TRUE(hint.ends_with(" install --bin-dir " + bin_dir() + " --data-dir " +
                             (tmp / "data").string() + " --wrap-status-line"))
      << hint;
  // The offer is made once per install, not for a status line that is ours.
  EXPECT_EQ(r.out.find(offer, at + 1), std::string::npos);
}

TEST(SettingsSetup, WrapStatusLineShowsBothOnceAndUninstallPutsTheirsBack) {
  TempDir tmp;
  setup::data_dir(tmp);
  TheirStatusLine theirs(tmp);
  const std::string before = read_file(theirs.settings);
  auto r =
      run_tool("ctx-settings", setup::args("install", tmp, {"--wrap-status-line"}), "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("is kept; to show"), std::string::npos) << r.out;
  ojson j = ojson::parse(read_file(theirs.settings));
  const std::string wrapped = bin_dir() + "/ctx-status --wrap " + util::shell_quote(theirs.command);
  EXPECT_EQ(j["statusLine"]["command"], wrapped);
  EXPECT_EQ(j["statusLine"]["padding"], 2);
  EXPECT_EQ(j["theme"], "dark");

  // The client runs the command through a shell, with the status payload on stdin.
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  env.set("PATH", "/usr/bin:/bin");
  util::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", j["statusLine"]["command"].get<std::string>()};
  spec.env.emplace(env.vars().begin(), env.vars().end());
  ojson payload{{"session_id", "S"},
                {"transcript_path", (tmp / "t.jsonl").string()},
                {"context_window",
                 {{"context_window_size", 1000000},
                  {"current_usage",
                   {{"input_tokens", 1},
                    {"cache_creation_input_tokens", 0},
                    {"cache_read_input_tokens", 483499}}}}}};
  spec.stdin_data = payload.dump();
  spec.timeout = std::chrono::seconds(20);
  auto run = util::run_process(spec);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->exit_code, 0) << run->err;
  EXPECT_EQ(run->out, "mine it's │ Context 48% of window · 484k of 1M\n");

  // Twice: not wrapped twice, nothing changes.
  const std::string once = read_file(theirs.settings);
  r = run_tool("ctx-settings", setup::args("install", tmp, {"--wrap-status-line"}), "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(theirs.settings), once);
  EXPECT_NE(r.out.find("already registered: statusLine " + wrapped), std::string::npos) << r.out;
  r = run_tool("ctx-settings", setup::args("install", tmp), "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(theirs.settings), once);
  EXPECT_EQ(r.out.find("is kept; to show"), std::string::npos) << r.out;

  r = run_tool("ctx-settings", setup::args("uninstall", tmp), "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ojson after = ojson::parse(read_file(theirs.settings));
  EXPECT_EQ(after["statusLine"].dump(), theirs.original.dump());
  EXPECT_EQ(after.dump(), ojson::parse(before).dump());
}

TEST(SettingsSetup, UninstallLeavesAStatusLineChangedSinceTheWrap) {
  TempDir tmp;
  setup::data_dir(tmp);
  TheirStatusLine theirs(tmp);
  auto r =
      run_tool("ctx-settings", setup::args("install", tmp, {"--wrap-status-line"}), "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ojson j = ojson::parse(read_file(theirs.settings));
  j["statusLine"]["command"] = "newer-line";
  tmp.write("home/.claude/settings.json", j.dump(2));
  r = run_tool("ctx-settings", setup::args("uninstall", tmp), "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ojson::parse(read_file(theirs.settings))["statusLine"]["command"], "newer-line");
}

TEST(Settings, WrapStatusLineWithASettingsFileNeedsAManifest) {
  TempDir tmp;
  TheirStatusLine theirs(tmp);
  const std::string before = read_file(theirs.settings);
  auto r = run_tool(
      "ctx-settings",
      {"install", "--settings", theirs.settings.string(), "--bin-dir", "/b", "--wrap-status-line"},
      "", tmp.env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "ctx-settings: error: --wrap-status-line needs --manifest (where uninstall finds the "
            "status line to put back)\n");
  EXPECT_EQ(read_file(theirs.settings), before);
}

TEST(SettingsSetup, ProjectInstallWritesOnlyTheProjectsFiles) {
  TempDir tmp;
  setup::data_dir(tmp);
  fs::create_directories(tmp / "proj");
  const std::string bin = bin_dir();
  auto r =
      run_tool("ctx-settings", setup::args("install", tmp, {"--project", (tmp / "proj").string()}),
               "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ojson j = ojson::parse(read_file(tmp / "proj/.claude/settings.json"));
  EXPECT_EQ(j["hooks"]["PostToolUse"][0]["hooks"][0]["command"], bin + "/ctx-remind");
  ojson m = ojson::parse(read_file(tmp / "proj/.mcp.json"));
  EXPECT_EQ(m["mcpServers"]["ctxkit-workflow"]["command"], bin + "/ctx-workflow-mcp");
  EXPECT_EQ(m["mcpServers"]["ctxkit-archive"]["command"], bin + "/ctx-archive-mcp");
  EXPECT_TRUE(fs::exists(tmp / "proj/.claude/skills/rollover/SKILL.md"));
  EXPECT_FALSE(fs::exists(tmp / "home/.claude"));
  EXPECT_FALSE(fs::exists(tmp / "home/.claude.json"));

  r = run_tool("ctx-settings",
               setup::args("uninstall", tmp, {"--project", (tmp / "proj").string()}), "",
               tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "proj/.claude/settings.json"));
  EXPECT_FALSE(fs::exists(tmp / "proj/.mcp.json"));
  EXPECT_FALSE(fs::exists(tmp / "proj/.claude/skills"));
}

// The plugin and a settings install would both run (the client loads both sets of hooks): the
// plugin's part of the set-up (the status line) keeps the plugin; a settings install takes the
// plugin's place and disables it.
TEST(SettingsSetup, AnInstallTakesThePluginsPlaceAndTheStatusLineOnlyInstallKeepsIt) {
  TempDir tmp;
  setup::data_dir(tmp);
  const std::string user = R"({"enabledPlugins":{"ctxkit@ctxkit":true,"other@x":true}})";
  fs::path s = tmp.write("home/.claude/settings.json", user);
  auto r =
      run_tool("ctx-settings", setup::args("install", tmp, {"--status-line-only"}), "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ojson j = ojson::parse(read_file(s));
  EXPECT_EQ(j["statusLine"]["command"], bin_dir() + "/ctx-status");
  EXPECT_EQ(j["enabledPlugins"]["ctxkit@ctxkit"], true);
  EXPECT_FALSE(j.contains("hooks"));
  EXPECT_FALSE(fs::exists(tmp / "home/.claude.json"));
  r = run_tool("ctx-settings", setup::args("uninstall", tmp), "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ojson::parse(read_file(s)), ojson::parse(user));

  r = run_tool("ctx-settings", setup::args("install", tmp), "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = ojson::parse(read_file(s));
  EXPECT_EQ(j["enabledPlugins"].dump(), R"({"ctxkit@ctxkit":false,"other@x":true})");
  EXPECT_EQ(j["hooks"]["PostToolUse"][0]["hooks"][0]["command"], bin_dir() + "/ctx-remind");
  EXPECT_NE(r.out.find("disabled: plugin ctxkit@ctxkit (this install takes its place; its hooks "
                       "would run beside these)"),
            std::string::npos)
      << r.out;
  r = run_tool("ctx-settings", {"active"}, "", tmp.env());
  EXPECT_EQ(r.out.find("plugin:"), std::string::npos) << r.out;

  // The settings-file form disables it the same way; a plugin enabled for every project in the
  // user's settings while another file is edited is refused (nothing written).
  fs::path other = tmp.write("proj/.claude/settings.json", "{}");
  tmp.write("home/.claude/settings.json", user);
  r = run_tool("ctx-settings", {"install", "--settings", other.string(), "--bin-dir", "/b"}, "",
               tmp.env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1u);
  EXPECT_NE(r.err.find("claude plugin disable ctxkit@ctxkit"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(other), "{}");
  r = run_tool("ctx-settings", {"install", "--settings", s.string(), "--bin-dir", "/b"}, "",
               tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ojson::parse(read_file(s))["enabledPlugins"]["ctxkit@ctxkit"], false);
}

TEST(SettingsSetup, ActiveNamesTheInstallInUse) {
  TempDir tmp;
  setup::data_dir(tmp);
  auto r = run_tool("ctx-settings", {"active"}, "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "none\n");
  ASSERT_EQ(run_tool("ctx-settings", setup::args("install", tmp), "", tmp.env()).exit_code, 0);
  r = run_tool("ctx-settings", {"active"}, "", tmp.env());
  EXPECT_EQ(r.out, "settings: 5 ctxkit hook commands in " +
                       (tmp / "home/.claude/settings.json").string() + "\n");
  fs::path p =
      tmp.write("proj/.claude/settings.local.json", R"({"enabledPlugins":{"ctxkit@local":true}})");
  r = run_tool("ctx-settings", {"active", "--project", (tmp / "proj").string()}, "", tmp.env());
  EXPECT_NE(r.out.find("plugin: ctxkit@local enabled in " + p.string()), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("settings: 5 ctxkit hook commands"), std::string::npos) << r.out;
  // Both: what that does, and the one command that keeps each.
  EXPECT_NE(r.out.find("both: the client runs every ctxkit hook twice; keep the settings install "
                       "with: " +
                       bin_dir() +
                       "/ctx-settings install (it disables the plugin), or the plugin "
                       "with: "),
            std::string::npos)
      << r.out;
}

TEST(SettingsPlugin, WritesThePluginFromTheSameHookListAsTheSettingsInstall) {
  TempDir tmp;
  fs::path out = tmp / "plugin";
  fs::create_directories(out / "bin");
  // Without the programs in bin/ the plugin is refused: its hooks would name missing files.
  auto r = run_tool("ctx-settings",
                    {"plugin", "--out", out.string(), "--data-dir",
                     (fs::path(CTXKIT_SOURCE_DIR) / "share").string(), "--skills-dir",
                     (fs::path(CTXKIT_SOURCE_DIR) / "skills").string()},
                    "", tmp.env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("ctx-remind is missing"), std::string::npos) << r.err;
  for (const auto& e : fs::directory_iterator(bin_dir()))
    if (e.is_regular_file() && e.path().filename().string().starts_with("ctx-"))
      fs::copy_file(e.path(), out / "bin" / e.path().filename());
  r = run_tool("ctx-settings",
               {"plugin", "--out", out.string(), "--data-dir",
                (fs::path(CTXKIT_SOURCE_DIR) / "share").string(), "--skills-dir",
                (fs::path(CTXKIT_SOURCE_DIR) / "skills").string()},
               "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;

  ojson plugin = ojson::parse(read_file(out / ".claude-plugin/plugin.json"));
  EXPECT_EQ(plugin["name"], "ctxkit");
  EXPECT_EQ(plugin["version"], expected_version());
  ojson market = ojson::parse(read_file(out / ".claude-plugin/marketplace.json"));
  EXPECT_EQ(market["plugins"][0]["name"], "ctxkit");
  EXPECT_EQ(market["plugins"][0]["source"], "./");

  // Every hook of the settings install, in the same order, run from ${CLAUDE_PLUGIN_ROOT}/bin.
  ojson snippet =
      ojson::parse(run_tool("ctx-settings", {"snippet", "--bin-dir", "/B"}, "", tmp.env()).out);
  ojson hooks = ojson::parse(read_file(out / "hooks/hooks.json"))["hooks"];
  ASSERT_EQ(hooks.size(), snippet["hooks"].size());
  size_t n = 0;
  for (const auto& [event, groups] : snippet["hooks"].items()) {
    ASSERT_EQ(hooks[event].size(), groups.size()) << event;
    for (size_t i = 0; i < groups.size(); ++i) {
      EXPECT_EQ(hooks[event][i].value("matcher", ""), groups[i].value("matcher", "")) << event;
      std::string want = groups[i]["hooks"][0]["command"].get<std::string>();
      std::string got = hooks[event][i]["hooks"][0]["command"].get<std::string>();
      const std::string root = "\"${CLAUDE_PLUGIN_ROOT}/bin/";
      ASSERT_TRUE(got.starts_with(root)) << got;
      const size_t end = got.find('"', root.size());
      std::string program = got.substr(root.size(), end - root.size());
      EXPECT_EQ(want, "/B/" + program + got.substr(end + 1)) << got;
      EXPECT_TRUE(fs::is_regular_file(out / "bin" / program)) << program;
      ++n;
    }
  }
  EXPECT_EQ(n, 10u);
  ojson mcp = ojson::parse(read_file(out / ".mcp.json"));
  EXPECT_EQ(mcp["mcpServers"]["ctxkit-workflow"]["command"],
            "${CLAUDE_PLUGIN_ROOT}/bin/ctx-workflow-mcp");
  EXPECT_EQ(mcp["mcpServers"]["ctxkit-archive"]["command"],
            "${CLAUDE_PLUGIN_ROOT}/bin/ctx-archive-mcp");
  // Skills call the programs by name (the plugin's bin/ is on the Bash tool's PATH).
  std::string skill = read_file(out / "skills/trim/SKILL.md");
  EXPECT_EQ(skill.find("@CTXKIT_BIN@"), std::string::npos);
  EXPECT_NE(skill.find("allowed-tools: Bash(ctx-trim:*)"), std::string::npos);
  // The workflows where ctx-workflow-mcp looks for them: <bin>/../share/ctxkit/workflows.
  EXPECT_TRUE(fs::exists(out / "share/ctxkit/workflows/feature.yaml"));
  EXPECT_TRUE(fs::exists(out / "share/ctxkit/prompts/continuation.md"));
}

TEST(SettingsPlugin, TheShippedSnippetListsTheSameHooks) {
  TempDir tmp;
  auto r = run_tool("ctx-settings", {"snippet", "--bin-dir", "/B"}, "", tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ojson want = ojson::parse(r.out)["hooks"];
  ojson got =
      ojson::parse(read_file(fs::path(CTXKIT_SOURCE_DIR) / "share/settings-snippet.json"))["hooks"];
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [event, groups] : want.items()) {
    ASSERT_EQ(got[event].size(), groups.size()) << event;
    for (size_t i = 0; i < groups.size(); ++i) {
      EXPECT_EQ(got[event][i].value("matcher", ""), groups[i].value("matcher", "")) << event;
      std::string w = groups[i]["hooks"][0]["command"].get<std::string>();
      std::string g = got[event][i]["hooks"][0]["command"].get<std::string>();
      EXPECT_EQ(g, "$HOME/.local/bin/" + w.substr(3)) << event;
    }
  }
}

}  // namespace
}  // namespace ctxkit::test
