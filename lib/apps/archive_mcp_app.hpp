#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"
#include "apps/archive_tool.hpp"

namespace ctxkit::apps {

// ctx-archive-mcp (registered as kArchiveServer: the model sees mcp__ctxkit-archive__archive_search
// and mcp__ctxkit-archive__archive_show): the archive's search as an MCP server over stdio
// (newline-delimited JSON-RPC 2.0, as ctx-workflow-mcp), with two tools: archive_search (query,
// project, session, since, limit) and archive_show (session, line, before, after). Both answer JSON
// text: hits cited SESSION:LINE (SESSION/agent-<id>:LINE in a subagent's transcript) with time,
// kind, project, snippet and the command that resumes the session. The index stays open between
// calls, so a call costs a query. Runs until stdin ends, SIGINT or SIGTERM; exit 0 then, 1 with one
// stderr line on a bad flag. A signal that comes while a call is under way ends the process at
// once (killed by that signal).
int run_archive_mcp(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
