#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ctxkit::claude {

// One hook ctxkit registers in Claude Code's settings.
struct HookRegistration {
  std::string event;    // e.g. "PostToolUse"
  std::string matcher;  // "" for events without a matcher
  std::string command;
  int timeout = 10;
};

// Everything ctxkit registers.
struct SettingsPlan {
  std::vector<HookRegistration> hooks;
  std::string status_command;  // empty: no status line
  // A status line of the user's is wrapped (`<status_command> --wrap '<theirs>'`) instead of kept.
  bool wrap_status_line = false;
};

// A status line of the user's that an install wrapped: the command it set and their statusLine
// object as it was (what uninstall puts back).
struct WrappedStatusLine {
  std::string command;
  nlohmann::ordered_json original;
};

// The status-line command that runs `status_command` with the user's `theirs` beside it.
std::string wrap_status_command(const std::string& status_command, const std::string& theirs);

// The registrations for binaries installed in `bin_dir` (commands are shell-quoted if needed).
SettingsPlan default_plan(const std::string& bin_dir);
// The same hooks as a plugin's hooks/hooks.json registers them:
// "${CLAUDE_PLUGIN_ROOT}/bin/<program>" (double-quoted), and no status line (a plugin cannot set
// one).
SettingsPlan plugin_plan();
// The programs the hooks run, each once, in registration order.
std::vector<std::string> hook_programs();

// The name of ctxkit's Claude Code plugin (and of its local marketplace).
inline constexpr const char* kPluginName = "ctxkit";
// The hook commands of `settings` that run one of ctxkit's hook programs (wherever installed).
std::vector<std::string> ctxkit_hook_commands(const nlohmann::ordered_json& settings);
// The ids ("ctxkit@<marketplace>") of ctxkit plugins that `settings` enables ("enabledPlugins"
// set to true), as the settings file is read for editing or for checking.
std::vector<std::string> enabled_ctxkit_plugins(const nlohmann::ordered_json& settings);
std::vector<std::string> enabled_ctxkit_plugins(const nlohmann::json& settings);

// What a merge or removal did, one line per entry, and the containers ("hooks",
// "hooks.PostToolUse") it created or removed.
struct SettingsReport {
  std::vector<std::string> lines;
  std::vector<std::string> created;
  bool changed = false;
  // The user's status-line command, kept as it is (an install may offer to wrap it).
  std::string kept_status_command;
  // The user's status line this install wrapped (to be recorded for uninstall).
  std::optional<WrappedStatusLine> wrapped;
};

// Adds the plan's entries to `settings` unless an entry with the same command is already there
// (so running it twice adds each once). Leaves every other key and hook as it is. A status line
// of the user's is kept (its command in `report.kept_status_command`), or with
// `plan.wrap_status_line` its command is replaced by one that wraps it (`report.wrapped`); a
// status line that already wraps through ours is left as it is. Returns an error text if `settings`
// has an unexpected shape.
std::string merge_settings(nlohmann::ordered_json& settings, const SettingsPlan& plan,
                           SettingsReport& report);

// Removes exactly the plan's entries (matched by command) and, of the containers left empty,
// only those listed in `created` (what the install created). A status line the install wrapped
// (`wrapped`) is put back as it was, unless its command has changed since.
std::string remove_settings(nlohmann::ordered_json& settings, const SettingsPlan& plan,
                            const std::vector<std::string>& created, SettingsReport& report,
                            const std::optional<WrappedStatusLine>& wrapped = std::nullopt);

}  // namespace ctxkit::claude
