// Two installs of ctxkit one after the other in a scratch HOME, as a user makes them: the script
// into one prefix and later another, the package then the script, the script then the plugin, the
// plugin then the script. Each pair ends with one ctxkit registration per hook (the later install
// took the earlier one's over, one line each), the user's own entries untouched, and ctx-doctor
// of the later install without a FAULT line. The installs are copies of the built programs in
// prefix folders, set up by their own ctx-settings the way install.sh, the package and the plugin
// do it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "e2e/e2e_support.hpp"
#include "util/shell.hpp"

namespace ctxkit::test {
namespace install_pairs {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

const char* kUserSettings = R"({
  "model": "opus",
  "hooks": {
    "PostToolUse": [
      {"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}
    ]
  }
}
)";
const char* kUserClaudeJson =
    R"({"numStartups":3,"mcpServers":{"other":{"type":"stdio","command":"/usr/bin/other","args":[],"env":{}}}})";

// A scratch HOME with the user's own settings and MCP server, a fake `claude` on PATH.
struct Home {
  TempDir tmp;
  util::Env env;
  fs::path settings, claude_json;

  Home() {
    env = tmp.env();
    auto fake = tmp.write("tools/claude", "#!/bin/sh\necho '2.1.197 (Claude Code)'\n");
    ::chmod(fake.c_str(), 0755);
    env.set("PATH", (tmp / "tools").string() + ":/usr/local/bin:/usr/bin:/bin");
    settings = tmp.write("home/.claude/settings.json", kUserSettings);
    claude_json = tmp.write("home/.claude.json", kUserClaudeJson);
  }

  // An install's folder, as install.sh (<prefix>/bin, <prefix>/share/ctxkit with its list of
  // installed files) or the package (/usr/bin, /usr/share/ctxkit) lays it out: every program of
  // this build and the skills.
  fs::path prefix(const std::string& name, bool by_script = true) const {
    fs::path p = tmp / name;
    fs::create_directories(p / "bin");
    for (const auto& e : fs::directory_iterator(bin_dir())) {
      const std::string file = e.path().filename().string();
      if (!e.is_regular_file() || !file.starts_with("ctx-")) continue;
      std::error_code ec;
      fs::create_hard_link(e.path(), p / "bin" / file, ec);
      if (ec) fs::copy_file(e.path(), p / "bin" / file);
    }
    fs::create_directories(p / "share/ctxkit");
    fs::copy(fs::path(CTXKIT_SOURCE_DIR) / "skills", p / "share/ctxkit/skills",
             fs::copy_options::recursive);
    if (by_script) tmp.write(name + "/share/ctxkit/installed-files.txt", "");
    return p;
  }

