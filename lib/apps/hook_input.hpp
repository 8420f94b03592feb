#pragma once

#include <optional>

#include "apps/app.hpp"
#include "claude/hook_payload.hpp"

namespace ctxkit::apps {

// Reads the hook payload from stdin (in chunks when the context can) and scans it. On failure
// prints the one stderr line
// "<tool>: error: <why>" and returns nullopt (the caller exits 1).
std::optional<claude::HookPayload> read_hook_payload(AppContext& ctx, const char* tool);

}  // namespace ctxkit::apps
