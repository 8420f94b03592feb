#pragma once

#include <memory>
#include <string>

#include "apps/pin_tools.hpp"
#include "archive/recall.hpp"
#include "mcp/mcp_server.hpp"

namespace ctxkit::apps {

// The archive's MCP server (kArchiveServer) without I/O, its tools answering from `recall`, which
// must outlive it: archive_search (query, project, session, since, limit) and archive_show
// (session, line, before, after), their schemas, argument checks and JSON answers (a bad
// argument is a tool error, one line), and the instructions the server gives the model.
// `version` is the version the server reports. With `pins`, it also has the pin tools
// (pin_tools.hpp): what compaction must keep, beside what it removed.
mcp::McpServer archive_server(archive::ArchiveRecall& recall, const std::string& version,
                              std::shared_ptr<const PinToolContext> pins = nullptr);

}  // namespace ctxkit::apps
