#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "archive/archive.hpp"
#include "core/config.hpp"
#include "rollover/rollover.hpp"
#include "util/env.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

namespace ctxkit::rollover {

// What the user asked `ctx-rollover` to prepare.
struct RolloverRequest {
  std::filesystem::path summary_file;  // the handoff summary (required)
  std::string session;                 // id, transcript path, or "" for the current session
  std::string claude_bin;              // "" = rollover.claude_bin
  bool print = false;                  // start the new session headless (claude -p)
  // How the new session searches the previous one (the prompt's {retrieval}), given the new
  // session's directory and the previous session's id; unset: "" (the prompt names the command).
  std::function<std::string(const std::string& cwd, const std::string& parent_id)> retrieval;
};

// A rollover made ready: archived, prompt written, lineage (and the supervisor's hand-over)
// recorded. What is left is to start the new session, or to tell how.
struct PreparedRollover {
  std::string new_session_id;
  std::string parent_session_id;
  int64_t number = 2;                  // the new session's number in its line of work
  std::optional<int> context_percent;  // the previous session's context use, when known
  archive::ArchiveLocation archive;    // where the previous session is archived
  std::filesystem::path prompt_file;   // the continuation prompt (0600)
  std::string cwd;                     // where the new session starts
  std::string bin;                     // the client as configured or given (for the command)
  bool inside = false;                 // run inside Claude Code (CLAUDECODE=1)
  bool supervised = false;             // handed to the supervisor (CTXKIT_SUPERVISOR)
  util::SpawnSpec launch;  // the new session's argv (program found in PATH when run outside)
  Summary summary;         // the handoff summary as read (too_long() deserves a warning)
};

// Prepares a rollover as `ctx-rollover` does. Everything that can fail is checked first (the
// summary, the session and its transcript, the client program when run outside Claude Code and
// outside a supervisor, the state folder and database, the prompt as one argument, the argv's
// limits); then the session is archived (archive_session), the prompt written, and the derivation
// recorded, after the supervisor's pending rollover when one runs the session (a failure of the
// derivation removes that again). Errors say what and where; nothing is recorded when one occurs
// before the archive.
[[nodiscard]] Result<PreparedRollover> prepare_rollover(const RolloverRequest& request,
                                                        const core::Config& config,
                                                        const util::Env& env);

// The shell command that starts the prepared session by hand:
// cd <cwd> && <bin> --session-id <id> "$(cat <prompt file>)".
std::string start_command(const PreparedRollover& rollover);

}  // namespace ctxkit::rollover
