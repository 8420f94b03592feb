#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.hpp"
#include "core/locations.hpp"
#include "util/env.hpp"
#include "util/error.hpp"

namespace ctxkit::store {
class StateStore;
}

namespace ctxkit::rollover {

// Something the supervisor did, or could not do, that the user is told about.
struct SupervisorEvent {
  enum class Kind {
    NotRecorded,       // the supervisor record could not be written (detail: why); polled instead
    RolloverDropped,   // a ready rollover to `session` cannot start (detail: why); the client goes
                       // on
    TerminalRestored,  // a client ended and the terminal's settings were put back
    Compacting,        // a workflow compact of `session` starts (detail: the focus, maybe "")
    CompactFailed,     // the compact of `session` failed (detail: how); it is resumed as it is
    Resuming,          // `session` is resumed after its compact
    Starting,          // the new session `session` starts
    LeftUndone,        // a supervisor that is gone (killed, say) left an action of `session`
                       // undone (detail: "compact", "clear" or "rollover"): dropped
  };
  Kind kind;
  std::string session;
  std::string detail;
};
using SupervisorReport = std::function<void(const SupervisorEvent&)>;

// How a supervision ended.
struct SupervisorResult {
  int last_status = 0;               // the last client's status (128 + signal when one ended it)
  std::optional<Error> spawn_error;  // a client could not start (the first, or after a rollover)
  int clients_started = 0;
  int rollovers = 0;  // rollovers and workflow actions carried out
};

// Runs `command` (claude and its arguments) as a child and carries out the rollovers prepared in
// it: when the Stop hook marks a pending rollover of this supervisor ready (or within half a
// second without the hook's wake-up), everything the new session needs is checked (prompt file,
// argument limits, program, directory), and only then the client is ended (SIGTERM, then SIGKILL
// after rollover.grace_seconds) and started again in the new session (relaunch_argv), in the
// session's directory. A rollover that cannot be carried out is reported, dropped, and the running
// client is left alone. The child gets CTXKIT_SUPERVISOR (a random token) and
// CTXKIT_SUPERVISOR_PID in its environment; SIGINT, SIGQUIT, SIGTERM and SIGHUP sent to the
// supervisor by a process are passed to it, and after SIGTERM or SIGHUP no new session starts.
// Prints nothing: each event goes to `report` as it happens. Returns when a client ends with no
// rollover ready (or after a stop signal), or when a client cannot start (`spawn_error`).
SupervisorResult run_supervisor(const std::vector<std::string>& command, const core::Config& config,
                                const util::Env& env, const SupervisorReport& report);

// The record that lets the Stop hook check a pid before signalling it:
// Locations::supervisors_dir()/<pid>, mode 0600 in a 0700 folder, holding the supervisor's token
// and its process start time. Written atomically; an error when the folder or file cannot be
// written.
[[nodiscard]] Result<void> record_supervisor(const core::Locations& loc, pid_t pid,
                                             const std::string& token);

// Removes the record of `pid` (nothing when there is none).
void forget_supervisor(const core::Locations& loc, pid_t pid);

// The tokens of the recorded supervisors that are gone (no process, or another process under
// their pid: killed before they could remove their record), their records removed. A record
// that is not one, or whose process /proc cannot tell about, is left alone.
std::vector<std::string> forget_ended_supervisors(const core::Locations& loc);

// The pid named by `pid_text` (CTXKIT_SUPERVISOR_PID) when it is a running ctxkit supervisor
// holding `token` (CTXKIT_SUPERVISOR): a decimal number above 0 and within pid_t, with a record
// holding the same token and the same process start time (a reused pid does not match). Anything
// else is an error saying why, and the pid must not be signalled.
[[nodiscard]] Result<pid_t> verify_supervisor(const core::Locations& loc, std::string_view pid_text,
                                              std::string_view token);

// The end of a supervised turn: marks the action the supervisor holding `token` prepared for
// `session_id` ready, and when there was one, wakes that supervisor (SIGUSR1) once `pid_text`
// (CTXKIT_SUPERVISOR_PID) is proven to be it (verify_supervisor; it polls anyway, and a wrong pid
// is never signalled). An error when the mark failed; else why the supervisor was not woken, or
// nothing (woken, or nothing was pending).
[[nodiscard]] Result<std::optional<std::string>> wake_when_ready(store::StateStore& store,
                                                                 const core::Locations& loc,
                                                                 std::string_view pid_text,
                                                                 const std::string& token,
                                                                 const std::string& session_id);

}  // namespace ctxkit::rollover
