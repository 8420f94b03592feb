#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/locations.hpp"
#include "util/env.hpp"
#include "util/error.hpp"

namespace ctxkit::core {

// What a context percentage is a percentage of.
enum class Basis {
  Usable,  // the part of the window before the client's auto-compaction
  Window,  // the whole window
};

// The [context] section of .work.toml.
struct ContextConfig {
  int warn_threshold = 60;
  int recommend_threshold = 75;
  int urgent_threshold = 85;
  int check_interval_seconds = 60;
  int trim_threshold_chars = 500;
  std::vector<std::string> trim_target_tools{"Read", "Bash", "Grep", "Glob"};
  int64_t window_tokens = 0;  // 0: decide from the model and the readings
  // 0: usable ends where the client compacts (its settings decide, context/compaction_point.hpp);
  // N: an explicit override, usable = window - N.
  int64_t reserved_tokens = 0;
  Basis basis = Basis::Usable;
  int transcript_wait_ms = 500;  // how long to wait for a lagging transcript
  bool system_message = false;   // also show reminders to the human
};

// The [state] section: where and how state is kept.
struct StateConfig {
  std::string dir;  // empty: ${XDG_STATE_HOME:-~/.local/state}/ctxkit (see Locations)
  int busy_timeout_ms = 1000;
};

// The [archive] section: what the searchable archive keeps out.
struct ArchiveConfig {
  // Projects not indexed nor answered from: the client's folder name (-home-me-app), the
  // project's path (/home/me/app) or its plain folder name (app: every project whose path ends
  // in /app; see excludes).
  std::vector<std::string> exclude_projects;
  std::string exclude_marker = "ctxkit:no-index";  // a session containing this text is not indexed
  bool episodic_memory_sync = false;               // also run `episodic-memory sync` when present

  // Whether exclude_projects names the project whose folder under the client's projects folder
  // (and the archive) is `project_folder`. An entry with a '/' is a path, one starting with '-' a
  // folder name; any other is a plain folder name and matches every project folder ending in
  // "-<name>" (the client writes /home/me/secretproj as -home-me-secretproj; a path cannot be
  // recovered from the folder name, so /srv/other-secretproj matches too: --show-config lists
  // what matched).
  bool excludes(const std::string& project_folder) const;
};

// The [rollover] section: how a fresh session is started.
struct RolloverConfig {
  std::string claude_bin = "claude";
  std::vector<std::string> claude_args;  // extra arguments before the prompt
  bool print = false;                    // headless: claude -p
  int grace_seconds = 5;                 // supervisor: SIGTERM, then SIGKILL after this
};

// The [runner] section: how `ctx-run` drives `claude -p` over a list of tasks.
struct RunnerConfig {
  std::string mode =
      "continuous";  // continuous | fresh-per-task | fresh-per-iteration | hybrid | auto | auto
  int max_iterations = 50;                // calls of the whole run
  int max_task_iterations = 3;            // calls of one task before on_fail
  std::string on_fail = "abort";          // retry | skip | abort
  std::vector<std::string> anchor_files;  // empty: PROMPT.md and AGENT.md
  std::string progress_file = "progress.txt";
  int progress_lines = 20;
  int summary_max_lines = 50;
  int anchor_max_tokens = 4000;
  int exit_grace_seconds =
      30;  // after its result line, the client's time to exit and close its output
  int call_timeout_seconds = 0;   // one client call at most this long (0: no limit)
  int64_t max_tokens = 0;         // the run's budget of tokens, all four kinds (0: none)
  double max_cost_usd = 0;        // the run's budget of cost in USD (0: none)
  int fresh_at = 50;              // auto: a new task starts a fresh session from this percent
  int compact_at = 75;            // auto: a task's session is compacted from this percent
  std::string on_limit = "wait";  // wait | stop: after a call that ended on a rate or usage limit
  int limit_backoff_seconds =
      60;  // the first wait when the client named no reset (doubled in a row)
  int limit_max_wait_seconds = 21600;    // the ceiling of one wait for a limit
  std::vector<std::string> claude_args;  // user's file only: they decide what the client may do
};

// The [status] section: what ctx-status shows and which status line of the user's it wraps.
struct StatusConfig {
  // The user's own status-line command, run with the same input, its output shown beside ours.
  // Empty: none. Only from the user's file and the environment (it decides what runs).
  std::string command;
  int timeout_ms = 1000;  // the wrapped command is killed (its process group) after this
  // Our segment with fields (core/status_format.hpp); empty: the built-in line. A format with an
  // unknown field is a warning and leaves the built-in line.
  std::string format;
};

// The [cap] section: ctx-cap, which keeps a large tool output out of the context (a preview
// instead, the whole output archived). Only from the user's file and the environment: capping
// decides what is written to the archive.
struct CapConfig {
  bool enabled = true;
  int64_t threshold_chars = 10000;  // an output longer than this (in characters) is capped
  int64_t bash_chars = 0;           // Bash's own threshold (0: threshold_chars)
  int64_t mcp_chars = 0;            // MCP tools' own threshold (0: threshold_chars)
  // Tools never capped: a name, or a prefix ending in '*' (mcp__github__*).
  std::vector<std::string> skip_tools;
  int64_t head_chars = 1000;  // the preview's start (whole lines within it)
  int64_t tail_chars = 2000;  // the preview's end: where a log's error is

