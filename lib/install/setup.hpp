#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>

#include "claude/settings_merge.hpp"
#include "install/targets.hpp"
#include "util/env.hpp"
#include "util/error.hpp"

namespace ctxkit::install {

// What a set-up was asked to do beyond its action.
struct SetupOptions {
  bool status_line_only = false;  // the plugin's part: only the status line
  bool wrap_status_line = false;  // keep a status line of the user's, ctxkit's beside it
  bool replace = false;           // take over a status line and MCP server names of the user's
  bool all = false;               // uninstall: ctxkit's entries of every install
  bool dry_run = false;
};

// ctxkit's hooks and status line for the programs in `bin_dir`, as the options ask for them (the
// status line alone, kept beside the user's, or in place of it).
claude::SettingsPlan settings_plan(const std::string& bin_dir, const SetupOptions& o);

// The per-user (or per-project) set-up: the hooks and status line in the settings, the two MCP
// servers in the MCP configuration, the skills; each with a record of its own in the targets'
// record folder, so that each is removed on its own.
struct SetupPlan {
  Targets targets;
  std::string bin_dir;             // where the programs are
  std::filesystem::path data_dir;  // the skills (<data_dir>/skills)
  std::string project;             // empty: the user's own set-up
  std::string wrap_hint;           // the command that installs again with --wrap-status-line
  SetupOptions options;
};

// Installs the set-up, or (status_line_only) the status line alone, and when a plugin of ctxkit's
// is in use removes what a settings install added (the plugin brings it). Nothing is written when
// the MCP configuration cannot be merged. What it did goes to `out`, a line each; notes (a server
// left out, no skills found) to `notes` as ctx-settings' notes; an error says what and where.
[[nodiscard]] Result<void> install_set_up(const SetupPlan& s, const util::Env& env,
                                          std::ostream& out, std::ostream& notes);

// Removes what the records and the skills list name (with `all`, ctxkit's entries of every
// install, never the user's own); says so when nothing was recorded.
[[nodiscard]] Result<void> remove_set_up(const SetupPlan& s, const util::Env& env,
                                         std::ostream& out);

// For a project set-up: why it cannot be made (nothing written), or empty. ctxkit registered for
// every project (hooks in the user's settings, or an enabled plugin there), or a plugin enabled in
// the project's local settings, would run each hook twice in the project.
std::string project_conflict(const util::Env& env, const Targets& t);

// Whether `bin_dir` is the bin/ of a ctxkit plugin (written by write_plugin).
bool is_plugin_bin(const std::string& bin_dir);

// Writes the plugin's files into `out_dir` (whose bin/ already holds the programs) and a local
// marketplace at the same root: the manifest, the hooks, the MCP servers, the skills of
// `skills_dir` and the data of `data_dir` the programs find beside themselves.
[[nodiscard]] Result<void> write_plugin(const std::filesystem::path& out_dir,
                                        const std::filesystem::path& data_dir,
                                        const std::filesystem::path& skills_dir,
                                        std::string_view version, std::ostream& out);

}  // namespace ctxkit::install
