#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// ctx-remind, the PostToolUse hook. Reads the payload from stdin, measures the context of the
// session (or of the subagent the hook fired in), and at or above the warn threshold prints the
// hook JSON whose additionalContext reaches the model, rate-limited per session and agent.
// Exit 0 whenever the payload was understood, including when the transcript, the configuration
// or the state database is unusable (one stderr line says why); exit 1 for a payload it cannot
// use (empty, not JSON, no transcript_path) or bad arguments. Never exit 2.
int run_remind(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
