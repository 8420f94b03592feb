#pragma once

#include <filesystem>
#include <functional>
#include <ostream>

#include "core/config.hpp"
#include "util/env.hpp"
#include "util/error.hpp"
#include "workflow/workflow_service.hpp"

namespace ctxkit::apps {

// The on_event of every program that hands out workflow actions (the MCP server, ctx-workflow,
// ctx-gate): records the event in the state database and, under a supervisor, hands a handed-out
// action to it (workflow::request_supervised_action). Failures are one note on `err`.
std::function<void(const workflow::WorkflowEvent&)> workflow_event_sink(
    const core::Config& cfg, const util::Env& env, const std::filesystem::path& worktree,
    std::ostream& err, const char* tool);

}  // namespace ctxkit::apps
