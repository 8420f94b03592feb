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
#include "apps/install_records.hpp"
#include "apps/mcp_config_app.hpp"
#include "claude/install_check.hpp"
#include "claude/settings_merge.hpp"
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

// One edit of a settings file: the install or removal of ctxkit's hooks and status line.
struct SettingsEdit {
  std::string action;  // install | uninstall
  fs::path settings;
  claude::SettingsPlan plan;
  fs::path manifest;  // where the install's record is; empty: none is kept
  bool dry_run = false;
  // The command that installs again with --wrap-status-line (offered when a status line of the
  // user's is kept).
  std::string wrap_hint;
  claude::RemoveScope scope;  // uninstall: which of ctxkit's entries go
  // install: ctxkit's hooks of every folder are removed first (the plugin brings its own).
  bool take_over_hooks = false;
};

// The status line's command, or empty.
std::string status_command_of(const ojson& settings) {
  if (!settings.is_object()) return {};
  auto it = settings.find("statusLine");
  if (it == settings.end() || !it->is_object()) return {};
  auto c = it->find("command");
  return c != it->end() && c->is_string() ? c->get<std::string>() : std::string();
}

// The folders of the programs `commands` run, each once, `except` left out.
std::vector<std::string> program_dirs(const std::vector<std::string>& commands,
                                      const std::string& home, const std::string& except) {
  std::vector<std::string> out;
  for (const auto& c : commands) {
    std::string d = claude::command_program_dir(c, home);
    if (!d.empty() && d != except && std::find(out.begin(), out.end(), d) == out.end())
      out.push_back(d);
  }
  return out;
}

// The commands of ctxkit's entries in `settings`: its hooks and a status line running ctx-status.
std::vector<std::string> ctxkit_commands(const ojson& settings) {
  auto out = claude::ctxkit_hook_commands(settings);
  if (std::string s = status_command_of(settings); !s.empty() && claude::runs_ctx_status(s))
    out.push_back(s);
  return out;
}

// The status line a record says an install wrapped or replaced, when it is `command`.
std::optional<claude::WrappedStatusLine> recorded_status_line(const ojson& record,
                                                              const std::string& command) {
  auto w = record.find("status_line");
  if (w == record.end() || !w->is_object()) return std::nullopt;
  auto c = w->find("command");
  auto original = w->find("original");
  if (c == w->end() || original == w->end() || !c->is_string() || c->get<std::string>() != command)
    return std::nullopt;
  return claude::WrappedStatusLine{command, *original};
}

// The containers of `created` that `settings` still has (a record names only what is there).
ojson existing_containers(const ojson& created, const ojson& settings) {
  ojson out = ojson::array();
  if (!created.is_array() || !settings.is_object()) return out;
  auto hooks = settings.find("hooks");
  for (const auto& c : created) {
    if (!c.is_string()) continue;
    const std::string name = c.get<std::string>();
    bool there =
        hooks != settings.end() && hooks->is_object() &&
        (name == "hooks" || (name.starts_with("hooks.") && hooks->contains(name.substr(6))));
    if (there) out.push_back(name);
  }
  return out;
}

// After an uninstall: ctxkit's entries of another install (another folder) stay; name them and
// the way to remove them.
void note_other_installs(const fs::path& file, const ojson& settings, const std::string& home,
                         AppContext& ctx) {
  auto left = program_dirs(ctxkit_commands(settings), home, std::string());
  if (!left.empty())
    ctx.out << fmt::format(
        "kept: ctxkit's entries in {} that run the programs of another install ({}); remove "
        "them from there, or with: ctx-settings uninstall --all\n",
        file.string(), fmt::join(left, ", "));
}

