#include "install/setup.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "claude/install_check.hpp"
#include "claude/settings_merge.hpp"
#include "install/install_records.hpp"
#include "install/mcp_edit.hpp"
#include "install/settings_edit.hpp"
#include "install/skills.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/json_io.hpp"
#include "util/one_line.hpp"
#include "util/paths.hpp"
#include "util/shell.hpp"

namespace ctxkit::install {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
constexpr const char* kTool = "ctx-settings";

// The MCP servers of the set-up, each with its own record.
struct Server {
  const char* name;
  const char* program;
  fs::path Targets::*manifest;
};
constexpr Server kWorkflowServer{claude::kWorkflowServerName, "ctx-workflow-mcp",
                                 &Targets::mcp_manifest};
constexpr Server kArchiveServer{claude::kArchiveServerName, "ctx-archive-mcp",
                                &Targets::archive_mcp_manifest};

// The edit of the MCP configuration for server `s`; with dry_run, no record is kept.
McpEdit mcp_edit(const SetupPlan& s, const Server& server, bool unregister) {
  McpEdit e;
  e.unregister = unregister;
  e.config = s.targets.mcp_config;
  e.name = server.name;
  e.command = (fs::path(s.bin_dir) / server.program).string();
  e.dry_run = s.options.dry_run;
  if (!s.options.dry_run) e.manifest = s.targets.*server.manifest;
  return e;
}

// The projects the client knows (the "projects" of its ~/.claude.json) whose settings.json
// registers ctxkit's hooks as well: in them every hook would run twice. One note each, with the
// command that removes the project's; nothing is changed there (a project's files may be shared).
void note_project_installs(const Targets& t, std::ostream& out) {
  auto doc = read_settings_json(t.mcp_config, true);
  if (!doc || !doc->is_object() || !doc->contains("projects") || !(*doc)["projects"].is_object())
    return;
  size_t seen = 0;
  for (const auto& [dir, _] : (*doc)["projects"].items()) {
    if (++seen > 2000) break;  // a bound on the files read, far beyond a real list
    fs::path file = fs::path(dir) / ".claude" / "settings.json";
    if (dir.empty() || dir.front() != '/' || file == t.settings) continue;
    auto j = read_settings_json(file, true);
    if (!j || claude::ctxkit_hook_commands(*j).empty()) continue;
    out << fmt::format(
        "note: {} registers ctxkit's hooks too, so in that project they run twice; remove them "
        "there with: ctx-settings uninstall --project {} --all\n",
        file.string(), util::shell_quote(dir));
  }
}

// The record folder: ctx-settings' own folder is in ctxkit's state folder, which holds session
// content: 0700, as every program makes it (ctx-doctor faults a state folder open to others).
Result<void> make_records_dir(const Targets& t, const util::Env& env) {
  const fs::path records = t.settings_manifest.parent_path();
  if (records == default_records_dir(env)) {
    if (auto made = util::make_private_dirs(records, util::xdg_state_home(env) / "ctxkit"); !made)
      return fail("creating " + records.string() + ": " + made.error().message +
                  " (nothing written)");
  } else {
    std::error_code ec;
    fs::create_directories(records, ec);
  }
  return {};
}
}  // namespace

claude::SettingsPlan settings_plan(const std::string& bin_dir, const SetupOptions& o) {
  claude::SettingsPlan plan = claude::default_plan(bin_dir);
  if (o.status_line_only) plan.hooks.clear();
  plan.wrap_status_line = o.wrap_status_line;
  plan.replace_status_line = o.replace;
  return plan;
}

bool is_plugin_bin(const std::string& bin_dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(bin_dir).parent_path() / ".claude-plugin" / "plugin.json",
                             ec);
}

