#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit {

// Parses `args` with a CLI11 app. Returns an exit code when the run should stop here (help
// printed: 0; a usage error printed as one line "<tool>: error: …": 1), else nullopt.
std::optional<int> parse_cli(CLI::App& app, const std::vector<std::string>& args, AppContext& ctx,
                             const char* tool);

}  // namespace ctxkit
