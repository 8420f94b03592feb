#pragma once

#include <string>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// `ctx-pin`: add, list and remove pins from a shell, and (--hook) the hooks that keep them
// across compactions (pins/compaction_pins.hpp): PreCompact prints them as instructions for the
// summarizer; PostCompact checks each against the summary (`compact_summary`) and records what
// was kept; the first UserPromptSubmit after a compaction re-injects the ones the summary left
// out.
int run_pin(const std::vector<std::string>& args, AppContext& ctx);

}  // namespace ctxkit::apps
