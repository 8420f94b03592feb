#pragma once

namespace ctxkit {

// The exit codes ctxkit's programs use. A hook exits `ok` on every path that must not disturb
// the session (fail open), `failure` for a usage or input error the user should see, and never
// `block` unless blocking is the point (Claude Code feeds exit 2's stderr to the model; it shows
// any other non-zero code to the user as a non-blocking hook error). `stopped` is ctx-run's: the
// run stopped on max_iterations, STOP or PAUSE and can be resumed. `interrupted` is 128 + SIGINT.
// What each program exits with when it fails open is apps/app.hpp's fail_open_code(). A
// supervisor passes its child's own status through, so a program's return value stays an int;
// these are the values ctxkit itself chooses.
enum class ExitCode : int { ok = 0, failure = 1, block = 2, stopped = 3, interrupted = 130 };

constexpr int exit_code(ExitCode c) {
  return static_cast<int>(c);
}

}  // namespace ctxkit
