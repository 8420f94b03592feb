#include "apps/settings_app.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "apps/archive_tool.hpp"
#include "apps/cli.hpp"
#include "apps/mcp_config_app.hpp"
#include "claude/install_check.hpp"
#include "claude/settings_merge.hpp"
#include "install/install_records.hpp"
#include "install/settings_edit.hpp"
#include "install/skills.hpp"
#include "install/targets.hpp"
#include "rollover/shell_function.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/json_depth.hpp"
#include "util/paths.hpp"
#include "util/shell.hpp"
#include "util/time.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
constexpr const char* kTool = "ctx-settings";

int usage_error(AppContext& ctx, const std::string& message) {
  print_error(ctx.err, kTool, message);
  return exit_code(ExitCode::failure);
}

// Makes a settings edit (install/settings_edit): what it did on stdout, its error on stderr.
int edit_settings(const install::SettingsEdit& e, AppContext& ctx) {
  if (auto r = install::edit_settings(e, ctx.env, ctx.out); !r)
    return usage_error(ctx, r.error().message);
  return exit_code(ExitCode::ok);
}

// Whether `bin_dir` is the bin/ of a ctxkit plugin (written by `ctx-settings plugin`).
bool is_plugin_bin(const std::string& bin_dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(bin_dir).parent_path() / ".claude-plugin" / "plugin.json",
                             ec);
}

// What a set-up was asked to do beyond its action.
struct SetupOptions {
  bool status_line_only = false;
  bool wrap_status_line = false;
  bool replace = false;  // take over a status line and MCP server names of the user's
  bool all = false;      // uninstall: ctxkit's entries of every install
  bool dry_run = false;
  bool supervise = false;  // install: the `claude` shell function that runs the supervisor
};

// install --supervise: the `claude` function in each shell start-up file (rollover/
// shell_function.hpp), running <bin_dir>/ctx-rollover.
int install_shell_function(const std::string& bin_dir, bool dry_run, AppContext& ctx) {
  const fs::path program = fs::path(bin_dir) / "ctx-rollover";
  std::error_code ec;
  if (!dry_run && !fs::is_regular_file(program, ec))
    return usage_error(ctx, fmt::format("{} has no ctx-rollover; give --bin-dir (the claude "
                                        "function was not written)",
                                        bin_dir));
  const std::string block = rollover::shell_function_block(program);
  for (const auto& file : rollover::shell_startup_files(ctx.env)) {
    if (dry_run) {
      ctx.out << fmt::format("would put the claude function in {}:\n{}", file.string(), block);
      continue;
    }
    auto put = rollover::put_shell_block(file, block);
    if (!put) return usage_error(ctx, "writing the claude function: " + put.error().message);
    ctx.out << fmt::format(
        "{} {}: in a new terminal, claude runs under its supervisor (ctx-rollover --supervise; "
        "`command claude` runs it without)\n",
        *put ? "wrote the claude function in" : "the claude function is already in", file.string());
  }
  return exit_code(ExitCode::ok);
}

// uninstall: the `claude` function that runs this install's ctx-rollover (every install's with
// --all) leaves the shell start-up files; another install's is named and kept.
int remove_shell_function(const std::string& bin_dir, bool all, bool dry_run, AppContext& ctx) {
  for (const auto& file : rollover::shell_startup_files(ctx.env)) {
    if (dry_run) continue;
    bool removed = false;
    auto kept = rollover::remove_shell_block(file, all ? fs::path() : fs::path(bin_dir), &removed);
    if (!kept) {
      print_note(ctx.err, kTool,
                 fmt::format("the claude function in {} was left: {}", file.string(),
                             kept.error().message));
      continue;
    }
    if (removed)
      ctx.out << fmt::format("removed the claude function from {}\n", file.string());
    else if (!kept->empty())
      ctx.out << fmt::format("kept: the claude function in {} (it runs {}; remove it with --all)\n",
                             file.string(), *kept);
  }
  return exit_code(ExitCode::ok);
}

