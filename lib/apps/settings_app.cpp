#include "apps/settings_app.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "apps/archive_tool.hpp"
#include "apps/cli.hpp"
#include "apps/mcp_config_app.hpp"
#include "claude/settings_merge.hpp"
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

// Settings files are small; anything deeper than this is not a settings file (and would
// overflow the stack of the recursive dump).
constexpr size_t kMaxDepth = 256;
constexpr uint64_t kMaxSettingsBytes = 16ull << 20;

Result<std::string> read_text(const fs::path& p) {
  return util::read_file(p, {kMaxSettingsBytes});
}

Result<ojson> read_json(const fs::path& p, bool missing_ok) {
  std::error_code ec;
  if (!fs::exists(p, ec)) {
    if (missing_ok) return ojson();
    return fail(fmt::format("reading {}: no such file", p.string()));
  }
  auto text = read_text(p);
  if (!text) return std::unexpected(text.error());
  if (text->find_first_not_of(" \t\r\n") == std::string::npos) return ojson();
  if (util::json_depth(*text, kMaxDepth) > kMaxDepth)
    return fail(fmt::format("{}: nested deeper than {} levels", p.string(), kMaxDepth),
                Error::Kind::Invalid);
  try {
    return ojson::parse(*text);
  } catch (const ojson::exception& e) {
    std::string what = e.what();
    auto pos = what.find("parse error");
    return fail(fmt::format("{} is not valid JSON: {}", p.string(),
                            pos == std::string::npos ? what : what.substr(pos)));
  }
}