  // The threshold of `tool`, or nullopt when it is never capped (capping off, or skip_tools).
  std::optional<int64_t> threshold_for(std::string_view tool) const;
};

// The effective configuration of one run, with where each value came from.
// [compact]: a compaction started by ctxkit (user file only). `at`: the percent (as the reminders
// count it, of where the client compacts) above which the turn that ends is followed by
// `/compact` with the pins as its focus under the supervisor, and the reminder names the command
// without one; 0: off. `action`: "compact", or "rollover" (a fresh session instead).
struct CompactConfig {
  int at = 0;
  std::string action = "compact";
};

struct Config {
  ContextConfig context;
  StateConfig state;
  ArchiveConfig archive;
  RolloverConfig rollover;
  RunnerConfig runner;
  StatusConfig status;
  CapConfig cap;
  CompactConfig compact;
  // "section.key" -> origin (a file path or an environment variable name) of the keys a file or
  // the environment set; origin() answers "default" for the others.
  std::map<std::string, std::string> origins;
  std::string origin(const std::string& key) const;
  // Problems that did not stop loading: unknown keys, wrong types (the key keeps its previous
  // value), files that do not parse (the file is skipped). One line each.
  std::vector<std::string> warnings;
  std::vector<std::string> errors;
  // The keys ("section.key") a file or a variable gave a value that did not take, each with its
  // error line (the first one); and the error lines of the files skipped whole (unreadable, or not
  // TOML), whose keys are not known. Both are in `errors` too. A program whose limits must hold
  // (ctx-run's budgets) refuses to start on either.
  std::map<std::string, std::string> refused;
  std::vector<std::string> unread_files;
  // The files that were read, in order.
  std::vector<std::filesystem::path> files;
  // The project's .work.toml, when one was found (the origin of the keys it set).
  std::filesystem::path project_file;

  // Whether `key` ("section.key") was set by the user: their config.toml or the environment,
  // not the default and not the project's file.
  bool set_by_user(const std::string& key) const;

  // ctxkit's folders for this configuration: Locations::resolve with `state.dir`.
  Locations locations(const util::Env& env) const;
};

// Where to look for configuration.
struct ConfigSources {
  // The directory from which .work.toml is searched upward; nullopt: no project file.
  std::optional<std::filesystem::path> project_start;
};

// Picks the directory to search for .work.toml: $CLAUDE_PROJECT_DIR, else `cwd` (the payload's),
// else the process's working directory.
std::filesystem::path project_start_dir(const util::Env& env, const std::string& cwd);

// Loads built-in defaults < ${XDG_CONFIG_HOME:-~/.config}/ctxkit/config.toml < the nearest
// .work.toml at or above `sources.project_start` (without the user-only keys, see ConfigLayer)
// < CTXKIT_<SECTION>_<KEY> environment variables.
// Never fails: problems are collected in `warnings` and `errors` and the affected values keep
// their lower-layer value.
Config load_config(const util::Env& env, const ConfigSources& sources);

// Which file a layer comes from. A project's .work.toml is part of a repository someone else may
// have written: keys that choose where private data goes or what program runs (`state.dir`,
// `rollover.claude_bin`) are taken only from the user's file and the environment; in a project
// file they are a warning and ignored. Keys that name a file of the project
// (`runner.anchor_files`, `runner.progress_file`) take from a project file only relative paths
// that stay inside the project; any other is a warning and ignored.
enum class ConfigLayer { User, Project };

// Parses one TOML document into `config` (as a layer named `origin`), for tests and tools.
void apply_toml_text(Config& config, std::string_view text, const std::string& origin,
                     ConfigLayer layer = ConfigLayer::User);

// Parses `text` as a TOML document (refusing, as load_config does, a non-ASCII byte outside
// strings and comments) and returns the value of `table`.`key` when it is a string; nullopt when
// it is missing or not a string. For tools that edit a TOML file and check the result (the one
// place toml++ is included is config.cpp). Errors (kind Invalid): "line L, column C: what".
[[nodiscard]] Result<std::optional<std::string>> toml_string_value(std::string_view text,
                                                                   std::string_view table,
                                                                   std::string_view key);

// Renders every known key with its effective value and origin, one "section.key = value  # origin"
// line each, followed by warnings and errors.
// With `env`, the project folders [archive] exclude_projects matches (in the client's projects
// folder and the archive) follow on one line.
std::string show_config(const Config& config, const util::Env* env = nullptr);

}  // namespace ctxkit::core
