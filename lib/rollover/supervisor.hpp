#pragma once

#include <sys/types.h>

#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.hpp"
#include "core/locations.hpp"
#include "util/env.hpp"
#include "util/error.hpp"

namespace ctxkit {

// Runs `command` (claude and its arguments) as a child and carries out the rollovers prepared in
// it: when the Stop hook marks a pending rollover of this supervisor ready (or within half a
// second without the hook's wake-up), everything the new session needs is checked (prompt file,
// argument limits, program, directory), and only then the client is ended (SIGTERM, then SIGKILL
// after rollover.grace_seconds) and started again in the new session (relaunch_argv), in the
// session's directory. A rollover that cannot be carried out is reported on `err`, dropped, and
// the running client is left alone. The child gets CTXKIT_SUPERVISOR (a random token) and
// CTXKIT_SUPERVISOR_PID in its environment; SIGINT, SIGQUIT, SIGTERM and SIGHUP sent to the
// supervisor by a process are passed to it, and after SIGTERM or SIGHUP no new session starts.
// Returns the last child's status (128 + signal when a signal ended it), or 1 when the first
// child cannot start.
int run_supervisor(const std::vector<std::string>& command, const Config& config,
                   const util::Env& env, std::ostream& out, std::ostream& err);

// The record that lets the Stop hook check a pid before signalling it:
// Locations::supervisors_dir()/<pid>, mode 0600 in a 0700 folder, holding the supervisor's token
// and its process start time. Written atomically; an error when the folder or file cannot be
// written.
Result<void> record_supervisor(const Locations& loc, pid_t pid, const std::string& token);

// Removes the record of `pid` (nothing when there is none).
void forget_supervisor(const Locations& loc, pid_t pid);

// The pid named by `pid_text` (CTXKIT_SUPERVISOR_PID) when it is a running ctxkit supervisor
// holding `token` (CTXKIT_SUPERVISOR): a decimal number above 0 and within pid_t, with a record
// holding the same token and the same process start time (a reused pid does not match). Anything
// else is an error saying why, and the pid must not be signalled.
Result<pid_t> verify_supervisor(const Locations& loc, std::string_view pid_text,
                                std::string_view token);

}  // namespace ctxkit
