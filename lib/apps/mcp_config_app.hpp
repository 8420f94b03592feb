#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// `ctx-workflow-mcp register|unregister`: adds ctxkit's workflow MCP server to (or removes it
// from) the "mcpServers" of a Claude Code MCP configuration, as `claude mcp add --scope user`
// (~/.claude.json) or `--scope project` (<project>/.mcp.json) would. Writes atomically through a
// symlink, keeps the file's mode, key order and every other key, saves a backup
// "<file>.ctxkit-backup-<stamp>" before changing an existing file, and records in `--manifest`
// whether it created the file or its "mcpServers" so that unregister removes exactly that.
// `args` starts with the action. Exit 0 on success, 1 with one stderr line (nothing written).
int run_mcp_config(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
