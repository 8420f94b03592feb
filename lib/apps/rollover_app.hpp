#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// ctx-rollover --summary-file F [--session ID]: archives and indexes the session, records the
// rollover, renders the continuation prompt and starts (outside Claude Code), prints (inside
// Claude Code) or hands to the supervisor (in a supervised session) the fresh session.
// ctx-rollover --supervise -- claude [args…]: runs Claude Code as a child and carries out
// rollovers prepared in it when its turn ends. Exit 0 on success, 1 with one stderr line on bad
// input with nothing recorded; the supervisor exits with the last child's status.
int run_rollover(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
