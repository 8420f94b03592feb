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
  std::string bin_dir;         // where the programs are (default_plan); empty for the plugin's
  // A status line of the user's is wrapped (`<status_command> --wrap '<theirs>'`) instead of kept.
  bool wrap_status_line = false;
  // A status line of the user's is replaced by ours (and put back by the removal).
  bool replace_status_line = false;
  // Enabled ctxkit plugins are disabled ("enabledPlugins" set to false): this install takes their
  // place, as their hooks would run beside these.
  bool disable_plugins = false;
};

// A status line of the user's that an install wrapped or replaced: the command it set and their
// statusLine object as it was (what uninstall puts back).
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

// ctxkit's own entries are recognised by what they run, not by where the program is: the
// program's file name and its arguments, however the command is written (quoted, another folder,
// "$HOME/…", "~/…", "${CLAUDE_PLUGIN_ROOT}/bin/…").
// The registration a hook command of `event` is ("ctx-remind", "ctx-gate --hook"), or empty when
// it is not one of ctxkit's hooks for that event (a command of the user's).
std::string ctxkit_hook_key(const std::string& event, const std::string& command);
// Whether a status-line command runs ctxkit's ctx-status (wherever installed, wrapping or not).
bool runs_ctx_status(const std::string& command);
// The folder of the program `command` runs, with "$HOME", "${HOME}" and a leading "~" read as
// `home`; empty when it cannot be told (a program named without a folder, a command that needs
// a shell).
std::string command_program_dir(const std::string& command, const std::string& home);
// The hook commands of `settings` that are ctxkit's (ctxkit_hook_key), each once.
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
  // The user's status line this install wrapped or replaced (to be recorded for uninstall).
  std::optional<WrappedStatusLine> wrapped;
  // The commands of ctxkit's entries this merge or removal took out: registrations of another
  // install (another folder) replaced, second registrations dropped, or removed ones.
  std::vector<std::string> replaced_commands;
  // The ctxkit plugins this merge disabled (plan.disable_plugins).
  std::vector<std::string> disabled_plugins;
};

// Adds the plan's entries to `settings`, one ctxkit registration per hook event: an entry of
// ctxkit's for the same event (ctxkit_hook_key) that runs the same command with the same matcher
// is kept (so running it twice adds each once); one that runs the program from another folder, or
// with another matcher, is replaced by the plan's (in place when it is alone in its group), and
// any further one is removed, one report line each. The user's own hooks and every other key stay
// as they are. A status line that runs ctxkit's ctx-status from another folder is pointed at the
// plan's, with its arguments (a wrapped one stays wrapped, and `report.wrapped` records the
// user's command for uninstall). A status line of the user's is kept (its command in
// `report.kept_status_command`), or with `plan.wrap_status_line` wrapped, or with
// `plan.replace_status_line` replaced (`report.wrapped` in both cases). With
// `plan.disable_plugins`, enabled ctxkit plugins are disabled. Returns an error text, with nothing
// changed, if `settings` has an unexpected shape.
std::string merge_settings(nlohmann::ordered_json& settings, const SettingsPlan& plan,
                           SettingsReport& report);

// Which of ctxkit's entries a removal takes out: those of the plan's folder (`plan.bin_dir`, with
// "$HOME" read as `home`) or of the plan's commands, or with `all` those of every folder. The
// user's own entries are never taken out.
struct RemoveScope {
  bool all = false;
  std::string home;
};

// Removes ctxkit's hooks and status line within `scope` (hooks only when the plan has hooks, the
// status line only when it has one) and, of the containers left empty, only those listed in
// `created` (what the installs created). A status line the install wrapped or replaced
// (`wrapped`) is put back as it was, unless its command has changed since; one of ctxkit's that
// wraps the user's command is given that command back.
std::string remove_settings(nlohmann::ordered_json& settings, const SettingsPlan& plan,
                            const std::vector<std::string>& created, SettingsReport& report,
                            const std::optional<WrappedStatusLine>& wrapped = std::nullopt,
                            const RemoveScope& scope = {});

// Removes the containers of `created` ("hooks", "hooks.<event>": what installs created) that are
// empty now.
void drop_created_containers(nlohmann::ordered_json& settings,
                             const std::vector<std::string>& created, SettingsReport& report);

}  // namespace ctxkit::claude
