#include "install/mcp_edit.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "claude/mcp_config.hpp"
#include "install/install_records.hpp"
#include "install/settings_edit.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/json_io.hpp"

namespace ctxkit::install {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
// ~/.claude.json grows with the client's history of projects: it may be far larger than a
// settings file.
constexpr uint64_t kMaxConfigBytes = 256u << 20;

Result<std::string> read_text(const fs::path& p) {
  return util::read_file(p, {kMaxConfigBytes});  // never blocks on a FIFO
}

// The document, null when the file is missing or blank.
Result<ojson> read_json(const fs::path& p) {
  return read_json_file(p, /*missing_ok=*/true, kMaxConfigBytes);
}

// The folder of a server's program (a path, not a shell command); empty for a bare name.
std::string program_dir(const std::string& program) {
  if (program.empty() || program.front() != '/') return {};
  return fs::path(program).parent_path().lexically_normal().string();
}

// What another install's record says that this one now owns: its record's facts, and the server
// of the user's it replaced when this one has none.
void take_over_all(ojson& manifest, const std::vector<fs::path>& records) {
  for (const auto& r : records) {
    ojson other = read_record(r);
    take_over_record(manifest, other);
    if (!manifest.contains("replaced") && other.contains("replaced"))
      manifest["replaced"] = other["replaced"];
  }
}
}  // namespace

Result<void> edit_mcp_config(const McpEdit& e, const util::Env& env, std::ostream& out) {
  const std::string action = e.unregister ? "unregister" : "register";
  claude::McpServerEntry entry{e.name, e.command, e.args, {}};
  const fs::path& link = e.config;
  std::error_code ec;
  auto resolved = edit_target(link);
  if (!resolved) return std::unexpected(resolved.error());
  const fs::path& target = *resolved;
  auto doc = read_json(target);
  if (!doc) return std::unexpected(doc.error());
  const bool file_existed = fs::exists(target, ec);
  // Keep the file's own ending (the client writes ~/.claude.json without a final newline).
  bool final_newline = true;
  if (file_existed) {
    auto text = read_text(target);
    if (text && !text->empty()) final_newline = text->back() == '\n';
  }

  ojson manifest = ojson::object();
  if (!e.manifest.empty()) {
    auto m = read_json(e.manifest);
    if (m && m->is_object()) manifest = *m;
  }
  // The records of another install whose server this one takes over (register) or removes
  // (unregister --all): what it created is then this one's to remove.
  auto others_for = [&](const std::string& server_command) {
    if (e.manifest.empty() || server_command.empty()) return std::vector<fs::path>{};
    return other_records(e.manifest.filename().string(), {program_dir(server_command)}, e.manifest,
                         env);
  };
  std::vector<fs::path> taken;
  claude::McpConfigReport report;
  std::string problem;
  if (!e.unregister) {
    problem = claude::merge_mcp_server(*doc, entry, e.replace, report);
  } else {
    const ojson* server = nullptr;
    if (doc->is_object())
      if (auto servers = doc->find("mcpServers"); servers != doc->end() && servers->is_object())
        if (auto it = servers->find(e.name); it != servers->end()) server = &*it;
    ojson combined = manifest;
    if (e.all && server && claude::runs_program(*server, e.command)) {
      taken = others_for(server->value("command", std::string()));
      take_over_all(combined, taken);
    }
    problem = claude::remove_mcp_server(*doc, entry, combined.value("created_container", false),
                                        report, e.all, combined.value("replaced", ojson()));
    manifest = std::move(combined);
  }
  if (!problem.empty())
    return fail(fmt::format("{}: {} (nothing written)", target.string(), problem));
  if (report.changed && util::read_only_file(target))
    return fail(fmt::format("{}: the file is read-only (nothing written; make it writable to {})",
                            target.string(), action));
  if (e.dry_run) {
    out << util::dump_json(doc->is_null() ? ojson::object() : *doc, 2) << '\n';
    return {};
  }
  if (e.unregister && manifest.value("created_file", false) && file_existed && doc->is_object() &&
      doc->empty()) {
    return remove_made_file(target, report.lines, e.manifest, taken, out);
  }
  if (report.changed)
    CTXKIT_TRY(replace_with_backup(link, target,
                                   util::dump_json(*doc, 2) + (final_newline ? "\n" : ""),
                                   kMaxConfigBytes, out));
  for (const auto& line : report.lines) out << line << '\n';
  if (!e.manifest.empty()) {
    if (!e.unregister) {
      manifest["config"] = link.string();
      manifest["bin_dir"] = program_dir(e.command);
      if (!manifest.contains("created_file")) manifest["created_file"] = !file_existed;
      if (!manifest.value("created_container", false))
        manifest["created_container"] = report.created_container;
      if (!report.replaced_original.is_null()) manifest["replaced"] = report.replaced_original;
      taken = others_for(report.replaced_command);
      take_over_all(manifest, taken);
      fs::create_directories(e.manifest.parent_path(), ec);
      if (auto r = util::write_file_atomic(e.manifest, util::dump_json(manifest, 2) + "\n", 0644);
          !r)
        return fail(fmt::format("writing the manifest: {}", r.error().message));
    } else {
      fs::remove(e.manifest, ec);
    }
  }
  remove_records(taken);
  return {};
}

}  // namespace ctxkit::install
