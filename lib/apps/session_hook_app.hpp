#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// ctx-session-hook: the SessionStart, Stop and SessionEnd hook. SessionStart records a session
// seen for the first time; Stop tells a supervising ctx-rollover that a turn with a pending
// rollover ended; SessionEnd archives and indexes the session in a detached process so the
// client is not held. Prints nothing for the model; exit 0 (one stderr line when something could
// not be done), 1 for a payload it cannot use. Never exit 2.
int run_session_hook(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