  // The plugin: `ctx-settings plugin` over a folder holding the programs.
  fs::path plugin(const std::string& name) const {
    fs::path p = prefix(name, false);
    fs::remove_all(p / "share");
    auto r = run(p, "ctx-settings",
                 {"plugin", "--out", p.string(), "--data-dir",
                  (fs::path(CTXKIT_SOURCE_DIR) / "share").string(), "--skills-dir",
                  (fs::path(CTXKIT_SOURCE_DIR) / "skills").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return p;
  }

  // Runs a program of an install.
  util::ProcessResult run(const fs::path& install, const std::string& program,
                          const std::vector<std::string>& args) const {
    util::ProcessSpec spec;
    spec.argv = {(install / "bin" / program).string()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env = std::map<std::string, std::string>(env.vars().begin(), env.vars().end());
    spec.cwd = tmp.path();
    spec.timeout = std::chrono::seconds(60);
    auto r = util::run_process(spec);
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    return r ? *r : util::ProcessResult{};
  }

  // A command line as the doctor advises it, run by the shell.
  util::ProcessResult shell(const std::string& command) const {
    util::ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", command};
    spec.env = std::map<std::string, std::string>(env.vars().begin(), env.vars().end());
    spec.cwd = tmp.path();
    spec.timeout = std::chrono::seconds(60);
    auto r = util::run_process(spec);
    EXPECT_TRUE(r);
    return r ? *r : util::ProcessResult{};
  }

  // install.sh's per-user step: records beside the programs (--manifest-dir, which is also where
  // ctx-settings keeps them by itself in an install.sh prefix).
  util::ProcessResult script_install(const fs::path& p, std::vector<std::string> more = {}) const {
    std::vector<std::string> a{"install", "--manifest-dir", (p / "share/ctxkit").string()};
    a.insert(a.end(), more.begin(), more.end());
    return run(p, "ctx-settings", a);
  }
  util::ProcessResult script_uninstall(const fs::path& p,
                                       std::vector<std::string> more = {}) const {
    std::vector<std::string> a{"uninstall"};
    a.insert(a.end(), more.begin(), more.end());
    return run(p, "ctx-settings", a);
  }
  // What `claude plugin install ctxkit@ctxkit` leaves: the plugin installed and enabled.
  void enable_plugin(const fs::path& root) const {
    tmp.write("home/.claude/plugins/installed_plugins.json",
              ojson{{"version", 2},
                    {"plugins",
                     {{"ctxkit@ctxkit", {{{"scope", "user"}, {"installPath", root.string()}}}}}}}
                  .dump());
    ojson s = settings_json();
    s["enabledPlugins"]["ctxkit@ctxkit"] = true;
    tmp.write("home/.claude/settings.json", s.dump(2));
  }
  // The doctor asks every program for its version at once: under a sanitizer on a loaded machine
  // that takes longer than the default 5 s bound.
  util::ProcessResult doctor(const fs::path& install) const {
    return run(install, "ctx-doctor", {"--timeout-ms", "30000"});
  }
  ojson settings_json() const { return ojson::parse(read_file(settings)); }
  ojson claude_json_doc() const { return ojson::parse(read_file(claude_json)); }
};

// Every hook command of a settings document, "Event[matcher] command".
std::vector<std::string> hooks_of(const ojson& s) {
  std::vector<std::string> out;
  if (!s.contains("hooks")) return out;
  for (const auto& [event, groups] : s["hooks"].items())
    for (const auto& g : groups) {
      auto m = g.find("matcher");
      const std::string matcher = m != g.end() && m->is_string() ? m->get<std::string>() : "";
      for (const auto& h : g["hooks"])
        out.push_back(event + "[" + matcher + "] " + h["command"].get<std::string>());
    }
  return out;
}

// ctxkit's hooks as an install in `bin` registers them, after the user's own.
std::vector<std::string> expected_hooks(const fs::path& bin) {
  const std::string b = bin.string();
  return {"PostToolUse[Edit] prettier --write",
          "PostToolUse[*] " + b + "/ctx-remind",
          "PostToolUse[Bash|mcp__.*] " + b + "/ctx-cap",
          "SessionStart[] " + b + "/ctx-session-hook",
          "SessionStart[clear|compact] " + b + "/ctx-gate --hook",
          "Stop[] " + b + "/ctx-session-hook",
          "PreCompact[] " + b + "/ctx-session-hook",
          "PreCompact[] " + b + "/ctx-pin --hook",
          "SessionEnd[] " + b + "/ctx-session-hook",
          "PostCompact[] " + b + "/ctx-pin --hook",
          "UserPromptSubmit[] " + b + "/ctx-pin --hook"};
}

size_t count_lines_starting(const std::string& out, const std::string& prefix) {
  size_t n = 0, start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (out.compare(start, prefix.size(), prefix) == 0) ++n;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return n;
}

// The doctor's line of a finding that starts with `prefix`, or empty.
std::string line_of(const std::string& out, const std::string& prefix) {
  size_t at = out.find(prefix);
  if (at == std::string::npos) return {};
  return out.substr(at, out.find('\n', at) - at);
}

void expect_healthy(const Home& home, const fs::path& install) {
  auto r = home.doctor(install);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("FAULT"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("more than one install"), std::string::npos) << r.out;
}

TEST(InstallPairs, ScriptThenScriptInAnotherPrefixTakesEveryEntryOver) {
  Home home;
  const fs::path a = home.prefix("local"), b = home.prefix("opt-ctxkit");
  auto r = home.script_install(a);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = home.script_install(b);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(hooks_of(home.settings_json()), expected_hooks(b / "bin"));
  EXPECT_EQ(home.settings_json()["statusLine"]["command"], (b / "bin/ctx-status").string());
  ojson c = home.claude_json_doc();
  EXPECT_EQ(c["mcpServers"]["ctxkit-workflow"]["command"], (b / "bin/ctx-workflow-mcp").string());
  EXPECT_EQ(c["mcpServers"]["ctxkit-archive"]["command"], (b / "bin/ctx-archive-mcp").string());
  EXPECT_EQ(c["mcpServers"]["other"]["command"], "/usr/bin/other");
  // One line per entry replaced, none kept "yours" or "run again with --replace".
  EXPECT_EQ(count_lines_starting(r.out, "replaced: "), 13u) << r.out;
  EXPECT_NE(r.out.find("replaced: PostToolUse hook " + (a / "bin/ctx-remind").string() + " (now " +
                       (b / "bin/ctx-remind").string() + ")"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("replaced: MCP server ctxkit-workflow " + (a / "bin/ctx-workflow-mcp").string()),
      std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("--replace"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("kept"), std::string::npos) << r.out;
  std::string skill = read_file(home.tmp / "home/.claude/skills/trim/SKILL.md");
  EXPECT_NE(skill.find((b / "bin/ctx-trim").string()), std::string::npos);
  expect_healthy(home, b);
  // The first install's records went with its entries: its uninstall leaves the second's alone.
  for (const auto& e : fs::directory_iterator(a / "share/ctxkit"))
    EXPECT_FALSE(e.path().filename().string().ends_with(".json")) << e.path();
  const std::string before = read_file(home.settings);
  r = home.script_uninstall(a);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(home.settings), before);
  EXPECT_TRUE(fs::exists(home.tmp / "home/.claude/skills/trim/SKILL.md")) << r.out;
  expect_healthy(home, b);
  // The second's uninstall gives the user's files back as they were before either install.
  r = home.script_uninstall(b);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(home.settings_json(), ojson::parse(kUserSettings)) << r.out;
  EXPECT_EQ(home.claude_json_doc(), ojson::parse(kUserClaudeJson)) << r.out;
  EXPECT_FALSE(fs::exists(home.tmp / "home/.claude/skills/trim"));
}

TEST(InstallPairs, PackageThenScriptTakesTheEntriesAndTheRecordsOver) {
  Home home;
  const fs::path usr = home.prefix("usr", false), s = home.prefix("local");
  // The package's per-user step keeps its records in $XDG_STATE_HOME/ctxkit/install.
  auto r = home.run(usr, "ctx-settings", {"install"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path records = home.tmp / "home/.local/state/ctxkit/install";
  ASSERT_FALSE(fs::is_empty(records));
  // They are in ctxkit's state folder, which stays private (the doctor faults one open to others).
  for (const fs::path& dir : {records.parent_path(), records}) {
    struct stat st {};
    ASSERT_EQ(::stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u) << dir;
  }
  r = home.script_install(s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(hooks_of(home.settings_json()), expected_hooks(s / "bin"));
  EXPECT_EQ(count_lines_starting(r.out, "replaced: "), 13u) << r.out;
  EXPECT_TRUE(fs::is_empty(records)) << "the package's records were taken over";
  expect_healthy(home, s);
  // The package's uninstall (before apt-get remove) finds nothing of its own and says so.
  const std::string before = read_file(home.settings);
  r = home.run(usr, "ctx-settings", {"uninstall"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nothing recorded as installed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kept: ctxkit's entries in " + home.settings.string() +
                       " that run the programs of another install (" + (s / "bin").string() +
                       "); remove them from there, or with: ctx-settings uninstall --all"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(read_file(home.settings), before);
  r = home.script_uninstall(s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(home.settings_json(), ojson::parse(kUserSettings)) << r.out;
  EXPECT_EQ(home.claude_json_doc(), ojson::parse(kUserClaudeJson)) << r.out;
}

TEST(InstallPairs, ScriptThenPluginLeavesThePluginAndItsStatusLine) {
  Home home;
  const fs::path a = home.prefix("local");
  ASSERT_EQ(home.script_install(a).exit_code, 0);
  const fs::path p = home.plugin("plugin");
  // install.sh --plugin runs the plugin's part of the set-up from the plugin.
  auto r = home.run(p, "ctx-settings", {"install", "--status-line-only"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(hooks_of(home.settings_json()),
            (std::vector<std::string>{"PostToolUse[Edit] prettier --write"}));
  EXPECT_EQ(home.settings_json()["statusLine"]["command"], (p / "bin/ctx-status").string());
  EXPECT_EQ(home.claude_json_doc(), ojson::parse(kUserClaudeJson)) << r.out;
  EXPECT_FALSE(fs::exists(home.tmp / "home/.claude/skills/trim")) << "the plugin has its own";
  EXPECT_NE(r.out.find("removed: PostToolUse hook " + (a / "bin/ctx-remind").string()),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ctxkit runs as the plugin"), std::string::npos) << r.out;
  home.enable_plugin(p);
  expect_healthy(home, p);
  auto d = home.doctor(p);
  EXPECT_NE(d.out.find("ok    install: plugin ctxkit@ctxkit"), std::string::npos) << d.out;
}

TEST(InstallPairs, PluginThenScriptDisablesThePluginAndTakesItsStatusLine) {
  Home home;
  const fs::path p = home.plugin("plugin");
  home.enable_plugin(p);
  ASSERT_EQ(home.run(p, "ctx-settings", {"install", "--status-line-only"}).exit_code, 0);
  expect_healthy(home, p);
  const fs::path a = home.prefix("local");
  auto r = home.script_install(a);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ojson s = home.settings_json();
  EXPECT_EQ(s["enabledPlugins"]["ctxkit@ctxkit"], false);
  EXPECT_EQ(hooks_of(s), expected_hooks(a / "bin"));
  EXPECT_EQ(s["statusLine"]["command"], (a / "bin/ctx-status").string());
  EXPECT_NE(r.out.find("disabled: plugin ctxkit@ctxkit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("replaced: statusLine " + (p / "bin/ctx-status").string()),
            std::string::npos)
      << r.out;
  expect_healthy(home, a);
  // Its uninstall leaves nothing of ctxkit registered (the plugin stays disabled).
  r = home.script_uninstall(a);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ojson after = home.settings_json();
  EXPECT_EQ(hooks_of(after), (std::vector<std::string>{"PostToolUse[Edit] prettier --write"}));
  EXPECT_FALSE(after.contains("statusLine")) << after.dump();
  EXPECT_EQ(home.claude_json_doc(), ojson::parse(kUserClaudeJson)) << r.out;
}

// Both registered (the plugin enabled by `claude plugin install` after a settings install): the
// doctor's advice is one command, and running it leaves one install and a healthy doctor, from
// either side.
TEST(InstallPairs, TheDoctorsAdviceForBothIsOneCommandThatWorks) {
  for (bool from_plugin : {false, true}) {
    Home home;
    const fs::path a = home.prefix("local");
    ASSERT_EQ(home.script_install(a).exit_code, 0);
    const fs::path p = home.plugin("plugin");
    home.enable_plugin(p);
    const fs::path doctor = from_plugin ? p : a;
    auto d = home.doctor(doctor);
    EXPECT_EQ(d.exit_code, 1) << d.out;
    const std::string fault = line_of(d.out, "FAULT install: ctxkit is registered twice");
    ASSERT_FALSE(fault.empty()) << d.out;
    const std::string command = fault.substr(fault.find(" → ") + std::string(" → ").size());
    const std::string keep = from_plugin ? " (keeps the plugin)"
                                         : " (keeps the settings install and disables the plugin)";
    ASSERT_TRUE(command.ends_with(keep)) << command;
    auto r = home.shell(command.substr(0, command.size() - keep.size()));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    expect_healthy(home, doctor);
    EXPECT_EQ(home.settings_json()["enabledPlugins"]["ctxkit@ctxkit"], from_plugin);
  }
}

// The issue's file: every hook registered twice by installs from two prefixes (as before
// installs took each other's entries over). The doctor's advice repairs it in one command.
TEST(InstallPairs, HooksRegisteredTwiceAreRepairedByTheDoctorsOneCommand) {
  Home home;
  const fs::path a = home.prefix("local"), b = home.prefix("opt");
  ASSERT_EQ(home.script_install(a).exit_code, 0);
  ojson s = home.settings_json();
  for (auto& [event, groups] : s["hooks"].items()) {
    const size_t n = groups.size();
    for (size_t i = 0; i < n; ++i) {
      std::string cmd = groups[i]["hooks"][0]["command"];
      if (cmd.find((a / "bin").string()) != 0) continue;
      ojson copy = groups[i];
      copy["hooks"][0]["command"] = (b / "bin").string() + cmd.substr((a / "bin").string().size());
      groups.push_back(copy);
    }
  }
  home.tmp.write("home/.claude/settings.json", s.dump(2));
  auto d = home.doctor(b);
  EXPECT_EQ(count_lines_starting(d.out, "FAULT hooks: "), 10u) << d.out;
  const std::string fault = line_of(d.out,
                                    "FAULT hooks: PostToolUse[*] hook ctx-remind is "
                                    "registered 2 times");
  ASSERT_FALSE(fault.empty()) << d.out;
  const std::string command = fault.substr(fault.find(" → ") + std::string(" → ").size());
  EXPECT_EQ(command, util::shell_quote((b / "bin/ctx-settings").string()) + " install");
  auto r = home.shell(command);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(hooks_of(home.settings_json()), expected_hooks(b / "bin"));
  expect_healthy(home, b);
}

// Half and half (the status line of one install, the rest of another): the doctor warns, the
// later install's uninstall takes only its own, and --all takes every one of ctxkit's entries but
// none of the user's.
TEST(InstallPairs, UninstallAllRemovesEveryInstallsEntriesAndNeverTheUsers) {
  Home home;
  const fs::path a = home.prefix("local"), b = home.prefix("opt");
  ASSERT_EQ(home.script_install(a).exit_code, 0);
  auto r = home.script_install(b, {"--status-line-only"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(hooks_of(home.settings_json()), expected_hooks(a / "bin"));
  EXPECT_EQ(home.settings_json()["statusLine"]["command"], (b / "bin/ctx-status").string());
  auto d = home.doctor(b);
  EXPECT_NE(line_of(d.out,
                    "WARN  install: ctxkit's entries run the programs of more than one "
                    "install: ")
                .find((a / "bin").string() + " (hooks, MCP servers); " + (b / "bin").string() +
                      " (status line)"),
            std::string::npos)
      << d.out;
  // A hook and a status line of the user's that run other programs stay through everything.
  ojson s = home.settings_json();
  s["hooks"]["Stop"].push_back(
      {{"hooks", {{{"type", "command"}, {"command", (a / "bin/ctx-remind").string() + " --x"}}}}});
  home.tmp.write("home/.claude/settings.json", s.dump(2));
  r = home.script_uninstall(b);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(home.settings_json().contains("statusLine"));
  EXPECT_EQ(hooks_of(home.settings_json()).size(), 12u);
  EXPECT_NE(r.out.find("kept: ctxkit's entries in " + home.settings.string() +
                       " that run the programs of another install (" + (a / "bin").string() + ")"),
            std::string::npos)
      << r.out;
  r = home.script_uninstall(b, {"--all"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ojson want = ojson::parse(kUserSettings);
  want["hooks"]["Stop"] = ojson::array(
      {{{"hooks",
         {{{"type", "command"}, {"command", (a / "bin/ctx-remind").string() + " --x"}}}}}});
  EXPECT_EQ(home.settings_json(), want) << r.out;
  EXPECT_EQ(home.claude_json_doc(), ojson::parse(kUserClaudeJson)) << r.out;
  EXPECT_FALSE(fs::exists(home.tmp / "home/.claude/skills/trim"));
  for (const auto& e : fs::directory_iterator(a / "share/ctxkit"))
    EXPECT_FALSE(e.path().filename().string().ends_with(".json")) << e.path();
}

// A status line and an MCP server of the user's under ctxkit's name are kept without --replace,
// taken with it, and put back by the uninstall.
TEST(InstallPairs, ReplaceTakesTheUsersOwnAndUninstallPutsThemBack) {
  Home home;
  ojson s = ojson::parse(kUserSettings);
  s["statusLine"] = {{"type", "command"}, {"command", "my-line"}};
  home.tmp.write("home/.claude/settings.json", s.dump(2));
  ojson c = ojson::parse(kUserClaudeJson);
  c["mcpServers"]["ctxkit-workflow"] = {{"command", "/usr/bin/my-workflows"}};
  home.tmp.write("home/.claude.json", c.dump());
  const fs::path a = home.prefix("local");
  auto r = home.script_install(a);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(home.settings_json()["statusLine"]["command"], "my-line");
  EXPECT_EQ(home.claude_json_doc()["mcpServers"]["ctxkit-workflow"]["command"],
            "/usr/bin/my-workflows");
  EXPECT_NE(r.out.find("run again with --replace"), std::string::npos) << r.out;
  r = home.script_install(a, {"--replace"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(home.settings_json()["statusLine"]["command"], (a / "bin/ctx-status").string());
  EXPECT_EQ(home.claude_json_doc()["mcpServers"]["ctxkit-workflow"]["command"],
            (a / "bin/ctx-workflow-mcp").string());
  r = home.script_uninstall(a);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(home.settings_json(), s) << r.out;
  EXPECT_EQ(home.claude_json_doc(), c) << r.out;
}

// A project set-up and a user one would both run in the project. A user install names each
// project the client knows whose settings register ctxkit's hooks, with the command that removes
// them; a project set-up while ctxkit is registered for every project is refused with the one
// command that clears the way, and writes nothing.
TEST(InstallPairs, AProjectSetUpAndAUserInstallDoNotBothRunInAProject) {
  Home home;
  const fs::path a = home.prefix("local");
  const fs::path proj = home.tmp / "proj";
  fs::create_directories(proj);
  auto r = home.script_install(a, {"--project", proj.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ojson c = home.claude_json_doc();
  c["projects"][proj.string()] = ojson::object();
  home.tmp.write("home/.claude.json", c.dump());
  r = home.script_install(a);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: " + (proj / ".claude/settings.json").string() +
                       " registers ctxkit's hooks too, so in that project they run twice; remove "
                       "them there with: ctx-settings uninstall --project " +
                       util::shell_quote(proj.string()) + " --all"),
            std::string::npos)
      << r.out;
  r = home.run(a, "ctx-settings", {"uninstall", "--project", proj.string(), "--all"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(proj / ".claude/settings.json")) << r.out;
  EXPECT_FALSE(fs::exists(proj / ".mcp.json")) << r.out;

  r = home.script_install(a, {"--project", proj.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(
      r.err.find("ctxkit's hooks are registered for every project in " + home.settings.string()),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("ctx-settings uninstall --all"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(proj / ".claude/settings.json"));
  EXPECT_FALSE(fs::exists(proj / ".mcp.json"));
}

// --supervise: the `claude` function goes into the user's ~/.bashrc (here a link, as a dotfile
// manager leaves it, which stays a link). In an interactive shell on a terminal, `claude` then
// runs under the supervisor; not on a terminal, or with -p, it is the client itself. Uninstall
// leaves the user's file as it was.
TEST(InstallPairs, SuperviseMakesClaudeStartUnderTheSupervisorAndUninstallTakesItBack) {
  Home home;
  auto fake = home.tmp.write("tools/claude",
                             "#!/bin/sh\n"
                             "[ \"$1\" = --version ] && { echo '2.1.197 (Claude Code)'; exit 0; }\n"
                             "echo \"supervised=${CTXKIT_SUPERVISOR:+yes} args=$*\"\n");
  ::chmod(fake.c_str(), 0755);
  // The client's own local install leaves an alias like this one: it would shadow the function.
  const std::string mine = "alias ll='ls -l'\nalias claude='echo ALIASED'\n";
  const fs::path real = home.tmp.write("dotfiles/bashrc", mine);
  const fs::path rc = home.tmp / "home/.bashrc";
  fs::create_symlink(real, rc);
  home.env.set("SHELL", "/bin/bash");
  const fs::path p = home.prefix("usr-a");
  auto r = home.script_install(p, {"--supervise"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote the claude function in " + rc.string()), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_symlink(rc));
  EXPECT_NE(read_file(real).find((p / "bin/ctx-rollover").string() + " --supervise -- \"$@\""),
            std::string::npos);

  // `script` gives the shell a terminal.
  auto on_terminal = [&](const std::string& command) {
    return home
        .shell("script -qec " + util::shell_quote("bash -i -c " + util::shell_quote(command)) +
               " /dev/null")
        .out;
  };
  EXPECT_NE(on_terminal("claude hello").find("supervised=yes args=hello"), std::string::npos);
  EXPECT_NE(on_terminal("claude -p hello").find("supervised= args=-p hello"), std::string::npos);
  EXPECT_NE(home.shell("bash -i -c 'claude hello' </dev/null 2>/dev/null")
                .out.find("supervised= args=hello"),
            std::string::npos);
  // With the client's local install (~/.claude/local/claude), that is the client run.
  auto local =
      home.tmp.write("home/.claude/local/claude",
                     "#!/bin/sh\necho \"local supervised=${CTXKIT_SUPERVISOR:+yes} args=$*\"\n");
  ::chmod(local.c_str(), 0755);
  EXPECT_NE(on_terminal("claude hello").find("local supervised=yes args=hello"), std::string::npos);
  fs::remove(local);

  r = home.script_uninstall(p);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("removed the claude function from " + rc.string()), std::string::npos)
      << r.out;
  EXPECT_EQ(read_file(real), mine);
  EXPECT_TRUE(fs::is_symlink(rc));
  EXPECT_NE(on_terminal("claude hello").find("ALIASED hello"),
            std::string::npos);  // the alias again
}

// A home with no ~/.bashrc: the install makes one for the function, and the uninstall takes it
// away again (it used to leave an empty file behind).
TEST(InstallPairs, SuperviseInAHomeWithoutABashrcLeavesNoneBehind) {
  Home home;
  home.env.set("SHELL", "/bin/bash");
  const fs::path rc = home.tmp / "home/.bashrc";
  ASSERT_FALSE(fs::exists(rc));
  const fs::path p = home.prefix("usr-a");
  auto r = home.script_install(p, {"--supervise"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_file(rc).find((p / "bin/ctx-rollover").string() + " --supervise -- \"$@\""),
            std::string::npos);
  r = home.script_uninstall(p);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("removed the claude function from " + rc.string()), std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(rc));
}

}  // namespace install_pairs
}  // namespace ctxkit::test
