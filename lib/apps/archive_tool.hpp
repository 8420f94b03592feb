#pragma once

#include <string>

#include "claude/install_check.hpp"
#include "util/env.hpp"

namespace ctxkit::apps {

// The archive's search tool as the model sees it when ctx-archive-mcp is registered under its
// name (ctxkit-archive) in the user's or the project's MCP configuration; through the plugin the
// client names it mcp__plugin_ctxkit_ctxkit-archive__archive_search.
inline constexpr const char* kArchiveServer = claude::kArchiveServerName;

// The name of the search tool the session in `cwd` has, or "" when ctx-archive-mcp is not
// registered for it: the plugin that runs this hook ships it ($CLAUDE_PLUGIN_ROOT/.mcp.json), or
// the user's ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json) or the project's .mcp.json names the
// server. A substring test on each file (no parse): for the texts of hooks and prompts only.
std::string archive_search_tool(const util::Env& env, const std::string& cwd);

// One line for the model after a compaction: the conversation before it is searchable, and how
// (with the tool when there is one, else with ctx-search through Bash).
std::string searchable_after_compaction(const std::string& tool, const std::string& session_id);

// The same after /clear: the earlier sessions (the one before the /clear included) are searchable
// with `tool`.
std::string searchable_after_clear(const std::string& tool);

// The "Retrieving Details" paragraph of a rollover's continuation prompt when the session has the
// search tool `tool`; "" without one (the prompt then names the ctx-search command).
std::string continuation_retrieval(const std::string& tool, const std::string& parent_session_id);

}  // namespace ctxkit::apps
