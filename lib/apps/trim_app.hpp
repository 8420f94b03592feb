#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// ctx-trim [SESSION]: writes a trimmed copy of a session under a new id (large old tool outputs
// cut to their first characters plus a notice), archives the original, records parent -> child,
// and prints the savings and the command that resumes the copy. --dry-run reports per tool what
// would be trimmed. Exit 0 on success (also when too little would be saved to write anything),
// 1 with one stderr line on bad input.
int run_trim(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
