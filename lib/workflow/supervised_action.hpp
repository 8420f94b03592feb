#pragma once

#include <filesystem>

#include "core/config.hpp"
#include "util/env.hpp"
#include "util/error.hpp"
#include "workflow/workflow_service.hpp"

namespace ctxkit::workflow {

// Whether this process runs under a ctxkit supervisor (ctx-rollover --supervise).
bool under_supervisor(const util::Env& env);

// Hands a workflow context action that was just handed out to the supervisor of this client:
// the re-anchor for the worktree's current step is written as the prompt the next session (or
// the compacted one) starts with, and a pending action is recorded for the supervisor, which
// carries it out when the turn ends (see run_supervisor).
[[nodiscard]] Result<void> request_supervised_action(const core::Config& cfg, const util::Env& env,
                                                     const std::filesystem::path& worktree,
                                                     const WorkflowEvent& event);

}  // namespace ctxkit::workflow
