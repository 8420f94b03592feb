#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// ctx-gate, the pre-step context gate.
// As a command (`ctx-gate [--worktree W] [--json]`): prints what must happen before the step
// about to start — nothing, "/compact <focus>" or "/clear" — and records it as handed out, so
// any loop (a runner, a ralph script, CI) can ask it. A step's `context_min_percent` turns the
// action into a recorded skip when the session's context is below it.
// As a SessionStart hook (`ctx-gate --hook`, payload on stdin): for sources `clear` and
// `compact` only, confirms the action in the worktree's state and prints the re-anchor (the
// workflow, step, sub-step, task, iteration, the step's instructions, the summary and the
// latest handoff, bounded) as SessionStart additionalContext. Nothing for other sources.
// Hook mode fails open: exit 0 with at most one stderr note; never exit 2.
int run_gate(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
