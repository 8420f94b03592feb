#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace ctxkit::context {

// What one model is to one Claude Code release (share/client-rules.json, read from the client's
// code; docs/measuring.md, "Where the client compacts").
struct ModelRule {
  std::string id;               // "claude-sonnet-4-6": matches that id and its dated forms
  int64_t window = 200'000;     // the window without an opt-in
  bool native_1m = false;       // the window is 1,000,000 without "[1m]"
  bool can_1m = false;          // "[1m]" opts in to 1,000,000
  int64_t max_output = 32'000;  // the model's output limit (the reply reserve is at most 20,000)
  // The model's own auto-compact window: a size, or nullopt for `auto` (the client compacts only
  // when the API refuses the prompt). `default_1m` is the same for a session at 1,000,000 tokens.
  std::optional<int64_t> default_window;
  std::optional<int64_t> default_window_1m;
  bool default_is_auto = false;     // `auto` at its own window
  bool default_1m_is_auto = false;  // `auto` at 1,000,000
};

// The compaction rules of one client release.
struct ClientRules {
  std::string version;                 // "2.1.332"
  int64_t reply_reserve_cap = 20'000;  // the reply reserve: min(max_output, this)
  int64_t summary_buffer = 13'000;     // the threshold sits this far below E
  int64_t blocking_buffer = 3'000;     // auto-compaction off: the client refuses from E - this
  int64_t min_auto_compact_window = 100'000;  // a configured window below this counts as this
  int64_t max_auto_compact_window =
      0;                        // the environment's and server's window is held to this (0: none)
  bool model_settings = false;  // reads per-model modelSettings.autoCompactWindow
  bool server_windows = false;  // reads the server's per-model windows
  ModelRule unknown;            // a model the client does not know
  std::vector<ModelRule> models;
};

// Every recorded release, oldest first (share/client-rules.json, built into the programs).
const std::vector<ClientRules>& recorded_client_rules();

// Parses a rules document (the format of share/client-rules.json). An error names what is wrong.
[[nodiscard]] Result<std::vector<ClientRules>> parse_client_rules(std::string_view json_text);

// The rules for `client_version`: that release's when recorded; else the newest recorded release
// older than it; a release newer than the newest, or an unknown version, gets the newest
// (`newer_than_recorded` says so when the version is newer or unknown).
struct RulesChoice {
  const ClientRules* rules = nullptr;
  bool exact = false;  // this very release was recorded
  bool newer_than_recorded = false;
};
RulesChoice rules_for(std::string_view client_version);

// The model's rule for `model` (a "[1m]" suffix and a date suffix ignored; the longest id that
// the model id starts with wins, as the client matches its table), or nullptr when unknown.
const ModelRule* find_model(const ClientRules& rules, std::string_view model);

}  // namespace ctxkit::context
