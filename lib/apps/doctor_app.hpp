#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// ctx-doctor: looks at a ctxkit install and says, one line per finding with what to do, why
// something does not work: the programs, which install is active (settings.json, plugin, both),
// every hook ctxkit registers, the status line, the workflow MCP server (registered and
// answering `initialize`), the `claude` program and its version, the state folder and databases
// (permissions, integrity, schema version; opened read-only, nothing created), the archive and
// its index, when each hook last ran, and the configuration's warnings. Text or `--json`.
// Exit 0 when nothing is at fault (warnings alone are healthy), 1 otherwise.
int run_doctor(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
