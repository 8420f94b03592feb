#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "claude/install_check.hpp"
#include "util/env.hpp"
#include "util/error.hpp"

namespace ctxkit::install {

// One edit of a Claude Code MCP configuration (~/.claude.json, or a project's .mcp.json): a
// server of ctxkit's added to its "mcpServers" or removed, as `claude mcp add|remove --scope user`
// (or `--scope project`) would.
struct McpEdit {
  bool unregister = false;
  std::filesystem::path config;
  // Where the edit's record is kept (register) or read (unregister); empty: none.
  std::filesystem::path manifest;
  std::string name = claude::kWorkflowServerName;  // the tools are mcp__<name>__<tool>
  std::string command;                             // the program the server runs
  std::vector<std::string> args;
  bool replace = false;  // register: take the name over from a server of the user's
  bool all = false;      // unregister: also when it runs the program from another folder
  bool dry_run = false;  // print the file it would write instead
};

// Makes the edit: the file (through a link, its target) read, the server merged or removed
// (claude/mcp_config), the records of another install whose server this one takes over (or
// removes) taken over, a backup "<file>.ctxkit-backup-<stamp>" written beside a file it changes,
// the file replaced atomically with its mode, key order and ending kept, the record written or
// removed; a file that holds nothing else once the server goes, created by the install, is
// removed. What it did goes to `out`, a line each (with dry_run, the whole file); an error says
// what and where, and nothing is written.
[[nodiscard]] Result<void> edit_mcp_config(const McpEdit& e, const util::Env& env,
                                           std::ostream& out);

}  // namespace ctxkit::install
