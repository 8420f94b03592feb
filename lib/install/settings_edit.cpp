#include "install/settings_edit.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "install/install_records.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/json_depth.hpp"
#include "util/json_io.hpp"
#include "util/time.hpp"

namespace ctxkit::install {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
// Configuration files are not nested deeper than this (and deeper would overflow the stack of
// the recursive copy and dump).
constexpr size_t kMaxDepth = 256;
// Settings files are small.
constexpr uint64_t kMaxSettingsBytes = 16ull << 20;

}  // namespace

Result<ojson> read_json_file(const fs::path& p, bool missing_ok, uint64_t max_bytes) {
  std::error_code ec;
  if (!fs::exists(p, ec)) {
    if (missing_ok) return ojson();
    return fail(fmt::format("reading {}: no such file", p.string()));
  }
  auto text = util::read_file(p, {max_bytes});  // never blocks on a FIFO
  if (!text) return std::unexpected(text.error());
  if (text->find_first_not_of(" \t\r\n") == std::string::npos) return ojson();
  if (util::json_depth(*text, kMaxDepth) > kMaxDepth)
    return fail(fmt::format("{}: nested deeper than {} levels", p.string(), kMaxDepth),
                Error::Kind::Invalid);
  try {
    return util::parse_ordered_json_or_throw(*text);
  } catch (const ojson::exception& e) {
    std::string what = e.what();
    auto pos = what.find("parse error");
    return fail(fmt::format("{} is not valid JSON: {}", p.string(),
                            pos == std::string::npos ? what : what.substr(pos)));
  }
}

Result<ojson> read_settings_json(const fs::path& p, bool missing_ok) {
  return read_json_file(p, missing_ok, kMaxSettingsBytes);
}

namespace {

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

}  // namespace

// After an uninstall: ctxkit's entries of another install (another folder) stay; name them and
// the way to remove them.
void note_other_installs(const fs::path& file, const ojson& settings, const std::string& home,
                         std::ostream& out) {
  auto left = program_dirs(ctxkit_commands(settings), home, std::string());
  if (!left.empty())
    out << fmt::format(
        "kept: ctxkit's entries in {} that run the programs of another install ({}); remove "
        "them from there, or with: ctx-settings uninstall --all\n",
        file.string(), fmt::join(left, ", "));
}

Result<fs::path> edit_target(const fs::path& link) {
  std::error_code ec;
  if (!fs::is_symlink(link, ec)) return link;
  fs::path target = fs::weakly_canonical(link, ec);
  if (ec) return fail("resolving " + link.string() + ": " + ec.message());
  return target;
}

Result<void> remove_made_file(const fs::path& target, const std::vector<std::string>& lines,
                              const fs::path& manifest, const std::vector<fs::path>& taken,
                              std::ostream& out) {
  std::error_code ec;
  fs::remove(target, ec);
  if (ec) return fail("removing " + target.string() + ": " + ec.message());
  for (const auto& line : lines) out << line << '\n';
  out << "removed: " << target.string() << " (created by the install)\n";
  if (!manifest.empty()) fs::remove(manifest, ec);
  remove_records(taken);
  return {};
}

Result<void> replace_with_backup(const fs::path& link, const fs::path& target,
                                 const std::string& text, uint64_t max_bytes, std::ostream& out) {
  unsigned mode = 0600;
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    mode = st.st_mode & 07777;
    auto original = util::read_file(target, {max_bytes});  // never blocks on a FIFO
    if (!original) return fail(original.error().message + " (nothing written)");
    fs::path backup = link;
    backup += fmt::format(".ctxkit-backup-{}", util::format_compact_utc(util::now_ms()));
    if (auto r = util::write_file_atomic(backup, *original, mode); !r)
      return fail("saving a backup: " + r.error().message + " (nothing written)");
    out << "backup: " << backup.string() << '\n';
  } else {
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
  }
  return util::write_file_atomic(target, text, mode);
}

Result<void> edit_settings(const SettingsEdit& e, const util::Env& env, std::ostream& out) {
  const fs::path& link = e.settings;
  std::error_code ec;
  auto resolved = edit_target(link);
  if (!resolved) return std::unexpected(resolved.error());
  const fs::path& target = *resolved;
  auto settings = read_settings_json(target, /*missing_ok=*/true);
  if (!settings) {
    return fail(settings.error().message + " (nothing written)");
  }
  ojson manifest = ojson::object();
  if (!e.manifest.empty()) {
    auto m = read_settings_json(e.manifest, true);
    if (m && m->is_object()) manifest = *m;
  }
  auto created_of = [](const ojson& record) {
    std::vector<std::string> names;
    if (record.contains("created") && record["created"].is_array())
      for (const auto& c : record["created"])
        if (c.is_string()) names.push_back(c.get<std::string>());
    return names;
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
      taken = other_records(record_name, gone, e.manifest, env);
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
                        e.manifest, env);
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
    return fail(target.string() + ": " + problem + " (nothing written)");
  }
  if (report.changed && util::read_only_file(target)) {
    return fail(target.string() + ": the file is read-only (nothing written; make it writable to " +
                e.action + ")");
  }
  if (e.dry_run) {
    out << util::dump_json(*settings, 2) << '\n';
    return {};
  }
  const bool file_existed = fs::exists(target, ec);
  if (e.action == "uninstall" && manifest.value("created_file", false) && settings->empty() &&
      file_existed) {
    // The install created this file and nothing else is in it now: remove it.
    return remove_made_file(target, report.lines, e.manifest, taken, out);
  }
  if (report.changed)
    CTXKIT_TRY(replace_with_backup(link, target, util::dump_json(*settings, 2) + "\n",
                                   kMaxSettingsBytes, out));
  for (const auto& line : report.lines) out << line << '\n';
  if (!report.kept_status_command.empty())
    out << fmt::format(
        "ctxkit: your status line '{}' is kept; to show ctxkit's beside it run: {}\n",
        report.kept_status_command, e.wrap_hint);
  if (e.action == "uninstall" && !e.scope.all) note_other_installs(link, *settings, home, out);
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
      if (auto r = util::write_file_atomic(e.manifest, util::dump_json(manifest, 2) + "\n", 0644);
          !r) {
        return fail("writing the manifest: " + r.error().message);
      }
    } else {
      fs::remove(e.manifest, ec);
    }
  }
  remove_records(taken);
  return {};
}

}  // namespace ctxkit::install
