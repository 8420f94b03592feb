#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ctxkit::claude {

// One stdio MCP server entry, as `claude mcp add --scope user|project` writes it:
// {"type":"stdio","command":…,"args":[…],"env":{…}} under the name, in the top-level
// "mcpServers" of ~/.claude.json (user scope) or of <project>/.mcp.json (project scope).
struct McpServerEntry {
  std::string name;
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
};

// The entry's JSON value (without its name).
nlohmann::ordered_json mcp_server_json(const McpServerEntry& entry);

// What a merge or removal did, one line per action.
struct McpConfigReport {
  std::vector<std::string> lines;
  bool changed = false;
  bool created_container = false;  // "mcpServers" did not exist and was added
  // The command of ctxkit's server this merge or removal took out (empty when none): another
  // install's (the same program in another folder) replaced, or the one removed.
  std::string replaced_command;
  // A server of the user's that `replace` took the name from, as it was (for the removal to put
  // back); null when none.
  nlohmann::ordered_json replaced_original;
};

// Whether `server` (an entry of "mcpServers") runs ctxkit's program `program` (a path; compared by
// file name), wherever it is installed.
bool runs_program(const nlohmann::ordered_json& server, const std::string& program);

// Adds `entry` to `doc["mcpServers"]`, keeping every other key and server in place and in
// order. An entry of the same name is left alone when it is already ours (same command: the
// user may have added arguments or environment); one that runs the same program from another
// folder (another install of ctxkit's) gets `entry.command`, its arguments and environment kept;
// one that runs another command is the user's and is kept unless `replace` (then a line says how to
// take the name over). Returns an error text, with nothing changed, when `doc` or its
// "mcpServers" has an unexpected shape.
std::string merge_mcp_server(nlohmann::ordered_json& doc, const McpServerEntry& entry, bool replace,
                             McpConfigReport& report);

// Removes the entry named `entry.name` when its command is `entry.command` (ours, whatever
// arguments it has now), or with `any_folder` when it runs the same program from any folder;
// nothing else. With `restore` (a server of the user's an install replaced) that server is put
// back instead. Then "mcpServers" itself goes if it is empty and `remove_empty_container`.
// Returns an error text when `doc` is not an object.
std::string remove_mcp_server(nlohmann::ordered_json& doc, const McpServerEntry& entry,
                              bool remove_empty_container, McpConfigReport& report,
                              bool any_folder = false,
                              const nlohmann::ordered_json& restore = nullptr);

}  // namespace ctxkit::claude
