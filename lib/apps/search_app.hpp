#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// ctx-search QUERY [--project P] [--session S] [--since DATE] [--limit N] [--json]: ranked hits
// in the archive (all projects unless told otherwise) with full session id, time, line and a
// snippet. ctx-search --show SESSION:LINE prints that message in full from the archived copy.
// Exit 0 (also with no hits), 1 with one line for bad input.
int run_search(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