Result<void> install_set_up(const SetupPlan& s, const util::Env& env, std::ostream& out,
                            std::ostream& notes) {
  const SetupOptions& o = s.options;
  const Targets& t = s.targets;
  const std::string home = util::home_dir(env).string();
  claude::SettingsPlan plan = settings_plan(s.bin_dir, s.options);
  std::error_code ec;
  // The plugin's part of the set-up (its bin/ runs this, or a ctxkit plugin is enabled): the
  // status line, and the plugin takes the place of a settings install's hooks, MCP servers and
  // skills.
  const bool for_plugin =
      o.status_line_only &&
      (is_plugin_bin(s.bin_dir) || !enabled_plugins_in(settings_files(env, s.project)).empty());
  if (!o.status_line_only) plan.disable_plugins = true;
  if (!o.status_line_only && !o.dry_run &&
      !fs::is_regular_file(fs::path(s.bin_dir) / kWorkflowServer.program, ec))
    return fail(
        fmt::format("{} has no ctx-workflow-mcp; give --bin-dir (nothing written)", s.bin_dir));
  if (!o.status_line_only && !o.dry_run) {
    // The MCP configuration is read and merged first, without writing: an install that fails
    // there writes nothing (not a settings.json with hooks and no server).
    McpEdit check = mcp_edit(s, kWorkflowServer, false);
    check.dry_run = true;
    check.manifest.clear();
    std::ostringstream discard;
    CTXKIT_TRY(edit_mcp_config(check, env, discard));
  }
  if (!o.dry_run) CTXKIT_TRY(make_records_dir(t, env));
  SettingsEdit edit{"install",
                    t.settings,
                    plan,
                    o.dry_run ? fs::path() : t.settings_manifest,
                    o.dry_run,
                    s.wrap_hint,
                    claude::RemoveScope{false, home},
                    for_plugin};
  CTXKIT_TRY(edit_settings(edit, env, out));
  if (o.status_line_only) {
    if (!for_plugin || o.dry_run) return {};
    // The archive's server first (the workflow server's record says whether the file was
    // created by the install).
    for (const Server* server : {&kArchiveServer, &kWorkflowServer}) {
      McpEdit e = mcp_edit(s, *server, true);
      e.all = true;
      CTXKIT_TRY(edit_mcp_config(e, env, out));
    }
    if (fs::exists(t.skills_list, ec)) remove_skills(t.skills_list, out);
    out << "ctxkit runs as the plugin: its hooks, MCP servers and skills come from the plugin, "
           "the status line from "
        << plan.status_command << '\n';
    return {};
  }
  for (const Server* server : {&kWorkflowServer, &kArchiveServer}) {
    if (server == &kArchiveServer && !o.dry_run &&
        !fs::is_regular_file(fs::path(s.bin_dir) / server->program, ec)) {
      // The archive's search server is optional in a build (its tools are not registered).
      util::print_note(notes, kTool,
                       fmt::format("{} has no ctx-archive-mcp: the archive's search tools are not "
                                   "registered",
                                   s.bin_dir));
      continue;
    }
    McpEdit e = mcp_edit(s, *server, false);
    e.replace = o.replace;
    CTXKIT_TRY(edit_mcp_config(e, env, out));
  }
  if (o.dry_run) return {};
  const auto before = listed_skills(t.skills_list);
  auto skills = copy_skills(s.data_dir / "skills", t.claude_dir / "skills", s.bin_dir, out);
  if (!skills) return fail("installing the skills: " + skills.error().message);
  if (skills->empty()) {
    util::print_note(
        notes, kTool,
        fmt::format("no skills found in {} (give --data-dir)", (s.data_dir / "skills").string()));
  } else {
    // A skill an earlier install wrote that this one does not have any more goes.
    std::vector<fs::path> stale;
    for (const auto& f : before)
      if (std::find(skills->begin(), skills->end(), f) == skills->end()) stale.push_back(f);
    remove_skill_files(stale, out);
    if (auto r = write_skills_list(t.skills_list, s.bin_dir, *skills); !r)
      return fail("recording the skills: " + r.error().message);
  }
  if (s.project.empty()) note_project_installs(t, out);
  return {};
}

Result<void> remove_set_up(const SetupPlan& s, const util::Env& env, std::ostream& out) {
  const SetupOptions& o = s.options;
  const Targets& t = s.targets;
  const std::string home = util::home_dir(env).string();
  std::error_code ec;
  bool any = false;
  // The archive's server first: the workflow server's record says whether the file and its
  // "mcpServers" were created by the install, and it goes last.
  for (const Server* server : {&kArchiveServer, &kWorkflowServer}) {
    if (!o.all && !fs::exists(t.*server->manifest, ec)) continue;
    any = true;
    McpEdit e = mcp_edit(s, *server, true);
    e.all = o.all;
    CTXKIT_TRY(edit_mcp_config(e, env, out));
  }
  if (o.all || fs::exists(t.settings_manifest, ec)) {
    any = true;
    SettingsEdit edit{"uninstall",
                      t.settings,
                      settings_plan(s.bin_dir, s.options),
                      o.dry_run ? fs::path() : t.settings_manifest,
                      o.dry_run,
                      s.wrap_hint,
                      claude::RemoveScope{o.all, home}};
    CTXKIT_TRY(edit_settings(edit, env, out));
  }
  if (!o.status_line_only && !o.dry_run && fs::exists(t.skills_list, ec)) {
    // The skills are the last install's: another install's stay unless --all.
    const std::string owner = skills_owner(t.skills_list);
    if (o.all || owner.empty() || owner == s.bin_dir) {
      any = true;
      remove_skills(t.skills_list, out);
    } else {
      out << fmt::format("kept: the skills in {} (installed from {})\n",
                         t.skills_list.parent_path().string(), owner);
    }
  }
  if (!any) {
    out << "nothing recorded as installed for " << t.settings.string() << '\n';
    if (auto j = read_settings_json(t.settings, true))
      note_other_installs(t.settings, *j, home, out);
  }
  if (o.all)
    for (const auto& line : enabled_plugins_in({t.settings}))
      out << fmt::format(
          "kept: the ctxkit plugin ({}); remove it with: claude plugin uninstall {}\n", line,
          line.substr(0, line.find(' ')));
  return {};
}