// install/uninstall of the hooks and status line in one settings file (the low-level action).
// `wrap_hint` is the command that installs again with --wrap-status-line (offered when a status
// line of the user's is kept).
int edit_settings(const std::string& action, const std::string& settings_path,
                  const claude::SettingsPlan& plan, const std::string& manifest_path, bool dry_run,
                  const std::string& wrap_hint, AppContext& ctx) {
  fs::path link(settings_path);
  std::error_code ec;
  fs::path target = link;
  if (fs::is_symlink(link, ec)) {
    target = fs::weakly_canonical(link, ec);
    if (ec) {
      print_error(ctx.err, kTool, "resolving " + link.string() + ": " + ec.message());
      return exit_code(ExitCode::failure);
    }
  }
  auto settings = read_json(target, /*missing_ok=*/true);
  if (!settings) {
    print_error(ctx.err, kTool, settings.error().message + " (nothing written)");
    return exit_code(ExitCode::failure);
  }
  ojson manifest = ojson::object();
  if (!manifest_path.empty()) {
    auto m = read_json(manifest_path, true);
    if (m && m->is_object()) manifest = *m;
  }
  std::vector<std::string> created;
  if (manifest.contains("created") && manifest["created"].is_array())
    for (const auto& c : manifest["created"])
      if (c.is_string()) created.push_back(c.get<std::string>());

  std::optional<claude::WrappedStatusLine> wrapped;
  if (auto w = manifest.find("status_line"); w != manifest.end() && w->is_object() &&
                                             w->contains("command") &&
                                             (*w)["command"].is_string() && w->contains("original"))
    wrapped = claude::WrappedStatusLine{(*w)["command"].get<std::string>(), (*w)["original"]};

  claude::SettingsReport report;
  std::string problem = action == "install"
                            ? merge_settings(*settings, plan, report)
                            : remove_settings(*settings, plan, created, report, wrapped);
  if (!problem.empty()) {
    print_error(ctx.err, kTool, target.string() + ": " + problem + " (nothing written)");
    return exit_code(ExitCode::failure);
  }
  if (report.changed && util::read_only_file(target)) {
    print_error(ctx.err, kTool,
                target.string() + ": the file is read-only (nothing written; make it writable to " +
                    action + ")");
    return exit_code(ExitCode::failure);
  }
  if (dry_run) {
    ctx.out << settings->dump(2) << '\n';
    return exit_code(ExitCode::ok);
  }
  const bool file_existed = fs::exists(target, ec);
  if (action == "uninstall" && manifest.value("created_file", false) && settings->empty() &&
      file_existed) {
    // The install created this file and nothing else is in it now: remove it.
    fs::remove(target, ec);
    if (ec) {
      print_error(ctx.err, kTool, "removing " + target.string() + ": " + ec.message());
      return exit_code(ExitCode::failure);
    }
    for (const auto& line : report.lines) ctx.out << line << '\n';
    ctx.out << "removed: " << target.string() << " (created by the install)\n";
    fs::remove(manifest_path, ec);
    return exit_code(ExitCode::ok);
  }
  if (report.changed) {
    unsigned mode = 0600;
    struct stat st {};
    bool existed = ::stat(target.c_str(), &st) == 0;
    if (existed) {
      mode = st.st_mode & 07777;
      fs::path backup = link;
      backup += fmt::format(".ctxkit-backup-{}", util::format_compact_utc(util::now_ms()));
      auto original = read_text(target);
      if (!original) {
        print_error(ctx.err, kTool, original.error().message + " (nothing written)");
        return exit_code(ExitCode::failure);
      }
      if (auto r = util::write_file_atomic(backup, *original, mode); !r) {
        print_error(ctx.err, kTool, "saving a backup: " + r.error().message + " (nothing written)");
        return exit_code(ExitCode::failure);
      }
      ctx.out << "backup: " << backup.string() << '\n';
    } else {
      fs::create_directories(target.parent_path(), ec);
    }
    if (auto r = util::write_file_atomic(target, settings->dump(2) + "\n", mode); !r) {
      print_error(ctx.err, kTool, r.error().message);
      return exit_code(ExitCode::failure);
    }
  }
  for (const auto& line : report.lines) ctx.out << line << '\n';
  if (!report.kept_status_command.empty())
    ctx.out << fmt::format(
        "ctxkit: your status line '{}' is kept; to show ctxkit's beside it run: {}\n",
        report.kept_status_command, wrap_hint);
  if (!manifest_path.empty()) {
    if (action == "install") {
      if (report.wrapped)
        manifest["status_line"] =
            ojson{{"command", report.wrapped->command}, {"original", report.wrapped->original}};
      for (const auto& c : report.created)
        if (std::find(created.begin(), created.end(), c) == created.end()) created.push_back(c);
      manifest["settings"] = link.string();
      manifest["created"] = created;
      if (!manifest.contains("created_file")) manifest["created_file"] = !file_existed;
      fs::create_directories(fs::path(manifest_path).parent_path(), ec);
      if (auto r = util::write_file_atomic(manifest_path, manifest.dump(2) + "\n", 0644); !r) {
        print_error(ctx.err, kTool, "writing the manifest: " + r.error().message);
        return exit_code(ExitCode::failure);
      }
    } else {
      fs::remove(manifest_path, ec);
    }
  }
  return exit_code(ExitCode::ok);
}

