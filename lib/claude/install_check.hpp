#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "claude/settings_merge.hpp"

namespace ctxkit::claude {

// The names ctxkit registers its MCP servers under in the client's configuration.
inline constexpr const char* kWorkflowServerName = "ctxkit-workflow";
inline constexpr const char* kArchiveServerName = "ctxkit-archive";

// Reading what Claude Code's files say about a ctxkit install (for ctx-doctor). Pure: parsed
// documents in, facts out; the caller looks at the files they name.

// One command hook of a settings document or of a plugin's hooks/hooks.json.
struct CommandHook {
  std::string event;
  std::string matcher;  // "" when the group has none
  std::string command;
};

// Every command hook under `doc["hooks"]`; entries of another shape are skipped.
std::vector<CommandHook> command_hooks(const nlohmann::json& doc);

// The words of a hook or status-line command as the client's shell would run it, after a
// leading "$HOME", "${HOME}" or "~" is replaced by `home` and "${CLAUDE_PLUGIN_ROOT}" by
// `plugin_root`; nullopt when it needs a shell beyond that (util::split_shell_words).
std::optional<std::vector<std::string>> command_words(const std::string& command,
                                                      const std::string& home,
                                                      const std::string& plugin_root = {});

// The hooks ctxkit registers (default_plan) and, for each, the words of the commands found that
// run it: same event and matcher, a program of the same file name with the same arguments.
struct HookCoverage {
  HookRegistration expected;
  std::string program;  // the expected program's file name, e.g. "ctx-remind"
  std::vector<std::vector<std::string>> found;  // words of each matching command
};
std::vector<HookCoverage> match_hooks(const std::vector<CommandHook>& found,
                                      const std::string& home, const std::string& plugin_root = {});

// Whether any of `hooks` runs one of ctxkit's programs (a file name starting with "ctx-").
bool runs_ctxkit(const std::vector<CommandHook>& hooks, const std::string& home,
                 const std::string& plugin_root = {});

// Where plugin `id` is installed, per ~/.claude/plugins/installed_plugins.json
// ({"plugins":{"<id>":[{"installPath":…},…]}}).
std::vector<std::string> plugin_install_paths(const nlohmann::json& installed,
                                              const std::string& id);

// The MCP servers of a document's top-level "mcpServers" whose command runs `program` (by file
// name): their names and the words of command + args.
struct McpServerFound {
  std::string name;
  std::vector<std::string> argv;
};
std::vector<McpServerFound> find_mcp_servers(const nlohmann::json& doc, std::string_view program,
                                             const std::string& home,
                                             const std::string& plugin_root = {});

// The version in `claude --version` output ("2.1.197 (Claude Code)" → "2.1.197"); empty if none.
std::string claude_version_of(std::string_view output);

// -1, 0 or 1 as dotted version `a` is older than, the same as or newer than `b` (numeric parts;
// a missing part counts as 0).
int compare_versions(std::string_view a, std::string_view b);

}  // namespace ctxkit::claude