int edit_settings(const SettingsEdit& e, AppContext& ctx) {
  const fs::path& link = e.settings;
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
  if (!e.manifest.empty()) {
    auto m = read_json(e.manifest, true);
    if (m && m->is_object()) manifest = *m;
  }
  auto created_of = [](const ojson& record) {
    std::vector<std::string> out;
    if (record.contains("created") && record["created"].is_array())
      for (const auto& c : record["created"])
        if (c.is_string()) out.push_back(c.get<std::string>());
    return out;
  };
  const std::string home = e.scope.home;
  const std::string own_dir = e.plan.bin_dir;
  const std::string record_name = e.manifest.filename().string();
  std::optional<claude::WrappedStatusLine> wrapped;
  if (auto w = manifest.find("status_line"); w != manifest.end() && w->is_object() &&
                                             w->contains("command") &&
                                             (*w)["command"].is_string() && w->contains("original"))
    wrapped = claude::WrappedStatusLine{(*w)["command"].get<std::string>(), (*w)["original"]};

  claude::SettingsReport report;
  std::string problem;
  std::vector<fs::path> taken;  // the records of other installs this one takes over
  if (e.action == "install") {
    if (e.take_over_hooks && settings->is_object()) {
      claude::SettingsPlan hooks_plan = claude::default_plan(own_dir);
      hooks_plan.status_command.clear();
      problem = remove_settings(*settings, hooks_plan, {}, report, std::nullopt,
                                claude::RemoveScope{true, home});
    }
    const std::string status_before = status_command_of(*settings);
    if (problem.empty()) problem = merge_settings(*settings, e.plan, report);
    if (problem.empty() && !e.manifest.empty()) {
      // The records of the installs whose entries this one replaced: what they created is this
      // install's to remove now, and a status line of the user's they had taken stays recorded.
      // Only an install that has nothing left in this file gives its record up.
      std::vector<std::string> gone;
      const auto left = program_dirs(ctxkit_commands(*settings), home, std::string());
      for (const auto& d : program_dirs(report.replaced_commands, home, own_dir))
        if (std::find(left.begin(), left.end(), d) == left.end()) gone.push_back(d);
      taken = other_records(record_name, gone, e.manifest, ctx.env);
      for (const auto& r : taken) {
        ojson other = read_record(r);
        take_over_record(manifest, other);
        if (!report.wrapped)
          if (auto w = recorded_status_line(other, status_before)) {
            w->command = status_command_of(*settings);
            report.wrapped = std::move(*w);
          }
      }
      if (e.take_over_hooks)
        claude::drop_created_containers(*settings, created_of(manifest), report);
    }
  } else {
    if (e.scope.all && !e.manifest.empty()) {
      taken =
          other_records(record_name, program_dirs(ctxkit_commands(*settings), home, std::string()),
                        e.manifest, ctx.env);
      const std::string current = status_command_of(*settings);
      for (const auto& r : taken) {
        ojson other = read_record(r);
        take_over_record(manifest, other);
        if (!wrapped || wrapped->command != current)
          if (auto w = recorded_status_line(other, current)) wrapped = std::move(w);
      }
    }
    problem = remove_settings(*settings, e.plan, created_of(manifest), report, wrapped, e.scope);
  }
  if (!problem.empty()) {
    print_error(ctx.err, kTool, target.string() + ": " + problem + " (nothing written)");
    return exit_code(ExitCode::failure);
  }
  if (report.changed && util::read_only_file(target)) {
    print_error(ctx.err, kTool,
                target.string() + ": the file is read-only (nothing written; make it writable to " +
                    e.action + ")");
    return exit_code(ExitCode::failure);
  }
  if (e.dry_run) {
    ctx.out << settings->dump(2) << '\n';
    return exit_code(ExitCode::ok);
  }
  const bool file_existed = fs::exists(target, ec);
  if (e.action == "uninstall" && manifest.value("created_file", false) && settings->empty() &&
      file_existed) {
    // The install created this file and nothing else is in it now: remove it.
    fs::remove(target, ec);
    if (ec) {
      print_error(ctx.err, kTool, "removing " + target.string() + ": " + ec.message());
      return exit_code(ExitCode::failure);
    }
    for (const auto& line : report.lines) ctx.out << line << '\n';
    ctx.out << "removed: " << target.string() << " (created by the install)\n";
    if (!e.manifest.empty()) fs::remove(e.manifest, ec);
    remove_records(taken);
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
        report.kept_status_command, e.wrap_hint);
  if (e.action == "uninstall" && !e.scope.all) note_other_installs(link, *settings, home, ctx);
  if (!e.manifest.empty()) {
    if (e.action == "install") {
      if (report.wrapped)
        manifest["status_line"] =
            ojson{{"command", report.wrapped->command}, {"original", report.wrapped->original}};
      else if (wrapped && status_command_of(*settings) != wrapped->command)
        manifest.erase("status_line");
      std::vector<std::string> created = created_of(manifest);
      for (const auto& c : report.created)
        if (std::find(created.begin(), created.end(), c) == created.end()) created.push_back(c);
      manifest["settings"] = link.string();
      manifest["bin_dir"] = own_dir;
      manifest["created"] = existing_containers(ojson(created), *settings);
      if (!manifest.contains("created_file")) manifest["created_file"] = !file_existed;
      fs::create_directories(e.manifest.parent_path(), ec);
      if (auto r = util::write_file_atomic(e.manifest, manifest.dump(2) + "\n", 0644); !r) {
        print_error(ctx.err, kTool, "writing the manifest: " + r.error().message);
        return exit_code(ExitCode::failure);
      }
    } else {
      fs::remove(e.manifest, ec);
    }
  }
  remove_records(taken);
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
      CTXKIT_TRY(util::write_file_atomic(target, out, 0644));
      written.push_back(target);
    }
    ctx.out << "installed skill /" << dir.filename().string() << '\n';
  }
  return written;
}