// A path as a file name: every character but letters and digits becomes '-' (as install.sh
// names its manifests, so that both find the same ones).
std::string path_key(const fs::path& p) {
  std::string out = p.string();
  for (auto& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  return out;
}

fs::path absolute_path(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return ec ? fs::path(p) : a.lexically_normal();
}

// Where the per-user set-up writes, for the user (~/.claude, ~/.claude.json) or a project.
struct Targets {
  fs::path claude_dir;  // settings.json and skills/ live here
  fs::path settings;
  fs::path mcp_config;
  fs::path settings_manifest, mcp_manifest, archive_mcp_manifest;
  fs::path skills_list;  // the skill files the install wrote, one a line
};

Targets targets_for(const util::Env& env, const std::string& project,
                    const fs::path& manifest_dir) {
  Targets t;
  if (!project.empty()) {
    fs::path dir = absolute_path(project);
    t.claude_dir = dir / ".claude";
    t.mcp_config = dir / ".mcp.json";
  } else if (auto cfg = env.get_nonempty("CLAUDE_CONFIG_DIR")) {
    t.claude_dir = *cfg;
    t.mcp_config = fs::path(*cfg) / ".claude.json";
  } else {
    t.claude_dir = util::home_dir(env) / ".claude";
    t.mcp_config = util::home_dir(env) / ".claude.json";
  }
  t.settings = t.claude_dir / "settings.json";
  t.settings_manifest = manifest_dir / ("settings-manifest" + path_key(t.settings) + ".json");
  t.mcp_manifest = manifest_dir / ("mcp-manifest" + path_key(t.mcp_config) + ".json");
  t.archive_mcp_manifest =
      manifest_dir / ("mcp-archive-manifest" + path_key(t.mcp_config) + ".json");
  t.skills_list = t.claude_dir / "skills" / ".ctxkit-installed";
  return t;
}

// The user's settings file (where `claude plugin install --scope user` enables plugins).
fs::path user_settings(const util::Env& env) {
  if (auto cfg = env.get_nonempty("CLAUDE_CONFIG_DIR")) return fs::path(*cfg) / "settings.json";
  return util::home_dir(env) / ".claude" / "settings.json";
}

// The settings files that may enable a plugin or register hooks for this target, each once.
std::vector<fs::path> settings_files(const util::Env& env, const std::string& project) {
  std::vector<fs::path> files{user_settings(env)};
  if (!project.empty()) {
    fs::path dir = absolute_path(project) / ".claude";
    files.push_back(dir / "settings.json");
    files.push_back(dir / "settings.local.json");
  }
  return files;
}

// "<id> enabled in <file>" for each ctxkit plugin enabled in `files` (unreadable files are
// skipped).
std::vector<std::string> enabled_plugins_in(const std::vector<fs::path>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) {
    auto j = read_json(f, true);
    if (!j) continue;
    for (const auto& id : claude::enabled_ctxkit_plugins(*j))
      out.push_back(fmt::format("{} enabled in {}", id, f.string()));
  }
  return out;
}

// Copies every skills/<name>/ that has a SKILL.md into `dest`/<name>/, replacing "@CTXKIT_BIN@"
// by `bin_ref` (the empty string: the programs are called by name, the plugin's bin/ is on PATH).
// Returns the files written.
Result<std::vector<fs::path>> copy_skills(const fs::path& from, const fs::path& dest,
                                          const std::string& bin_ref, AppContext& ctx) {
  std::vector<fs::path> written;
  std::error_code ec;
  if (!fs::is_directory(from, ec)) return written;
  std::vector<fs::path> skills;
  for (const auto& e : fs::directory_iterator(from, ec))
    if (e.is_directory() && fs::is_regular_file(e.path() / "SKILL.md")) skills.push_back(e.path());
  std::sort(skills.begin(), skills.end());
  for (const auto& dir : skills) {
    fs::path out_dir = dest / dir.filename();
    fs::create_directories(out_dir, ec);
    if (ec) return fail(fmt::format("creating {}: {}", out_dir.string(), ec.message()));
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(dir, ec))
      if (f.is_regular_file()) files.push_back(f.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      auto text = util::read_file(f, {1u << 20});
      if (!text) return std::unexpected(text.error());
      std::string out;
      const std::string mark = bin_ref.empty() ? "@CTXKIT_BIN@/" : "@CTXKIT_BIN@";
      size_t pos = 0;
      while (true) {
        const size_t at = text->find(mark, pos);
        if (at == std::string::npos) break;
        out.append(*text, pos, at - pos).append(bin_ref);
        pos = at + mark.size();
      }
      out.append(*text, pos);
      fs::path target = out_dir / f.filename();
      if (auto r = util::write_file_atomic(target, out, 0644); !r)
        return std::unexpected(r.error());
      written.push_back(target);
    }
    ctx.out << "installed skill /" << dir.filename().string() << '\n';
  }
  return written;
}

