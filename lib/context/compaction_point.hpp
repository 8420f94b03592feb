#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/env.hpp"

namespace ctxkit::context {

// The client's settings that move or switch off its auto-compaction, as a hook sees them: its
// environment (which holds the `env` of its settings files too) and the `autoCompactWindow` of its
// settings files. Found by experiment with Claude Code 2.1.197 and 2.1.332 (README, "Where the
// client compacts").
struct CompactionSettings {
  // CLAUDE_CODE_AUTO_COMPACT_WINDOW, else the settings files' autoCompactWindow: the window the
  // client measures its compaction threshold against. nullopt: none configured.
  std::optional<int64_t> auto_compact_window;
  std::string window_origin;        // the variable's name or the settings file it came from
  std::optional<int> pct_override;  // CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, 1..100
  bool disabled = false;            // DISABLE_AUTO_COMPACT or DISABLE_COMPACT
  std::string disabled_by;
  bool disable_1m = false;  // CLAUDE_CODE_DISABLE_1M_CONTEXT
};

// Reads the variables of `env` and the top-level "autoCompactWindow" of each settings file, later
// files winning (pass them user, project, local); files that are missing, unreadable, not JSON
// or nested too deep are skipped.
CompactionSettings read_compaction_settings(
    const util::Env& env, const std::vector<std::filesystem::path>& settings_files);

// The settings files of the client for a project directory: ~/.claude/settings.json (or
// $CLAUDE_CONFIG_DIR/settings.json), <project>/.claude/settings.json and settings.local.json.
std::vector<std::filesystem::path> client_settings_files(const util::Env& env,
                                                         const std::filesystem::path& project);

// A size as the client reads CLAUDE_CODE_AUTO_COMPACT_WINDOW: "150000", "150k", "1m", "0.5M";
// nullopt when it is no positive size.
std::optional<int64_t> parse_window_size(std::string_view text);

// Where the client compacts, in tokens, for a session with `window`.
struct CompactionPoint {
  bool automatic = true;   // false: auto-compaction is off
  bool threshold = false;  // the client compacts at a threshold below the window (else when the
                           // API refuses a prompt as too long, i.e. at the window)
  int64_t tokens = 0;      // where it compacts (the window when !threshold or !automatic)
};

// The rules (each from an experiment, README "Where the client compacts"):
//   off        DISABLE_AUTO_COMPACT / DISABLE_COMPACT set: no auto-compaction;
//   threshold  an auto-compact window A configured: A below 100,000 counts as 100,000;
//              E = min(A, window) - 20,000; the client compacts at E - 13,000, or at
//              floor(E * pct / 100) when CLAUDE_AUTOCOMPACT_PCT_OVERRIDE is set and lower;
//   reactive   otherwise: when the API refuses the prompt, i.e. at the window.
CompactionPoint compaction_point(const CompactionSettings& settings, int64_t window);

}  // namespace ctxkit::context