// The files a skills list names.
std::vector<fs::path> listed_skills(const fs::path& list) {
  std::vector<fs::path> out;
  auto text = util::read_file(list, {4u << 20});
  if (!text) return out;
  size_t pos = 0;
  while (pos < text->size()) {
    size_t nl = text->find('\n', pos);
    std::string line = text->substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text->size() : nl + 1;
    if (!line.empty() && line.front() != '#') out.emplace_back(line);
  }
  return out;
}

// The first line of a skills list names the programs' folder of the install that wrote it.
constexpr std::string_view kSkillsOwner = "# installed by ctxkit in ";

// The folder of the install that wrote a skills list; empty when the list does not say.
std::string skills_owner(const fs::path& list) {
  auto text = util::read_file(list, {4u << 20});
  if (!text || !text->starts_with(kSkillsOwner)) return {};
  return text->substr(kSkillsOwner.size(), text->find('\n') - kSkillsOwner.size());
}

// Removes `files` and the folders left empty by that.
void remove_skill_files(const std::vector<fs::path>& files, AppContext& ctx) {
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const auto& f : files) {
    if (fs::remove(f, ec)) ctx.out << "removed: " << f.string() << '\n';
    if (std::find(dirs.begin(), dirs.end(), f.parent_path()) == dirs.end())
      dirs.push_back(f.parent_path());
  }
  for (const auto& d : dirs)
    if (fs::is_directory(d, ec) && fs::is_empty(d, ec)) fs::remove(d, ec);
}

// Removes the files the skills list names, the folders left empty by that, and the list.
void remove_skills(const fs::path& list, AppContext& ctx) {
  remove_skill_files(listed_skills(list), ctx);
  std::error_code ec;
  fs::remove(list, ec);
  if (fs::is_directory(list.parent_path(), ec) && fs::is_empty(list.parent_path(), ec))
    fs::remove(list.parent_path(), ec);
}

Result<void> write_skills_list(const fs::path& file, const std::string& bin_dir,
                               const std::vector<fs::path>& lines) {
  std::string text = std::string(kSkillsOwner) + bin_dir + "\n";
  for (const auto& l : lines) text += l.string() + "\n";
  return util::write_file_atomic(file, text, 0644);
}

