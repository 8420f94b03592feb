#include "apps/mcp_config_app.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "apps/cli.hpp"
#include "claude/mcp_config.hpp"
#include "install/install_records.hpp"
#include "install/settings_edit.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/paths.hpp"
#include "util/time.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
constexpr const char* kTool = "ctx-workflow-mcp";

// ~/.claude.json grows with the client's history of projects: it may be far larger than a
// settings file.
constexpr uint64_t kMaxConfigBytes = 256u << 20;

Result<std::string> read_text(const fs::path& p) {
  return util::read_file(p, {kMaxConfigBytes});  // never blocks on a FIFO
}

// The document, null when the file is missing or blank.
Result<ojson> read_json(const fs::path& p) {
  return install::read_json_file(p, /*missing_ok=*/true, kMaxConfigBytes);
}

// The folder of a server's program (a path, not a shell command); empty for a bare name.
std::string program_dir(const std::string& program) {
  if (program.empty() || program.front() != '/') return {};
  return fs::path(program).parent_path().lexically_normal().string();
}

}  // namespace

int run_mcp_config(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(kTool,
                 "Registers the workflow MCP server in a Claude Code MCP configuration "
                 "(~/.claude.json or a project's .mcp.json), or removes it.",
                 std::string(kTool) + " register|unregister");
  CLI::App& app = cli.app();
  std::string action, config_path, manifest_path, name = "ctxkit-workflow", command;
  std::vector<std::string> server_args;
  bool replace = false, dry_run = false, all = false;
  app.add_option("action", action, "register | unregister")
      ->required()
      ->check(CLI::IsMember({"register", "unregister"}));
  app.add_option("--config", config_path,
                 "the file to edit: ~/.claude.json (user) or <project>/.mcp.json")
      ->required();
  app.add_option("--name", name, "the server's name (tools are mcp__<name>__<tool>)");
  app.add_option("--command", command, "the program to run (default: this program)");
  app.add_option("--arg", server_args, "an argument for the server (repeatable)");
  app.add_option("--manifest", manifest_path,
                 "where to record (register) or read (unregister) what was created");
  app.add_flag("--replace", replace,
               "take the name over from a server of yours (one that runs another program; a "
               "server that runs this program from another folder is taken over without it)");
  app.add_flag("--all", all,
               "unregister: remove the server also when it runs this program from another folder "
               "(another install's)");
  app.add_flag("--dry-run", dry_run, "print the resulting file instead of writing it");
  if (auto rc = cli.parse(args, ctx)) return *rc;
  const auto error = cli.error(ctx);

  if (command.empty()) {
    auto dir = util::executable_dir();
    if (!dir) return error("cannot find this program's path; give --command");
    command = (*dir / "ctx-workflow-mcp").string();
  }
  claude::McpServerEntry entry{name, command, server_args, {}};

  fs::path link(config_path);
  std::error_code ec;
  fs::path target = link;
  if (fs::is_symlink(link, ec)) {
    target = fs::weakly_canonical(link, ec);
    if (ec) return error(fmt::format("resolving {}: {}", link.string(), ec.message()));
  }
  auto doc = read_json(target);
  if (!doc) return error(doc.error().message);
  const bool file_existed = fs::exists(target, ec);
  // Keep the file's own ending (the client writes ~/.claude.json without a final newline).
  bool final_newline = true;
  if (file_existed) {
    auto text = read_text(target);
    if (text && !text->empty()) final_newline = text->back() == '\n';
  }

  ojson manifest = ojson::object();
  if (!manifest_path.empty()) {
    auto m = read_json(manifest_path);
    if (m && m->is_object()) manifest = *m;
  }
  // The records of another install whose server this one takes over (register) or removes
  // (unregister --all): what it created is then this one's to remove.
  auto others_for = [&](const std::string& server_command) {
    if (manifest_path.empty() || server_command.empty()) return std::vector<fs::path>{};
    return install::other_records(fs::path(manifest_path).filename().string(),
                                  {program_dir(server_command)}, manifest_path, ctx.env);
  };
  std::vector<fs::path> taken;
  claude::McpConfigReport report;
  std::string problem;
  if (action == "register") {
    problem = claude::merge_mcp_server(*doc, entry, replace, report);
  } else {
    const ojson* server = nullptr;
    if (doc->is_object())
      if (auto servers = doc->find("mcpServers"); servers != doc->end() && servers->is_object())
        if (auto it = servers->find(name); it != servers->end()) server = &*it;
    ojson combined = manifest;
    if (all && server && claude::runs_program(*server, command)) {
      const std::string current = server->value("command", std::string());
      taken = others_for(current);
      for (const auto& r : taken) {
        ojson other = install::read_record(r);
        install::take_over_record(combined, other);
        if (!combined.contains("replaced") && other.contains("replaced"))
          combined["replaced"] = other["replaced"];
      }
    }
    problem = remove_mcp_server(*doc, entry, combined.value("created_container", false), report,
                                all, combined.value("replaced", ojson()));
    manifest = std::move(combined);
  }
  if (!problem.empty())
    return error(fmt::format("{}: {} (nothing written)", target.string(), problem));
  if (report.changed && util::read_only_file(target))
    return error(fmt::format("{}: the file is read-only (nothing written; make it writable to {})",
                             target.string(), action));
  if (dry_run) {
    ctx.out << (doc->is_null() ? ojson::object() : *doc).dump(2) << '\n';
    return 0;
  }
  if (action == "unregister" && manifest.value("created_file", false) && file_existed &&
      doc->is_object() && doc->empty()) {
    fs::remove(target, ec);
    if (ec) return error(fmt::format("removing {}: {}", target.string(), ec.message()));
    for (const auto& line : report.lines) ctx.out << line << '\n';
    ctx.out << "removed: " << target.string() << " (created by the install)\n";
    if (!manifest_path.empty()) fs::remove(manifest_path, ec);
    install::remove_records(taken);
    return 0;
  }
  if (report.changed) {
    unsigned mode = 0600;
    struct stat st {};
    if (::stat(target.c_str(), &st) == 0) {
      mode = st.st_mode & 07777;
      auto original = read_text(target);
      if (!original) return error(original.error().message);
      fs::path backup = link;
      backup += fmt::format(".ctxkit-backup-{}", util::format_compact_utc(util::now_ms()));
      if (auto r = util::write_file_atomic(backup, *original, mode); !r)
        return error(fmt::format("saving a backup: {} (nothing written)", r.error().message));
      ctx.out << "backup: " << backup.string() << '\n';
    } else {
      fs::create_directories(target.parent_path(), ec);
    }
    if (auto r = util::write_file_atomic(target, doc->dump(2) + (final_newline ? "\n" : ""), mode);
        !r)
      return error(r.error().message);
  }
  for (const auto& line : report.lines) ctx.out << line << '\n';
  if (!manifest_path.empty()) {
    if (action == "register") {
      manifest["config"] = link.string();
      manifest["bin_dir"] = program_dir(command);
      if (!manifest.contains("created_file")) manifest["created_file"] = !file_existed;
      if (!manifest.value("created_container", false))
        manifest["created_container"] = report.created_container;
      if (!report.replaced_original.is_null()) manifest["replaced"] = report.replaced_original;
      taken = others_for(report.replaced_command);
      for (const auto& r : taken) {
        ojson other = install::read_record(r);
        install::take_over_record(manifest, other);
        if (!manifest.contains("replaced") && other.contains("replaced"))
          manifest["replaced"] = other["replaced"];
      }
      fs::create_directories(fs::path(manifest_path).parent_path(), ec);
      if (auto r = util::write_file_atomic(manifest_path, manifest.dump(2) + "\n", 0644); !r)
        return error(fmt::format("writing the manifest: {}", r.error().message));
    } else {
      fs::remove(manifest_path, ec);
    }
  }
  install::remove_records(taken);
  return 0;
}

}  // namespace ctxkit::apps
