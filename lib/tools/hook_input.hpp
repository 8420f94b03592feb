#pragma once

#include <optional>

#include "hook_payload.hpp"
#include "tools/tool.hpp"

namespace ctxkit {

// Reads the hook payload from stdin and parses it. On failure prints the one stderr line
// "<tool>: error: <why>" and returns nullopt (the caller exits 1).
std::optional<HookPayload> read_hook_payload(ToolContext& ctx, const char* tool);

}  // namespace ctxkit
