#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// ctx-cap, the PostToolUse hook that keeps a large tool output out of the context: a Bash or MCP
// output longer than its threshold ([cap]) is archived whole (archive/output_archive) and the
// model gets a preview in the tool's own shape (its head and tail and one line naming the
// handle to fetch the rest with). Whatever fails (the payload, the archive, an excluded project)
// leaves the output as it was: nothing on stdout, one note on stderr, exit 0.
int run_cap(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
