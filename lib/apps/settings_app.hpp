#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// ctx-settings: registers (install) or removes (uninstall) ctxkit's hooks and status line in a
// Claude Code settings.json, in place of jq or python. Writes atomically through a symlink,
// keeps the file's mode and key order, saves a backup "settings.json.ctxkit-backup-<stamp>"
// beside it before any change, and records what it created in a manifest so that uninstall
// removes exactly that. Exit 0 on success, 1 with one stderr line on failure (nothing written).
int run_settings(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
