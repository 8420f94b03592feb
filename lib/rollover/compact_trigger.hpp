#pragma once

#include <chrono>
#include <string>

#include "core/config.hpp"
#include "core/locations.hpp"
#include "util/env.hpp"

namespace ctxkit::rollover {

// The end of a supervised turn (the Stop hook): when `[compact] at` is set, `action` is "compact",
// no rollover or workflow action waits for this supervisor, and the session's context stands at
// `at` percent or more (as the reminders count it: of where the client compacts this model),
// hands the supervisor a compaction of `session_id` with the pins as its focus; the Stop hook then
// marks it ready as it does any pending action. Returns a note when something went wrong, else ""
// (also when nothing was due). Outside a supervisor it does nothing. When the figure falls short
// of `at` while the status line has not told the session's window yet, waits up to
// `status_wait` for it (the client runs the status line 300 ms after the conversation last
// changed, so after a fast turn it reports the window only after the turn's end).
std::string request_compaction_if_due(const core::Config& cfg, const core::Locations& loc,
                                      const util::Env& env, const std::string& session_id,
                                      const std::string& transcript, const std::string& cwd,
                                      std::chrono::milliseconds status_wait = {});

// The same once the turn's last reply has reached the transcript (its size unchanged for 200 ms,
// waiting 3 s at most), then, when a compaction was handed over, marks it ready and wakes the
// supervisor (CTXKIT_SUPERVISOR_PID, once proven to be it) as the Stop hook does. For a process
// of its own after the Stop hook's output: problems go to the archive's log.
void compact_after_turn_if_due(const core::Config& cfg, const core::Locations& loc,
                               const util::Env& env, const std::string& session_id,
                               const std::string& transcript, const std::string& cwd);

// The prompt a session compacted by the trigger is resumed with.
std::string compacted_prompt(int percent, int at);

}  // namespace ctxkit::rollover
