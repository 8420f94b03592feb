#include "apps/settings_app.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <filesystem>

#include "apps/cli.hpp"
#include "claude/install_check.hpp"
#include "claude/settings_merge.hpp"
#include "install/install_records.hpp"
#include "install/settings_edit.hpp"
#include "install/setup.hpp"
#include "install/targets.hpp"
#include "rollover/shell_function.hpp"
#include "util/fs.hpp"
#include "util/json_io.hpp"
#include "util/paths.hpp"
#include "util/shell.hpp"

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

// Where the client installed plugin `id` (its installed_plugins.json), or empty.
std::string plugin_root(const util::Env& env, const std::string& id) {
  fs::path dir = env.get_nonempty("CLAUDE_CONFIG_DIR")
                     ? fs::path(*env.get_nonempty("CLAUDE_CONFIG_DIR"))
                     : util::home_dir(env) / ".claude";
  auto installed = install::read_settings_json(dir / "plugins" / "installed_plugins.json", true);
  if (!installed) return {};
  // The ordered value converted, not written out and parsed again.
  auto paths = claude::plugin_install_paths(nlohmann::json(*installed), id);
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
  auto app = cli.app();
  std::string action, settings_path, bin_dir, manifest_path, project, data_dir, manifest_dir,
      out_dir, skills_dir;
  install::SetupOptions o;
  bool supervise = false;
  app.add_option("action", action, "install | uninstall | snippet | plugin | active")
      .one_of({"install", "uninstall", "snippet", "plugin", "active"});
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
  app.add_flag("--supervise", supervise,
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
  if (supervise && action != "install")
    return usage_error(ctx, "--supervise goes with install (uninstall removes the function)");
  if (supervise && (!project.empty() || !settings_path.empty()))
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
    if (auto r = install::write_plugin(
            install::absolute_path(out_dir), data,
            skills_dir.empty() ? data / "skills" : install::absolute_path(skills_dir), version(),
            ctx.out);
        !r)
      return usage_error(ctx, r.error().message);
    return exit_code(ExitCode::ok);
  }
  claude::SettingsPlan plan = install::settings_plan(bin_dir, o);
  // The same command again with --wrap-status-line (offered when a status line of the user's is
  // kept).
  std::string wrap_hint;
  {
    auto self = util::executable_dir();
    wrap_hint = util::shell_quote(self ? (*self / kTool).string() : std::string(kTool));
    for (const auto& a : args)
      if (a != "--dry-run") {
        // Appended in two steps: GCC 12 reports `" " + string&&` inlined here as a memcpy out
        // of bounds (its bug 105329).
        wrap_hint += ' ';
        wrap_hint += util::shell_quote(a);
      }
    wrap_hint += " --wrap-status-line";
  }
  if (action == "snippet") {
    ojson s;
    claude::SettingsReport report;
    merge_settings(s, plan, report);
    ctx.out << util::dump_json(s, 2) << '\n';
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
      for_plugin = o.status_line_only && (install::is_plugin_bin(bin_dir) ||
                                          !install::enabled_plugins_in({file}).empty());
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
    if (std::string why = install::project_conflict(ctx.env, t); !why.empty())
      return usage_error(ctx, why);
  const install::SetupPlan setup{t, bin_dir, data, project, wrap_hint, o};
  if (auto r = action == "install" ? install::install_set_up(setup, ctx.env, ctx.out, ctx.err)
                                   : install::remove_set_up(setup, ctx.env, ctx.out);
      !r)
    return usage_error(ctx, r.error().message);
  if (!project.empty()) return exit_code(ExitCode::ok);
  if (action == "install" && supervise) return install_shell_function(bin_dir, o.dry_run, ctx);
  if (action == "uninstall") return remove_shell_function(bin_dir, o.all, o.dry_run, ctx);
  return exit_code(ExitCode::ok);
}

}  // namespace ctxkit::apps
