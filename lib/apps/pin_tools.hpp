#pragma once

#include <memory>
#include <string>

#include "core/config.hpp"
#include "core/locations.hpp"
#include "mcp/tool_registry.hpp"

namespace ctxkit::apps {

// What the pin tools of an MCP server act on: ctxkit's configuration and folders, the session the
// server was started for (CLAUDE_CODE_SESSION_ID at its start) and its project's folder
// (CLAUDE_PROJECT_DIR).
struct PinToolContext {
  core::Config config;
  core::Locations locations;
  std::string session_id;
  std::string project_dir;
};

// Adds pin_fact (text, project), list_pins and unpin (id) to `tools`: the same as ctx-pin add,
// list and rm, answered as JSON text; a bad argument or a store that cannot be opened is a tool
// error of one line. Each call opens the state database and closes it.
void add_pin_tools(mcp::ToolRegistry& tools, std::shared_ptr<const PinToolContext> context);

}  // namespace ctxkit::apps
