#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// ctx-status, the statusLine command. Prints one line with the context figure (percent, tokens,
// window) coloured by tier, from the client's context_window when present, else from the
// transcript; records the client's exact figure in the state store for ctx-remind.
// Exit 0 with a line; exit 1 with one stderr line for input it cannot use.
int run_status(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
