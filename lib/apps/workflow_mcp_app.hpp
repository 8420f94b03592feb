#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// ctx-workflow-mcp: the workflow MCP server over stdio (newline-delimited JSON-RPC 2.0 on
// stdin/stdout, nothing else on stdout; a log on stderr only with --verbose). Tools and shapes
// are the reference `lanes-workflow` server's (workflow_start, workflow_set_tasks,
// workflow_status, workflow_advance, workflow_context) plus workflow_list. Flags: Lanes's
// `--worktree --workflow-path --repo-root` (relative paths accepted), `--workflow NAME`; the
// worktree defaults to $CLAUDE_PROJECT_DIR, else the current directory. Runs until stdin ends,
// SIGINT or SIGTERM, each finishing the message in hand first; exit 0 then. Exit 1 with one
// stderr line on a bad flag or a failing read of stdin. `register` / `unregister` as the first
// argument edit an MCP configuration instead (see run_mcp_config).
int run_workflow_mcp(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