std::string project_conflict(const util::Env& env, const Targets& t) {
  for (const auto& f : settings_files(env, "")) {
    if (f == t.settings) continue;
    auto j = read_settings_json(f, true);
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
  if (auto j = read_settings_json(local, true); j && local != t.settings)
    if (auto ids = claude::enabled_ctxkit_plugins(*j); !ids.empty())
      return fmt::format(
          "the ctxkit plugin {} is enabled for this project in {}: a project set-up would run each "
          "hook twice (nothing written). Use the plugin, or disable it first with: claude plugin "
          "disable {} --scope local",
          ids.front(), local.string(), ids.front());
  return {};
}

Result<void> write_plugin(const fs::path& out_dir, const fs::path& data_dir,
                          const fs::path& skills_dir, std::string_view version, std::ostream& out) {
  std::error_code ec;
  for (const auto& program : claude::hook_programs())
    if (!fs::is_regular_file(out_dir / "bin" / program, ec))
      return fail(fmt::format("{} is missing; copy the programs into {} first",
                              (out_dir / "bin" / program).string(), (out_dir / "bin").string()));
  if (!fs::is_regular_file(out_dir / "bin" / kWorkflowServer.program, ec))
    return fail(fmt::format("{} is missing", (out_dir / "bin" / kWorkflowServer.program).string()));
  const std::string description =
      "Context management for Claude Code: context reminders, session records and archive, trim "
      "and rollover skills, and the workflow MCP server with its context gate.";
  ojson plugin{{"name", claude::kPluginName},
               {"version", version},
               {"description", description},
               {"author", {{"name", "ctxkit"}}},
               {"keywords", {"context", "hooks", "workflow", "mcp"}}};
  ojson market{{"name", claude::kPluginName},
               {"owner", {{"name", "ctxkit"}}},
               {"description", "Local marketplace holding the ctxkit plugin built from source."},
               {"plugins", ojson::array({ojson{{"name", claude::kPluginName},
                                               {"source", "./"},
                                               {"description", description},
                                               {"version", version}}})}};
  ojson hooks = ojson::object();
  claude::SettingsReport report;
  merge_settings(hooks, claude::plugin_plan(), report);
  ojson hooks_file{{"description", "ctxkit's hooks (the same as ctx-settings install registers)"},
                   {"hooks", hooks["hooks"]}};
  ojson mcp{
      {"mcpServers",
       {{kWorkflowServer.name,
         {{"command", "${CLAUDE_PLUGIN_ROOT}/bin/ctx-workflow-mcp"}, {"args", ojson::array()}}}}}};
  if (fs::is_regular_file(out_dir / "bin" / kArchiveServer.program, ec))
    mcp["mcpServers"][kArchiveServer.name] = {
        {"command", "${CLAUDE_PLUGIN_ROOT}/bin/ctx-archive-mcp"}, {"args", ojson::array()}};
  const std::pair<fs::path, const ojson*> files[] = {
      {out_dir / ".claude-plugin" / "plugin.json", &plugin},
      {out_dir / ".claude-plugin" / "marketplace.json", &market},
      {out_dir / "hooks" / "hooks.json", &hooks_file},
      {out_dir / ".mcp.json", &mcp}};
  for (const auto& [path, doc] : files) {
    fs::create_directories(path.parent_path(), ec);
    CTXKIT_TRY(util::write_file_atomic(path, util::dump_json(*doc, 2) + "\n", 0644));
  }
  // Skills call the programs by name: the client puts the plugin's bin/ on the Bash tool's PATH.
  fs::remove_all(out_dir / "skills", ec);
  auto skills = copy_skills(skills_dir, out_dir / "skills", "", out);
  if (!skills) return fail("copying the skills: " + skills.error().message);
  // The data the programs find beside themselves: <bin>/../share/ctxkit/{workflows,prompts}.
  fs::path share = out_dir / "share" / "ctxkit";
  fs::remove_all(share, ec);
  fs::create_directories(share, ec);
  if (fs::is_directory(data_dir, ec)) {
    for (const auto& e : fs::directory_iterator(data_dir, ec)) {
      if (!e.is_directory() || e.path().filename() == "skills" || e.path().filename() == "plugin")
        continue;
      fs::copy(e.path(), share / e.path().filename(),
               fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
      if (ec) return fail(fmt::format("copying {}: {}", e.path().string(), ec.message()));
    }
  }
  out << "plugin written: " << out_dir.string() << " (marketplace " << claude::kPluginName
      << ", plugin " << claude::kPluginName << "@" << claude::kPluginName << ")\n";
  return {};
}

}  // namespace ctxkit::install
