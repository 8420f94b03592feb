#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "util/env.hpp"

namespace ctxkit::claude {

// What the server told the client about auto-compaction, as the client caches it in its state
// file (~/.claude.json): per-model auto-compact windows (the client data's `rowan_thicket`, then
// `autoCompactWindowsCache`, the bootstrap's `auto_compact_windows`), and the older place of the
// `/config` toggle autoCompactEnabled. Key names and shapes: share/client-rules.json ("server").
struct ServerHints {
  std::map<std::string, int64_t> model_windows;
  std::optional<bool> auto_compact_enabled;
  bool operator==(const ServerHints&) const = default;
};

// The client's state file: $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json; empty when
// neither variable is set.
std::filesystem::path client_state_file(const util::Env& env);

// Reads the hints from the state file's text (several MB: only the few keys wanted are kept).
// Text that is not a JSON object gives no hints.
ServerHints parse_client_state(std::string_view text);

// The hints as a small JSON object and back, for the meter's cache.
std::string hints_to_json(const ServerHints& hints);
ServerHints hints_from_json(std::string_view text);

}  // namespace ctxkit::claude