// For a project set-up: why it cannot be made (nothing written), or empty. ctxkit registered for
// every project (hooks in the user's settings, or an enabled plugin there), or a plugin enabled in
// the project's local settings, would run each hook twice in the project; a project set-up changes
// nothing outside the project's own files, so it says which one command to run first.
std::string project_conflict(const util::Env& env, const install::Targets& t) {
  for (const auto& f : install::settings_files(env, "")) {
    if (f == t.settings) continue;
    auto j = install::read_settings_json(f, true);
    if (!j) continue;
    if (auto cmds = claude::ctxkit_hook_commands(*j); !cmds.empty())
      return fmt::format(
          "ctxkit's hooks are registered for every project in {} ({}): a project set-up would "
          "run each of them twice here (nothing written). Use that install as it is, or remove it "
          "first with: ctx-settings uninstall --all",
          f.string(), cmds.front());
    if (auto ids = claude::enabled_ctxkit_plugins(*j); !ids.empty())
      return fmt::format(
          "the ctxkit plugin {} is enabled for every project in {}: a project set-up would run "
          "each hook twice here (nothing written). Use the plugin, or disable it first with: "
          "claude plugin disable {}",
          ids.front(), f.string(), ids.front());
  }
  fs::path local = t.claude_dir / "settings.local.json";
  if (auto j = install::read_settings_json(local, true); j && local != t.settings)
    if (auto ids = claude::enabled_ctxkit_plugins(*j); !ids.empty())
      return fmt::format(
          "the ctxkit plugin {} is enabled for this project in {}: a project set-up would run each "
          "hook twice (nothing written). Use the plugin, or disable it first with: claude plugin "
          "disable {} --scope local",
          ids.front(), local.string(), ids.front());
  return {};
}

// The projects the client knows (the "projects" of its ~/.claude.json) whose settings.json
// registers ctxkit's hooks as well: in them every hook would run twice. One note each, with the
// command that removes the project's; nothing is changed there (a project's files may be shared).
void note_project_installs(const install::Targets& t, AppContext& ctx) {
  auto doc = install::read_settings_json(t.mcp_config, true);
  if (!doc || !doc->is_object() || !doc->contains("projects") || !(*doc)["projects"].is_object())
    return;
  size_t seen = 0;
  for (const auto& [dir, _] : (*doc)["projects"].items()) {
    if (++seen > 2000) break;  // a bound on the files read, far beyond a real list
    fs::path file = fs::path(dir) / ".claude" / "settings.json";
    if (dir.empty() || dir.front() != '/' || file == t.settings) continue;
    auto j = install::read_settings_json(file, true);
    if (!j || claude::ctxkit_hook_commands(*j).empty()) continue;
    ctx.out << fmt::format(
        "note: {} registers ctxkit's hooks too, so in that project they run twice; remove them "
        "there with: ctx-settings uninstall --project {} --all\n",
        file.string(), util::shell_quote(dir));
  }
}