// Removes the files the skills list names, the folders left empty by that, and the list.
void remove_skills(const fs::path& list, AppContext& ctx) {
  auto text = util::read_file(list, {4u << 20});
  if (!text) return;
  std::error_code ec;
  std::vector<fs::path> dirs;
  size_t pos = 0;
  while (pos < text->size()) {
    size_t nl = text->find('\n', pos);
    std::string line = text->substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text->size() : nl + 1;
    if (line.empty()) continue;
    fs::path f(line);
    if (fs::remove(f, ec)) ctx.out << "removed: " << f.string() << '\n';
    if (std::find(dirs.begin(), dirs.end(), f.parent_path()) == dirs.end())
      dirs.push_back(f.parent_path());
  }
  fs::remove(list, ec);
  dirs.push_back(list.parent_path());
  for (const auto& d : dirs)
    if (fs::is_directory(d, ec) && fs::is_empty(d, ec)) fs::remove(d, ec);
}

Result<void> write_lines(const fs::path& file, const std::vector<fs::path>& lines) {
  std::string text;
  for (const auto& l : lines) text += l.string() + "\n";
  return util::write_file_atomic(file, text, 0644);
}

int usage_error(AppContext& ctx, const std::string& message) {
  print_error(ctx.err, kTool, message);
  return exit_code(ExitCode::failure);
}

std::string plugin_refusal(const std::vector<std::string>& enabled) {
  return fmt::format(
      "the ctxkit plugin is active ({}): its hooks, skills and MCP server are already registered, "
      "and "
      "a settings install would run every hook twice. Keep the plugin and add only the status line "
      "(a plugin cannot set it) with: ctx-settings install --status-line-only; or switch to the "
      "settings install: claude plugin uninstall {}, then run ctx-settings install again",
      enabled.front(), enabled.front().substr(0, enabled.front().find(" enabled in ")));
}

