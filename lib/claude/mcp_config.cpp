#include "claude/mcp_config.hpp"

#include <fmt/core.h>

#include <filesystem>

namespace ctxkit::claude {

using ojson = nlohmann::ordered_json;

namespace {
constexpr const char* kContainer = "mcpServers";

// The server's "command" when it is a string, else null. Read through a pointer, not an iterator:
// GCC 12 at -O3 takes an ordered_json iterator's dereference for a null one.
const std::string* command_ptr(const ojson& server) {
  if (!server.is_object() || !server.contains("command")) return nullptr;
  return server["command"].get_ptr<const std::string*>();
}

bool runs_command(const ojson& server, const std::string& command) {
  const std::string* c = command_ptr(server);
  return c && *c == command;
}

std::string command_of(const ojson& server) {
  const std::string* c = command_ptr(server);
  return c ? *c : "(no command)";
}
}  // namespace

bool runs_program(const ojson& server, const std::string& program) {
  const std::string* c = command_ptr(server);
  namespace fs = std::filesystem;
  return c && fs::path(*c).filename() == fs::path(program).filename();
}

ojson mcp_server_json(const McpServerEntry& entry) {
  ojson server = ojson::object();
  server["type"] = "stdio";
  server["command"] = entry.command;
  server["args"] = entry.args;
  ojson env = ojson::object();
  for (const auto& [k, v] : entry.env) env[k] = v;
  server["env"] = std::move(env);
  return server;
}

std::string merge_mcp_server(ojson& doc, const McpServerEntry& entry, bool replace,
                             McpConfigReport& report) {
  if (doc.is_null()) doc = ojson::object();
  if (!doc.is_object()) return "the file is not a JSON object";
  auto it = doc.find(kContainer);
  if (it != doc.end() && !it->is_object())
    return fmt::format("\"{}\" is not an object", kContainer);
  const ojson wanted = mcp_server_json(entry);
  if (it == doc.end()) {
    doc[kContainer] = ojson::object();
    report.created_container = true;
    it = doc.find(kContainer);
  }
  ojson& servers = *it;
  auto existing = servers.find(entry.name);
  if (existing == servers.end()) {
    servers[entry.name] = wanted;
    report.lines.push_back(
        fmt::format("registered: MCP server {} ({})", entry.name, entry.command));
    report.changed = true;
    return {};
  }
  if (*existing == wanted) {
    report.lines.push_back(fmt::format("already registered: MCP server {}", entry.name));
    return {};
  }
  if (runs_command(*existing, entry.command)) {
    report.lines.push_back(fmt::format("kept your MCP server {}: it runs {} with your arguments",
                                       entry.name, entry.command));
    return {};
  }
  if (runs_program(*existing, entry.command)) {
    // ctxkit's, installed in another folder: this install takes it over.
    const std::string old = command_of(*existing);
    (*existing)["command"] = entry.command;
    report.lines.push_back(
        fmt::format("replaced: MCP server {} {} (now {})", entry.name, old, entry.command));
    report.replaced_command = old;
    report.changed = true;
    return {};
  }
  if (!replace) {
    report.lines.push_back(
        fmt::format("kept your MCP server {}: it runs {}, not {} (run again with --replace to take "
                    "the name over)",
                    entry.name, command_of(*existing), entry.command));
    return {};
  }
  report.lines.push_back(
      fmt::format("replaced: MCP server {} (was {})", entry.name, command_of(*existing)));
  report.replaced_original = *existing;
  *existing = wanted;
  report.changed = true;
  return {};
}

std::string remove_mcp_server(ojson& doc, const McpServerEntry& entry, bool remove_empty_container,
                              McpConfigReport& report, bool any_folder, const ojson& restore) {
  if (doc.is_null()) return {};
  if (!doc.is_object()) return "the file is not a JSON object";
  auto it = doc.find(kContainer);
  if (it == doc.end() || !it->is_object()) return {};
  ojson& servers = *it;
  auto existing = servers.find(entry.name);
  if (existing != servers.end()) {
    if (runs_command(*existing, entry.command) ||
        (any_folder && runs_program(*existing, entry.command))) {
      report.replaced_command = command_of(*existing);
      if (restore.is_object()) {
        *existing = restore;
        report.lines.push_back(
            fmt::format("restored: your MCP server {} ({})", entry.name, command_of(restore)));
      } else {
        servers.erase(existing);
        report.lines.push_back(fmt::format("removed: MCP server {}", entry.name));
      }
      report.changed = true;
    } else {
      report.lines.push_back(fmt::format("kept MCP server {}: it runs {}, not {}", entry.name,
                                         command_of(*existing), entry.command));
    }
  }
  if (servers.empty() && remove_empty_container) {
    doc.erase(it);
    report.changed = true;
  }
  return {};
}

}  // namespace ctxkit::claude
