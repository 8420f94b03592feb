#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// ctx-workflow: the workflow tools on the command line (list, validate, start, status,
// set-tasks, advance, context), over the same state file as the MCP server. --json prints the
// tool's JSON answer. Exit 0 on success, 1 with one stderr line on bad input or a tool error.
int run_workflow(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