// The per-user (or per-project) set-up: hooks and status line, the MCP server, the skills.
int full_install(const std::string& action, const Targets& t, const std::string& bin_dir,
                 const fs::path& data_dir, bool status_line_only, bool wrap_status_line,
                 bool dry_run, const std::vector<std::string>& plugins_enabled,
                 const std::string& wrap_hint, AppContext& ctx) {
  claude::SettingsPlan plan = claude::default_plan(bin_dir);
  if (status_line_only) plan.hooks.clear();
  plan.wrap_status_line = wrap_status_line;
  if (action == "install") {
    if (!plugins_enabled.empty() && !status_line_only)
      return usage_error(ctx, plugin_refusal(plugins_enabled) + " (nothing written)");
    std::error_code ec;
    if (!status_line_only && !dry_run &&
        !fs::is_regular_file(fs::path(bin_dir) / "ctx-workflow-mcp", ec))
      return usage_error(
          ctx,
          fmt::format("{} has no ctx-workflow-mcp; give --bin-dir (nothing written)", bin_dir));
    std::vector<std::string> mcp_args{"register", "--config", t.mcp_config.string(), "--command",
                                      (fs::path(bin_dir) / "ctx-workflow-mcp").string()};
    if (!status_line_only && !dry_run) {
      // The MCP configuration is read and merged first, without writing: an install that fails
      // there writes nothing (not a settings.json with hooks and no server).
      std::ostringstream discard;
      AppContext check{ctx.env, ctx.read_stdin, discard, ctx.err};
      std::vector<std::string> check_args = mcp_args;
      check_args.push_back("--dry-run");
      if (int rc = run_mcp_config(check_args, check)) return rc;
    }
    fs::create_directories(t.settings_manifest.parent_path(), ec);
    if (int rc =
            edit_settings(action, t.settings.string(), plan,
                          dry_run ? "" : t.settings_manifest.string(), dry_run, wrap_hint, ctx))
      return rc;
    if (status_line_only) return exit_code(ExitCode::ok);
    if (dry_run)
      mcp_args.push_back("--dry-run");
    else
      mcp_args.insert(mcp_args.end(), {"--manifest", t.mcp_manifest.string()});
    if (int rc = run_mcp_config(mcp_args, ctx)) return rc;
    // The archive's search server, beside it (its own record: each is removed on its own).
    std::vector<std::string> archive_args{"register",
                                          "--config",
                                          t.mcp_config.string(),
                                          "--name",
                                          kArchiveServer,
                                          "--command",
                                          (fs::path(bin_dir) / "ctx-archive-mcp").string()};
    if (dry_run)
      archive_args.push_back("--dry-run");
    else
      archive_args.insert(archive_args.end(), {"--manifest", t.archive_mcp_manifest.string()});
    if (!dry_run && !fs::is_regular_file(fs::path(bin_dir) / "ctx-archive-mcp", ec))
      print_note(
          ctx.err, kTool,
          fmt::format("{} has no ctx-archive-mcp: the archive's search tools are not registered",
                      bin_dir));
    else if (int rc = run_mcp_config(archive_args, ctx))
      return rc;
    if (dry_run) return exit_code(ExitCode::ok);
    auto skills = copy_skills(data_dir / "skills", t.claude_dir / "skills", bin_dir, ctx);
    if (!skills) return usage_error(ctx, "installing the skills: " + skills.error().message);
    if (skills->empty()) {
      print_note(
          ctx.err, kTool,
          fmt::format("no skills found in {} (give --data-dir)", (data_dir / "skills").string()));
    } else if (auto r = write_lines(t.skills_list, *skills); !r) {
      return usage_error(ctx, "recording the skills: " + r.error().message);
    }
    return exit_code(ExitCode::ok);
  }
  // uninstall: only what the manifests and the skills list record.
  std::error_code ec;
  bool any = false;
  // The archive's server first: the workflow server's record says whether the file and its
  // "mcpServers" were created by the install, and it goes last.
  if (fs::exists(t.archive_mcp_manifest, ec)) {
    any = true;
    std::vector<std::string> archive_args{"unregister",
                                          "--config",
                                          t.mcp_config.string(),
                                          "--name",
                                          kArchiveServer,
                                          "--command",
                                          (fs::path(bin_dir) / "ctx-archive-mcp").string(),
                                          "--manifest",
                                          t.archive_mcp_manifest.string()};
    if (int rc = run_mcp_config(archive_args, ctx)) return rc;
  }
  if (fs::exists(t.mcp_manifest, ec)) {
    any = true;
    std::vector<std::string> mcp_args{"unregister",
                                      "--config",
                                      t.mcp_config.string(),
                                      "--command",
                                      (fs::path(bin_dir) / "ctx-workflow-mcp").string(),
                                      "--manifest",
                                      t.mcp_manifest.string()};
    if (int rc = run_mcp_config(mcp_args, ctx)) return rc;
  }
  if (fs::exists(t.settings_manifest, ec)) {
    any = true;
    if (int rc = edit_settings(action, t.settings.string(), plan, t.settings_manifest.string(),
                               false, wrap_hint, ctx))
      return rc;
  }
  if (!status_line_only && fs::exists(t.skills_list, ec)) {
    any = true;
    remove_skills(t.skills_list, ctx);
  }
  if (!any) ctx.out << "nothing recorded as installed for " << t.settings.string() << '\n';
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
  auto skills = copy_skills(skills_dir, out / "skills", "", ctx);
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

// Which installs are active: "settings: …" and "plugin: …" lines, or "none".
int show_active(const util::Env& env, const std::string& project, AppContext& ctx) {
  bool any = false;
  for (const auto& f : settings_files(env, project)) {
    auto j = read_json(f, true);
    if (!j) continue;
    auto cmds = claude::ctxkit_hook_commands(*j);
    if (!cmds.empty()) {
      any = true;
      ctx.out << "settings: " << cmds.size() << " ctxkit hook command"
              << (cmds.size() == 1 ? "" : "s") << " in " << f.string() << '\n';
    }
  }
  for (const auto& line : enabled_plugins_in(settings_files(env, project))) {
    any = true;
    ctx.out << "plugin: " << line << '\n';
  }
  if (!any) ctx.out << "none\n";
  return exit_code(ExitCode::ok);
}
}  // namespace

