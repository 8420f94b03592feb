#pragma once

#include <filesystem>
#include <functional>
#include <ostream>

#include "core/config.hpp"
#include "util/env.hpp"
#include "util/error.hpp"
#include "workflow/workflow_service.hpp"

namespace ctxkit::apps {

// Whether this process runs under a ctxkit supervisor (ctx-rollover --supervise).
bool under_supervisor(const util::Env& env);

// Hands a workflow context action that was just handed out to the supervisor of this client:
// the re-anchor for the worktree's current step is written as the prompt the next session (or
// the compacted one) starts with, and a pending action is recorded for the supervisor, which
// carries it out when the turn ends (see run_supervisor).
Result<void> request_supervised_action(const core::Config& cfg, const util::Env& env,
                                       const std::filesystem::path& worktree,
                                       const workflow::WorkflowEvent& event);

// The on_event of every program that hands out workflow actions (the MCP server, ctx-workflow,
// ctx-gate): records the event in the state database and, under a supervisor, hands a handed-out
// action to it. Failures are one note on `err`.
std::function<void(const workflow::WorkflowEvent&)> workflow_event_sink(
    const core::Config& cfg, const util::Env& env, const std::filesystem::path& worktree,
    std::ostream& err, const char* tool);

}  // namespace ctxkit::apps