// The per-user (or per-project) set-up: hooks and status line, the MCP servers, the skills.
int full_install(const std::string& action, const install::Targets& t, const std::string& bin_dir,
                 const fs::path& data_dir, const SetupOptions& o, const std::string& project,
                 const std::string& wrap_hint, AppContext& ctx) {
  claude::SettingsPlan plan = claude::default_plan(bin_dir);
  if (o.status_line_only) plan.hooks.clear();
  plan.wrap_status_line = o.wrap_status_line;
  plan.replace_status_line = o.replace;
  const std::string home = util::home_dir(ctx.env).string();
  std::error_code ec;
  // The MCP servers: each with its own record, so that each is removed on its own.
  struct Server {
    const char* name;
    const char* program;
    const fs::path* manifest;
  };
  const Server servers[] = {{"ctxkit-workflow", "ctx-workflow-mcp", &t.mcp_manifest},
                            {kArchiveServer, "ctx-archive-mcp", &t.archive_mcp_manifest}};
  auto mcp_args = [&](const char* verb, const Server& s) {
    std::vector<std::string> a{verb,
                               "--config",
                               t.mcp_config.string(),
                               "--name",
                               s.name,
                               "--command",
                               (fs::path(bin_dir) / s.program).string()};
    if (o.dry_run)
      a.push_back("--dry-run");
    else
      a.insert(a.end(), {"--manifest", s.manifest->string()});
    return a;
  };
  if (action == "install") {
    // The plugin's part of the set-up (its bin/ runs this, or a ctxkit plugin is enabled): the
    // status line, and the plugin takes the place of a settings install's hooks, MCP servers and
    // skills.
    const bool for_plugin =
        o.status_line_only &&
        (is_plugin_bin(bin_dir) ||
         !install::enabled_plugins_in(install::settings_files(ctx.env, project)).empty());
    if (!o.status_line_only) plan.disable_plugins = true;
    if (!o.status_line_only && !o.dry_run &&
        !fs::is_regular_file(fs::path(bin_dir) / "ctx-workflow-mcp", ec))
      return usage_error(
          ctx,
          fmt::format("{} has no ctx-workflow-mcp; give --bin-dir (nothing written)", bin_dir));
    if (!o.status_line_only && !o.dry_run) {
      // The MCP configuration is read and merged first, without writing: an install that fails
      // there writes nothing (not a settings.json with hooks and no server).
      std::ostringstream discard;
      AppContext check{ctx.env, ctx.read_stdin, discard, ctx.err};
      std::vector<std::string> check_args{"register",
                                          "--config",
                                          t.mcp_config.string(),
                                          "--command",
                                          (fs::path(bin_dir) / "ctx-workflow-mcp").string(),
                                          "--dry-run"};
      if (int rc = run_mcp_config(check_args, check)) return rc;
    }
    if (!o.dry_run) {
      const fs::path records = t.settings_manifest.parent_path();
      if (records == install::default_records_dir(ctx.env)) {
        // ctx-settings' own folder is in ctxkit's state folder, which holds session content:
        // 0700, as every program makes it (ctx-doctor faults a state folder open to others).
        if (auto made = util::make_private_dirs(records, util::xdg_state_home(ctx.env) / "ctxkit");
            !made)
          return usage_error(ctx, "creating " + records.string() + ": " + made.error().message +
                                      " (nothing written)");
      } else {
        fs::create_directories(records, ec);
      }
    }
    install::SettingsEdit edit{"install",
                               t.settings,
                               plan,
                               o.dry_run ? fs::path() : t.settings_manifest,
                               o.dry_run,
                               wrap_hint,
                               claude::RemoveScope{false, home},
                               for_plugin};
    if (int rc = edit_settings(edit, ctx)) return rc;
    if (o.status_line_only) {
      if (!for_plugin || o.dry_run) return exit_code(ExitCode::ok);
      // The archive's server first (the workflow server's record says whether the file was
      // created by the install).
      for (const auto& s : {servers[1], servers[0]}) {
        auto a = mcp_args("unregister", s);
        a.push_back("--all");
        if (int rc = run_mcp_config(a, ctx)) return rc;
      }
      if (fs::exists(t.skills_list, ec)) install::remove_skills(t.skills_list, ctx.out);
      ctx.out << "ctxkit runs as the plugin: its hooks, MCP servers and skills come from the "
                 "plugin, the status line from "
              << plan.status_command << '\n';
      return exit_code(ExitCode::ok);
    }
    for (const auto& s : servers) {
      auto a = mcp_args("register", s);
      if (o.replace) a.push_back("--replace");
      if (std::string_view(s.name) == kArchiveServer && !o.dry_run &&
          !fs::is_regular_file(fs::path(bin_dir) / s.program, ec)) {
        // The archive's search server is optional in a build (its tools are not registered).
        print_note(ctx.err, kTool,
                   fmt::format("{} has no ctx-archive-mcp: the archive's search tools are not "
                               "registered",
                               bin_dir));
        continue;
      }
      if (int rc = run_mcp_config(a, ctx)) return rc;
    }
    if (o.dry_run) return exit_code(ExitCode::ok);
    const auto before = install::listed_skills(t.skills_list);
    auto skills =
        install::copy_skills(data_dir / "skills", t.claude_dir / "skills", bin_dir, ctx.out);
    if (!skills) return usage_error(ctx, "installing the skills: " + skills.error().message);
    if (skills->empty()) {
      print_note(
          ctx.err, kTool,
          fmt::format("no skills found in {} (give --data-dir)", (data_dir / "skills").string()));
    } else {
      // A skill an earlier install wrote that this one does not have any more goes.
      std::vector<fs::path> stale;
      for (const auto& f : before)
        if (std::find(skills->begin(), skills->end(), f) == skills->end()) stale.push_back(f);
      install::remove_skill_files(stale, ctx.out);
      if (auto r = install::write_skills_list(t.skills_list, bin_dir, *skills); !r)
        return usage_error(ctx, "recording the skills: " + r.error().message);
    }
    if (project.empty()) note_project_installs(t, ctx);
    return exit_code(ExitCode::ok);
  }
  // uninstall: what the records and the skills list name; with --all, ctxkit's entries of every
  // install.
  bool any = false;
  // The archive's server first: the workflow server's record says whether the file and its
  // "mcpServers" were created by the install, and it goes last.
  for (const auto& s : {servers[1], servers[0]}) {
    if (!o.all && !fs::exists(*s.manifest, ec)) continue;
    any = true;
    auto a = mcp_args("unregister", s);
    if (o.all) a.push_back("--all");
    if (int rc = run_mcp_config(a, ctx)) return rc;
  }
  if (o.all || fs::exists(t.settings_manifest, ec)) {
    any = true;
    install::SettingsEdit edit{"uninstall",
                               t.settings,
                               plan,
                               o.dry_run ? fs::path() : t.settings_manifest,
                               o.dry_run,
                               wrap_hint,
                               claude::RemoveScope{o.all, home}};
    if (int rc = edit_settings(edit, ctx)) return rc;
  }
  if (!o.status_line_only && !o.dry_run && fs::exists(t.skills_list, ec)) {
    // The skills are the last install's: another install's stay unless --all.
    const std::string owner = install::skills_owner(t.skills_list);
    if (o.all || owner.empty() || owner == bin_dir) {
      any = true;
      install::remove_skills(t.skills_list, ctx.out);
    } else {
      ctx.out << fmt::format("kept: the skills in {} (installed from {})\n",
                             t.skills_list.parent_path().string(), owner);
    }
  }
  if (!any) {
    ctx.out << "nothing recorded as installed for " << t.settings.string() << '\n';
    if (auto j = install::read_settings_json(t.settings, true))
      install::note_other_installs(t.settings, *j, home, ctx.out);
  }
  if (o.all)
    for (const auto& line : install::enabled_plugins_in({t.settings}))
      ctx.out << fmt::format(
          "kept: the ctxkit plugin ({}); remove it with: claude plugin "
          "uninstall {}\n",
          line, line.substr(0, line.find(' ')));
  return exit_code(ExitCode::ok);
}