int run_settings(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(
      kTool,
      "Registers ctxkit with Claude Code, or removes it. Without --settings, install does the "
      "whole "
      "per-user set-up (hooks and status line in ~/.claude/settings.json, the workflow MCP server "
      "in "
      "~/.claude.json, the skills in ~/.claude/skills; with --project, that project's files) and "
      "uninstall removes exactly what it added. With --settings, only the hooks and status line of "
      "that file. snippet prints the settings; plugin writes the Claude Code plugin; active says "
      "which install (settings, plugin) is in use.");
  CLI::App& app = cli.app();
  std::string action, settings_path, bin_dir, manifest_path, project, data_dir, manifest_dir,
      out_dir, skills_dir;
  bool dry_run = false, status_line_only = false, wrap_status_line = false;
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
      "where the records of the set-up are kept (default: $XDG_STATE_HOME/ctxkit/install)");
  app.add_flag("--status-line-only", status_line_only,
               "only the status line (for plugin users: a plugin cannot set it)");
  app.add_flag("--wrap-status-line", wrap_status_line,
               "install: when a status line of yours is set, keep it and show ctxkit's beside it "
               "(ctx-status --wrap)");
  app.add_option("--out", out_dir, "plugin: the folder to write the plugin and its marketplace to");
  app.add_option("--skills-dir", skills_dir,
                 "plugin: where the skills are (default: <data-dir>/skills)");
  app.add_flag("--dry-run", dry_run, "print the result instead of writing it");
  cli.add_version("print the version and exit");
  if (auto rc = cli.parse(args, ctx)) return *rc;
  if (action.empty())
    return usage_error(ctx, "an action is required: install, uninstall, snippet, plugin or active");

  if (bin_dir.empty()) {
    auto dir = util::executable_dir();
    if (!dir) return usage_error(ctx, "cannot find this program's folder; give --bin-dir");
    bin_dir = dir->string();
  } else {
    bin_dir = absolute_path(bin_dir).string();
  }
  while (bin_dir.size() > 1 && bin_dir.back() == '/') bin_dir.pop_back();
  const fs::path data = data_dir.empty() ? (fs::path(bin_dir).parent_path() / "share" / "ctxkit")
                                         : absolute_path(data_dir);

  if (action == "active") return show_active(ctx.env, project, ctx);
  if (action == "plugin") {
    if (out_dir.empty()) return usage_error(ctx, "--out is required for plugin");
    return write_plugin(absolute_path(out_dir), data,
                        skills_dir.empty() ? data / "skills" : absolute_path(skills_dir), ctx);
  }
  claude::SettingsPlan plan = claude::default_plan(bin_dir);
  if (status_line_only) plan.hooks.clear();
  plan.wrap_status_line = wrap_status_line;
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
  if (!settings_path.empty()) {
    if (action == "install" && !status_line_only) {
      if (auto enabled = enabled_plugins_in({user_settings(ctx.env), fs::path(settings_path)});
          !enabled.empty())
        return usage_error(ctx, plugin_refusal(enabled) + " (nothing written)");
    }
    if (wrap_status_line && action == "install" && manifest_path.empty() && !dry_run)
      return usage_error(ctx,
                         "--wrap-status-line needs --manifest (where uninstall finds the status "
                         "line to put back)");
    return edit_settings(action, settings_path, plan, manifest_path, dry_run, wrap_hint, ctx);
  }
  if (!manifest_path.empty())
    return usage_error(
        ctx, "--manifest goes with --settings; the set-up keeps its records in --manifest-dir");
  const fs::path records = manifest_dir.empty()
                               ? util::xdg_state_home(ctx.env) / "ctxkit" / "install"
                               : absolute_path(manifest_dir);
  Targets t = targets_for(ctx.env, project, records);
  return full_install(action, t, bin_dir, data, status_line_only, wrap_status_line, dry_run,
                      enabled_plugins_in(settings_files(ctx.env, project)), wrap_hint, ctx);
}

}  // namespace ctxkit::apps
