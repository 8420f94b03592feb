#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// `ctx-run`: drives `claude -p` over a tasks file or a workflow template in one of four context
// modes (continuous, fresh-per-task, fresh-per-iteration, hybrid), re-anchoring every fresh
// session and recording every call's tokens; `ctx-run report [RUN…]` compares runs;
// `ctx-run config set runner.KEY VALUE` edits the project's .work.toml.
int run_runner(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
