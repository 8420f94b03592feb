#include "apps/settings_app.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fmt/core.h>

#include "claude/settings_merge.hpp"
#include "apps/cli.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/time.hpp"

namespace ctxkit {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
constexpr const char* kTool = "ctx-settings";

// Settings files are small; anything deeper than this is not a settings file (and would
// overflow the stack of the recursive dump).
constexpr int kMaxDepth = 256;
constexpr uint64_t kMaxSettingsBytes = 16ull << 20;

Result<std::string> read_text(const fs::path& p) { return util::read_file(p, {kMaxSettingsBytes}); }

Result<ojson> read_json(const fs::path& p, bool missing_ok) {
  std::error_code ec;
  if (!fs::exists(p, ec)) {
    if (missing_ok) return ojson();
    return fail(fmt::format("reading {}: no such file", p.string()));
  }
  auto text = read_text(p);
  if (!text) return std::unexpected(text.error());
  if (text->find_first_not_of(" \t\r\n") == std::string::npos) return ojson();
  bool too_deep = false;
  ojson::parser_callback_t limit = [&](int depth, nlohmann::detail::parse_event_t, ojson&) {
    if (depth > kMaxDepth) too_deep = true;
    return !too_deep;
  };
  try {
    ojson j = ojson::parse(*text, limit);
    if (too_deep) return fail(fmt::format("{}: nested deeper than {} levels", p.string(), kMaxDepth), Error::Kind::Invalid);
    return j;
  } catch (const ojson::parse_error& e) {
    std::string what = e.what();
    auto pos = what.find("parse error");
    return fail(fmt::format("{} is not valid JSON: {}", p.string(), pos == std::string::npos ? what : what.substr(pos)));
  }
}
}  // namespace

int run_settings(const std::vector<std::string>& args, AppContext& ctx) {
  CLI::App app{"Registers ctxkit's hooks and status line in a Claude Code settings.json, or removes them."};
  app.name(kTool);
  std::string action, settings_path, bin_dir, manifest_path;
  bool dry_run = false;
  app.add_option("action", action, "install | uninstall | snippet")->required()->check(CLI::IsMember({"install", "uninstall", "snippet"}));
  app.add_option("--settings", settings_path, "the settings.json to edit");
  app.add_option("--bin-dir", bin_dir, "where the ctxkit programs are installed")->required();
  app.add_option("--manifest", manifest_path, "where to record (install) or read (uninstall) what was added");
  app.add_flag("--dry-run", dry_run, "print the result instead of writing it");
  if (auto rc = parse_cli(app, args, ctx, kTool)) return *rc;

  SettingsPlan plan = default_plan(bin_dir);
  if (action == "snippet") {
    ojson s;
    SettingsReport report;
    merge_settings(s, plan, report);
    ctx.out << s.dump(2) << '\n';
    return exit_code(ExitCode::ok);
  }
  if (settings_path.empty()) {
    print_error(ctx.err, kTool, "--settings is required for " + action);
    return exit_code(ExitCode::failure);
  }
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
    for (const auto& c : manifest["created"]) if (c.is_string()) created.push_back(c.get<std::string>());

  SettingsReport report;
  std::string problem = action == "install" ? merge_settings(*settings, plan, report)
                                            : remove_settings(*settings, plan, created, report);
  if (!problem.empty()) {
    print_error(ctx.err, kTool, target.string() + ": " + problem + " (nothing written)");
    return exit_code(ExitCode::failure);
  }
  if (dry_run) {
    ctx.out << settings->dump(2) << '\n';
    return exit_code(ExitCode::ok);
  }
  const bool file_existed = fs::exists(target, ec);
  if (action == "uninstall" && manifest.value("created_file", false) && settings->empty() && file_existed) {
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
  if (!manifest_path.empty()) {
    if (action == "install") {
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

}  // namespace ctxkit