int usage_error(AppContext& ctx, const std::string& message) {
  print_error(ctx.err, kTool, message);
  return exit_code(ExitCode::failure);
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
std::string project_conflict(const util::Env& env, const Targets& t) {
  for (const auto& f : settings_files(env, "")) {
    if (f == t.settings) continue;
    auto j = read_json(f, true);
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
  if (auto j = read_json(local, true); j && local != t.settings)
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
void note_project_installs(const Targets& t, AppContext& ctx) {
  auto doc = read_json(t.mcp_config, true);
  if (!doc || !doc->is_object() || !doc->contains("projects") || !(*doc)["projects"].is_object())
    return;
  size_t seen = 0;
  for (const auto& [dir, _] : (*doc)["projects"].items()) {
    if (++seen > 2000) break;  // a bound on the files read, far beyond a real list
    fs::path file = fs::path(dir) / ".claude" / "settings.json";
    if (dir.empty() || dir.front() != '/' || file == t.settings) continue;
    auto j = read_json(file, true);
    if (!j || claude::ctxkit_hook_commands(*j).empty()) continue;
    ctx.out << fmt::format(
        "note: {} registers ctxkit's hooks too, so in that project they run twice; remove them "
        "there with: ctx-settings uninstall --project {} --all\n",
        file.string(), util::shell_quote(dir));
  }
}

// The per-user (or per-project) set-up: hooks and status line, the MCP servers, the skills.
int full_install(const std::string& action, const Targets& t, const std::string& bin_dir,
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
        (is_plugin_bin(bin_dir) || !enabled_plugins_in(settings_files(ctx.env, project)).empty());
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
      if (records == default_records_dir(ctx.env)) {
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
    SettingsEdit edit{"install",
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
      if (fs::exists(t.skills_list, ec)) remove_skills(t.skills_list, ctx);
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
    const auto before = listed_skills(t.skills_list);
    auto skills = copy_skills(data_dir / "skills", t.claude_dir / "skills", bin_dir, ctx);
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
      remove_skill_files(stale, ctx);
      if (auto r = write_skills_list(t.skills_list, bin_dir, *skills); !r)
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
    SettingsEdit edit{"uninstall",
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
    const std::string owner = skills_owner(t.skills_list);
    if (o.all || owner.empty() || owner == bin_dir) {
      any = true;
      remove_skills(t.skills_list, ctx);
    } else {
      ctx.out << fmt::format("kept: the skills in {} (installed from {})\n",
                             t.skills_list.parent_path().string(), owner);
    }
  }
  if (!any) {
    ctx.out << "nothing recorded as installed for " << t.settings.string() << '\n';
    if (auto j = read_json(t.settings, true)) note_other_installs(t.settings, *j, home, ctx);
  }
  if (o.all)
    for (const auto& line : enabled_plugins_in({t.settings}))
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

// Where the client installed plugin `id` (its installed_plugins.json), or empty.
std::string plugin_root(const util::Env& env, const std::string& id) {
  fs::path dir = env.get_nonempty("CLAUDE_CONFIG_DIR")
                     ? fs::path(*env.get_nonempty("CLAUDE_CONFIG_DIR"))
                     : util::home_dir(env) / ".claude";
  auto installed = read_json(dir / "plugins" / "installed_plugins.json", true);
  if (!installed) return {};
  auto paths = claude::plugin_install_paths(nlohmann::json::parse(installed->dump()), id);
  return paths.empty() ? std::string() : paths.front();
}

// Which installs are active: "settings: …" and "plugin: …" lines, or "none"; when both are,
// what that does and the command that keeps each.
int show_active(const util::Env& env, const std::string& project, const std::string& bin_dir,
                AppContext& ctx) {
  bool by_settings = false;
  for (const auto& f : settings_files(env, project)) {
    auto j = read_json(f, true);
    if (!j) continue;
    auto cmds = claude::ctxkit_hook_commands(*j);
    if (!cmds.empty()) {
      by_settings = true;
      ctx.out << "settings: " << cmds.size() << " ctxkit hook command"
              << (cmds.size() == 1 ? "" : "s") << " in " << f.string() << '\n';
    }
  }
  std::string plugin_id;
  for (const auto& line : enabled_plugins_in(settings_files(env, project))) {
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
    bin_dir = absolute_path(bin_dir).string();
  }
  while (bin_dir.size() > 1 && bin_dir.back() == '/') bin_dir.pop_back();
  const fs::path data = data_dir.empty() ? (fs::path(bin_dir).parent_path() / "share" / "ctxkit")
                                         : absolute_path(data_dir);

  if (action == "active") return show_active(ctx.env, project, bin_dir, ctx);
  if (action == "plugin") {
    if (out_dir.empty()) return usage_error(ctx, "--out is required for plugin");
    return write_plugin(absolute_path(out_dir), data,
                        skills_dir.empty() ? data / "skills" : absolute_path(skills_dir), ctx);
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
    const fs::path file = absolute_path(settings_path);
    bool for_plugin = false;
    if (action == "install") {
      // A plugin enabled in this file is disabled (this install takes its place); one enabled
      // for every user's project elsewhere cannot be, from here.
      if (auto elsewhere = enabled_plugins_in({user_settings(ctx.env)});
          !elsewhere.empty() && file != absolute_path(user_settings(ctx.env).string()) &&
          !o.status_line_only)
        return usage_error(
            ctx, fmt::format("the ctxkit plugin is enabled ({}): its hooks would run beside "
                             "these (nothing written); disable it first with: claude plugin "
                             "disable {}",
                             elsewhere.front(),
                             elsewhere.front().substr(0, elsewhere.front().find(' '))));
      plan.disable_plugins = !o.status_line_only;
      for_plugin =
          o.status_line_only && (is_plugin_bin(bin_dir) || !enabled_plugins_in({file}).empty());
    }
    if (o.wrap_status_line && action == "install" && manifest_path.empty() && !o.dry_run)
      return usage_error(ctx,
                         "--wrap-status-line needs --manifest (where uninstall finds the status "
                         "line to put back)");
    if (o.replace && action == "install" && manifest_path.empty() && !o.dry_run)
      return usage_error(ctx,
                         "--replace needs --manifest (where uninstall finds the status line to put "
                         "back)");
    SettingsEdit edit{action,
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
  fs::path records = absolute_path(manifest_dir);
  if (manifest_dir.empty()) {
    const fs::path beside = fs::path(bin_dir).parent_path() / "share" / "ctxkit";
    std::error_code ec;
    records = fs::is_regular_file(beside / "installed-files.txt", ec)
                  ? beside
                  : default_records_dir(ctx.env);
  }
  Targets t = targets_for(ctx.env, project, records);
  if (action == "install" && !project.empty() && !o.status_line_only)
    if (std::string why = project_conflict(ctx.env, t); !why.empty()) return usage_error(ctx, why);
  const int rc = full_install(action, t, bin_dir, data, o, project, wrap_hint, ctx);
  if (rc != 0 || !project.empty()) return rc;
  if (action == "install" && o.supervise) return install_shell_function(bin_dir, o.dry_run, ctx);
  if (action == "uninstall") return remove_shell_function(bin_dir, o.all, o.dry_run, ctx);
  return rc;
}

}  // namespace ctxkit::apps
