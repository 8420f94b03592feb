#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "claude/client_state.hpp"
#include "util/env.hpp"

namespace ctxkit::context {

using claude::ServerHints;

// The client's settings that move or switch off its auto-compaction, as a hook sees them: its
// environment (which holds the `env` of its settings files too) and the `autoCompactWindow` of its
// settings files. Found by experiment with Claude Code 2.1.197 and 2.1.332 (docs/measuring.md,
// "Where the client compacts").
struct CompactionSettings {
  // CLAUDE_CODE_AUTO_COMPACT_WINDOW, else the settings files' autoCompactWindow: the window the
  // client measures its compaction threshold against. nullopt: none configured.
  std::optional<int64_t> auto_compact_window;
  std::string window_origin;        // the variable's name or the settings file it came from
  std::optional<int> pct_override;  // CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, 1..100
  bool disabled = false;            // DISABLE_AUTO_COMPACT or DISABLE_COMPACT
  std::string disabled_by;
  bool disable_1m = false;  // CLAUDE_CODE_DISABLE_1M_CONTEXT
  // Per-model windows of the settings files' `modelSettings` (what `/autocompact` writes; read by
  // clients that have it): model id -> a size, or 0 for "auto". Later files win.
  std::map<std::string, int64_t> model_windows;
  std::map<std::string, std::string> model_window_origins;
  // autoCompactEnabled of the settings files (the highest one that sets it); when none does, the
  // client reads it from ~/.claude.json (ServerHints::auto_compact_enabled).
  std::optional<bool> enabled_setting;
  std::string enabled_origin;
  // What the server told this user, as the client caches it (~/.claude.json; see ServerHints).
  ServerHints server;
  // The client's "tokens left" note after tool results (2.1.233 and later):
  // CLAUDE_CODE_TOTAL_TOKENS_REMINDER, else the settings files' totalTokensReminder (off,
  // infinite, fixed, countdown, padded-countdown); empty: not set (the client's default).
  // "countdown" counts down the live context window, so the model already sees how full it is.
  std::string tokens_reminder;
  bool window_countdown() const { return tokens_reminder == "countdown"; }
};

// What one settings file says of compaction: its top-level "autoCompactWindow",
// "autoCompactEnabled" and "totalTokensReminder", and the per-model "autoCompactWindow" of its
// "modelSettings". A file that is missing, unreadable, not JSON or nested too deep says nothing.
struct SettingsFileReading {
  std::string path;
  std::optional<int64_t> window;
  std::map<std::string, int64_t> models;  // 0: "auto"
  std::optional<bool> enabled;
  std::optional<std::string> tokens_reminder;
  bool operator==(const SettingsFileReading&) const = default;
};
SettingsFileReading read_settings_file(const std::filesystem::path& file);

// The settings of `env` over what the files say (user, project, local: later files win).
CompactionSettings combine_compaction_settings(const util::Env& env,
                                               const std::vector<SettingsFileReading>& files);

// Reads the variables of `env` and the top-level "autoCompactWindow" of each settings file, later
// files winning (pass them user, project, local); files that are missing, unreadable, not JSON
// or nested too deep are skipped.
CompactionSettings read_compaction_settings(
    const util::Env& env, const std::vector<std::filesystem::path>& settings_files);

// Everything a program off the hot path reads: the settings of `env` and the client's settings
// files for `project`, and the server's hints read straight from the client's state file
// (~/.claude.json, parsed each time: the hooks go through the meter's cache instead).
CompactionSettings client_compaction_settings(const util::Env& env,
                                              const std::filesystem::path& project);

// The settings files of the client for a project directory: ~/.claude/settings.json (or
// $CLAUDE_CONFIG_DIR/settings.json), <project>/.claude/settings.json and settings.local.json.
std::vector<std::filesystem::path> client_settings_files(const util::Env& env,
                                                         const std::filesystem::path& project);

// A size as the client reads CLAUDE_CODE_AUTO_COMPACT_WINDOW: "150000", "150k", "1m", "0.5M";
// nullopt when it is no positive size.
std::optional<int64_t> parse_window_size(std::string_view text);

// Where the client's auto-compact window came from, in the client's order of resolution.
enum class WindowSource {
  Environment,    // CLAUDE_CODE_AUTO_COMPACT_WINDOW
  Settings,       // a settings file's autoCompactWindow
  ModelSettings,  // a settings file's modelSettings.<model>.autoCompactWindow (/autocompact)
  Server,         // what the server sent (cached in ~/.claude.json)
  ModelDefault,   // the client's own table
  UnknownModel,   // a model the client does not know
  Auto,           // none: the client compacts when the API refuses the prompt
};

// "environment", "settings", "model settings", "server", "model default", "unknown model",
// "auto".
std::string_view source_name(WindowSource s);

// Where the client compacts, in tokens, for a session with `window`, and why.
struct CompactionPoint {
  bool automatic = true;   // false: auto-compaction is off
  bool threshold = false;  // the client compacts at a threshold below the window (else when the
                           // API refuses a prompt as too long, i.e. at the window)
  int64_t tokens = 0;      // where it compacts (the window when !threshold or !automatic)
  int64_t blocking = 0;    // auto-compaction off: where the client stops sending (else 0)
  int64_t auto_compact_window = 0;  // the resolved auto-compact window (0 for auto)
  WindowSource source = WindowSource::Auto;
  std::string origin;                // the variable, the file or the table entry it came from
  std::string rules_version;         // the recorded client release whose rules applied
  bool newer_than_recorded = false;  // the client is newer than any recorded (or unknown)
};

// The rules (read from the client's code, docs/measuring.md, "Where the client compacts"; the
// per-release figures in share/client-rules.json):
//   off        DISABLE_AUTO_COMPACT / DISABLE_COMPACT set, or autoCompactEnabled false: no
//              auto-compaction; the client refuses to send at E - 3,000;
//   threshold  an auto-compact window A from the environment, the settings, the model's
//              settings, the server or the model's default (the first found), or the window for
//              a model the client does not know: A below 100,000 counts as 100,000;
//              E = min(A, window) - min(max output, 20,000); the client compacts at E - 13,000,
//              or at floor(E * pct / 100) when CLAUDE_AUTOCOMPACT_PCT_OVERRIDE is set and lower;
//   reactive   the model's default is `auto`: when the API refuses the prompt, i.e. at the window.
// `model` and `client_version` pick the rules; empty ones get the newest recorded release's
// rules for a model it does not know.
CompactionPoint compaction_point(const CompactionSettings& settings, int64_t window,
                                 std::string_view model = {}, std::string_view client_version = {});

// The rule in /autocompact's words: "auto-compact window 200k (default for this model) · compacts
// at 167k (Claude Code 2.1.332's rules)", "auto: compacts only when the API refuses the prompt",
// "auto-compaction off (DISABLE_AUTO_COMPACT) · the client stops at 177k".
std::string describe_point(const CompactionPoint& p);

// The window this client gives `model` with these settings: 1,000,000 for a native-1M model or a
// "[1m]" id (unless CLAUDE_CODE_DISABLE_1M_CONTEXT), else the model's own; 0 when the model is
// unknown to the rules.
int64_t model_window(const CompactionSettings& settings, std::string_view model,
                     std::string_view client_version);

}  // namespace ctxkit::context