// Writes the plugin files into `out` (whose bin/ already holds the programs) and a local
// marketplace at the same root.
int write_plugin(const fs::path& out, const fs::path& data_dir, const fs::path& skills_dir,
                 AppContext& ctx) {
  std::error_code ec;
  for (const auto& program : claude::hook_programs())
    if (!fs::is_regular_file(out / "bin" / program, ec))
      return usage_error(ctx,
                         fmt::format("{} is missing; copy the programs into {} first",
                                     (out / "bin" / program).string(), (out / "bin").string()));
  if (!fs::is_regular_file(out / "bin" / "ctx-workflow-mcp", ec))
    return usage_error(ctx,
                       fmt::format("{} is missing", (out / "bin" / "ctx-workflow-mcp").string()));
  const std::string description =
      "Context management for Claude Code: context reminders, session records and archive, trim "
      "and "
      "rollover skills, and the workflow MCP server with its context gate.";
  ojson plugin{{"name", claude::kPluginName},
               {"version", version()},
               {"description", description},
               {"author", {{"name", "ctxkit"}}},
               {"keywords", {"context", "hooks", "workflow", "mcp"}}};
  ojson market{{"name", claude::kPluginName},
               {"owner", {{"name", "ctxkit"}}},
               {"description", "Local marketplace holding the ctxkit plugin built from source."},
               {"plugins", ojson::array({ojson{{"name", claude::kPluginName},
                                               {"source", "./"},
                                               {"description", description},
                                               {"version", version()}}})}};
  ojson hooks = ojson::object();
  claude::SettingsReport report;
  merge_settings(hooks, claude::plugin_plan(), report);
  ojson hooks_file{{"description", "ctxkit's hooks (the same as ctx-settings install registers)"},
                   {"hooks", hooks["hooks"]}};
  ojson mcp{
      {"mcpServers",
       {{"ctxkit-workflow",
         {{"command", "${CLAUDE_PLUGIN_ROOT}/bin/ctx-workflow-mcp"}, {"args", ojson::array()}}}}}};
  if (fs::is_regular_file(out / "bin" / "ctx-archive-mcp", ec))
    mcp["mcpServers"][kArchiveServer] = {{"command", "${CLAUDE_PLUGIN_ROOT}/bin/ctx-archive-mcp"},
                                         {"args", ojson::array()}};
  const std::pair<fs::path, const ojson*> files[] = {
      {out / ".claude-plugin" / "plugin.json", &plugin},
      {out / ".claude-plugin" / "marketplace.json", &market},
      {out / "hooks" / "hooks.json", &hooks_file},
      {out / ".mcp.json", &mcp}};
  for (const auto& [path, doc] : files) {
    fs::create_directories(path.parent_path(), ec);
    if (auto r = util::write_file_atomic(path, doc->dump(2) + "\n", 0644); !r)
      return usage_error(ctx, r.error().message);
  }
  // Skills call the programs by name: the client puts the plugin's bin/ on the Bash tool's PATH.
  fs::remove_all(out / "skills", ec);
  auto skills = install::copy_skills(skills_dir, out / "skills", "", ctx.out);
  if (!skills) return usage_error(ctx, "copying the skills: " + skills.error().message);
  // The data the programs find beside themselves: <bin>/../share/ctxkit/{workflows,prompts}.
  fs::path share = out / "share" / "ctxkit";
  fs::remove_all(share, ec);
  fs::create_directories(share, ec);
  if (fs::is_directory(data_dir, ec)) {
    for (const auto& e : fs::directory_iterator(data_dir, ec)) {
      if (!e.is_directory() || e.path().filename() == "skills" || e.path().filename() == "plugin")
        continue;
      fs::copy(e.path(), share / e.path().filename(),
               fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
      if (ec)
        return usage_error(ctx, fmt::format("copying {}: {}", e.path().string(), ec.message()));
    }
  }
  ctx.out << "plugin written: " << out.string() << " (marketplace " << claude::kPluginName
          << ", plugin " << claude::kPluginName << "@" << claude::kPluginName << ")\n";
  return exit_code(ExitCode::ok);
}

// Where the client installed plugin `id` (its installed_plugins.json), or empty.
std::string plugin_root(const util::Env& env, const std::string& id) {
  fs::path dir = env.get_nonempty("CLAUDE_CONFIG_DIR")
                     ? fs::path(*env.get_nonempty("CLAUDE_CONFIG_DIR"))
                     : util::home_dir(env) / ".claude";
  auto installed = install::read_settings_json(dir / "plugins" / "installed_plugins.json", true);
  if (!installed) return {};
  auto paths = claude::plugin_install_paths(nlohmann::json::parse(installed->dump()), id);
  return paths.empty() ? std::string() : paths.front();
}

// Which installs are active: "settings: …" and "plugin: …" lines, or "none"; when both are,
// what that does and the command that keeps each.
int show_active(const util::Env& env, const std::string& project, const std::string& bin_dir,
                AppContext& ctx) {
  bool by_settings = false;
  for (const auto& f : install::settings_files(env, project)) {
    auto j = install::read_settings_json(f, true);
    if (!j) continue;
    auto cmds = claude::ctxkit_hook_commands(*j);
    if (!cmds.empty()) {
      by_settings = true;
      ctx.out << "settings: " << cmds.size() << " ctxkit hook command"
              << (cmds.size() == 1 ? "" : "s") << " in " << f.string() << '\n';
    }
  }
  std::string plugin_id;
  for (const auto& line : install::enabled_plugins_in(install::settings_files(env, project))) {
    plugin_id = line.substr(0, line.find(' '));
    ctx.out << "plugin: " << line << '\n';
  }
  if (!by_settings && plugin_id.empty()) ctx.out << "none\n";
  if (by_settings && !plugin_id.empty()) {
    const std::string root = plugin_root(env, plugin_id);
    ctx.out << fmt::format(
        "both: the client runs every ctxkit hook twice; keep the settings install with: {} install "
        "(it disables the plugin), or the plugin with: {} install --status-line-only\n",
        util::shell_quote(bin_dir + "/ctx-settings"),
        util::shell_quote(root.empty() ? std::string("<plugin>/bin/ctx-settings")
                                       : root + "/bin/ctx-settings"));
  }
  return exit_code(ExitCode::ok);
}
}  // namespace

