#pragma once

#include <string>

#include "archive/recall.hpp"
#include "mcp/mcp_server.hpp"

namespace ctxkit::apps {

// The archive's MCP server (kArchiveServer) without I/O, its tools answering from `recall`, which
// must outlive it: archive_search (query, project, session, since, limit) and archive_show
// (session, line, before, after), their schemas, argument checks and JSON answers (a bad
// argument is a tool error, one line), and the instructions the server gives the model.
// `version` is the version the server reports.
mcp::McpServer archive_server(archive::ArchiveRecall& recall, const std::string& version);

}  // namespace ctxkit::apps
