#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// ctx-lineage [SESSION] [--json]: the chain of sessions from the first ancestor to the newest
// descendant, with full ids, end reasons and dates. Exit 1 with one line for an unknown session.
int run_lineage(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