int run_settings(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(
      kTool,
      "Registers ctxkit with Claude Code, or removes it. Without --settings, install does the "
      "whole per-user set-up (hooks and status line in ~/.claude/settings.json, the MCP servers "
      "in ~/.claude.json, the skills in ~/.claude/skills; with --project, that project's files) "
      "and uninstall removes exactly what it added. ctxkit's entries are recognised by the "
      "program they run, wherever it is installed: an install takes over those of another "
      "install (another folder, the plugin) and says what it replaced; --all removes them all. "
      "With --settings, only the hooks and status line of that file. snippet prints the "
      "settings; plugin writes the Claude Code plugin; active says which install (settings, "
      "plugin) is in use.");
  CLI::App& app = cli.app();
  std::string action, settings_path, bin_dir, manifest_path, project, data_dir, manifest_dir,
      out_dir, skills_dir;
  SetupOptions o;
  app.add_option("action", action, "install | uninstall | snippet | plugin | active")
      ->check(CLI::IsMember({"install", "uninstall", "snippet", "plugin", "active"}));
  app.add_option("--settings", settings_path,
                 "only edit this settings.json (hooks and status line)");
  app.add_option("--bin-dir", bin_dir,
                 "where the ctxkit programs are installed (default: this program's folder)");
  app.add_option("--manifest", manifest_path,
                 "with --settings: where to record (install) or read (uninstall) what was added");
  app.add_option(
      "--project", project,
      "set up this project (DIR/.claude/settings.json, DIR/.mcp.json, DIR/.claude/skills)");
  app.add_option("--data-dir", data_dir,
                 "where the skills and workflows are (default: <bin-dir>/../share/ctxkit)");
  app.add_option(
      "--manifest-dir", manifest_dir,
      "where the records of the set-up are kept (default: <bin-dir>/../share/ctxkit in a prefix "
      "install.sh installed, else $XDG_STATE_HOME/ctxkit/install)");
  app.add_flag("--status-line-only", o.status_line_only,
               "only the status line (the plugin's part: a plugin cannot set it; run from the "
               "plugin, or with the plugin enabled, the plugin also takes the place of a settings "
               "install's hooks, MCP servers and skills)");
  app.add_flag("--wrap-status-line", o.wrap_status_line,
               "install: when a status line of yours is set, keep it and show ctxkit's beside it "
               "(ctx-status --wrap)");
  app.add_flag("--replace", o.replace,
               "install: replace a status line of yours and take over MCP server names of yours "
               "(uninstall puts them back); ctxkit's own from another install are replaced "
               "without it");
  app.add_flag("--supervise", o.supervise,
               "install: put a `claude` shell function in ~/.bashrc (and ~/.zshrc) that starts "
               "Claude Code under ctx-rollover --supervise in a terminal, so that rollovers, "
               "workflow actions and [compact] at are carried out; uninstall removes it");
  app.add_flag("--all", o.all,
               "uninstall: remove ctxkit's entries of every install (any folder), not only this "
               "one's; never yours");
  app.add_option("--out", out_dir, "plugin: the folder to write the plugin and its marketplace to");
  app.add_option("--skills-dir", skills_dir,
                 "plugin: where the skills are (default: <data-dir>/skills)");
  app.add_flag("--dry-run", o.dry_run, "print the result instead of writing it");
  cli.add_version("print the version and exit");
  if (auto rc = cli.parse(args, ctx)) return *rc;
  if (action.empty())
    return usage_error(ctx, "an action is required: install, uninstall, snippet, plugin or active");
  if (o.all && action != "uninstall") return usage_error(ctx, "--all goes with uninstall");
  if (o.replace && action != "install") return usage_error(ctx, "--replace goes with install");
  if (o.supervise && action != "install")
    return usage_error(ctx, "--supervise goes with install (uninstall removes the function)");
  if (o.supervise && (!project.empty() || !settings_path.empty()))
    return usage_error(ctx,
                       "--supervise is for the user's own set-up: the claude function goes in "
                       "the user's shell start-up files, not with --project or --settings");
  if (o.replace && o.wrap_status_line)
    return usage_error(ctx, "give --replace or --wrap-status-line, not both");

  if (bin_dir.empty()) {
    auto dir = util::executable_dir();
    if (!dir) return usage_error(ctx, "cannot find this program's folder; give --bin-dir");
    bin_dir = dir->string();
  } else {
    bin_dir = install::absolute_path(bin_dir).string();
  }
  while (bin_dir.size() > 1 && bin_dir.back() == '/') bin_dir.pop_back();
  const fs::path data = data_dir.empty() ? (fs::path(bin_dir).parent_path() / "share" / "ctxkit")
                                         : install::absolute_path(data_dir);

  if (action == "active") return show_active(ctx.env, project, bin_dir, ctx);
  if (action == "plugin") {
    if (out_dir.empty()) return usage_error(ctx, "--out is required for plugin");
    return write_plugin(install::absolute_path(out_dir), data,
                        skills_dir.empty() ? data / "skills" : install::absolute_path(skills_dir),
                        ctx);
  }
  claude::SettingsPlan plan = claude::default_plan(bin_dir);
  if (o.status_line_only) plan.hooks.clear();
  plan.wrap_status_line = o.wrap_status_line;
  plan.replace_status_line = o.replace;
  // The same command again with --wrap-status-line (offered when a status line of the user's is
  // kept).
  std::string wrap_hint;
  {
    auto self = util::executable_dir();
    wrap_hint = util::shell_quote(self ? (*self / kTool).string() : std::string(kTool));
    for (const auto& a : args)
      if (a != "--dry-run") wrap_hint += " " + util::shell_quote(a);
    wrap_hint += " --wrap-status-line";
  }
  if (action == "snippet") {
    ojson s;
    claude::SettingsReport report;
    merge_settings(s, plan, report);
    ctx.out << s.dump(2) << '\n';
    return exit_code(ExitCode::ok);
  }
  if (!project.empty() && !settings_path.empty())
    return usage_error(ctx, "give --project or --settings, not both");
  if (!project.empty() && !fs::is_directory(project))
    return usage_error(ctx, "project directory " + project + " does not exist");
  const std::string home = util::home_dir(ctx.env).string();
  if (!settings_path.empty()) {
    const fs::path file = install::absolute_path(settings_path);
    bool for_plugin = false;
    if (action == "install") {
      // A plugin enabled in this file is disabled (this install takes its place); one enabled
      // for every user's project elsewhere cannot be, from here.
      if (auto elsewhere = install::enabled_plugins_in({install::user_settings(ctx.env)});
          !elsewhere.empty() &&
          file != install::absolute_path(install::user_settings(ctx.env).string()) &&
          !o.status_line_only)
        return usage_error(
            ctx, fmt::format("the ctxkit plugin is enabled ({}): its hooks would run beside "
                             "these (nothing written); disable it first with: claude plugin "
                             "disable {}",
                             elsewhere.front(),
                             elsewhere.front().substr(0, elsewhere.front().find(' '))));
      plan.disable_plugins = !o.status_line_only;
      for_plugin = o.status_line_only &&
                   (is_plugin_bin(bin_dir) || !install::enabled_plugins_in({file}).empty());
    }
    if (o.wrap_status_line && action == "install" && manifest_path.empty() && !o.dry_run)
      return usage_error(ctx,
                         "--wrap-status-line needs --manifest (where uninstall finds the status "
                         "line to put back)");
    if (o.replace && action == "install" && manifest_path.empty() && !o.dry_run)
      return usage_error(ctx,
                         "--replace needs --manifest (where uninstall finds the status line to put "
                         "back)");
    install::SettingsEdit edit{action,
                               settings_path,
                               plan,
                               manifest_path,
                               o.dry_run,
                               wrap_hint,
                               claude::RemoveScope{o.all, home},
                               for_plugin};
    return edit_settings(edit, ctx);
  }
  if (!manifest_path.empty())
    return usage_error(
        ctx, "--manifest goes with --settings; the set-up keeps its records in --manifest-dir");
  // The records: where given, else beside the programs when install.sh installed them (as it
  // keeps them there), else ctx-settings' own folder.
  fs::path records = install::absolute_path(manifest_dir);
  if (manifest_dir.empty()) {
    const fs::path beside = fs::path(bin_dir).parent_path() / "share" / "ctxkit";
    std::error_code ec;
    records = fs::is_regular_file(beside / "installed-files.txt", ec)
                  ? beside
                  : install::default_records_dir(ctx.env);
  }
  install::Targets t = install::targets_for(ctx.env, project, records);
  if (action == "install" && !project.empty() && !o.status_line_only)
    if (std::string why = project_conflict(ctx.env, t); !why.empty()) return usage_error(ctx, why);
  const int rc = full_install(action, t, bin_dir, data, o, project, wrap_hint, ctx);
  if (rc != 0 || !project.empty()) return rc;
  if (action == "install" && o.supervise) return install_shell_function(bin_dir, o.dry_run, ctx);
  if (action == "uninstall") return remove_shell_function(bin_dir, o.all, o.dry_run, ctx);
  return rc;
}

}  // namespace ctxkit::apps
