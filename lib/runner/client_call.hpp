#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "claude/stream_result.hpp"
#include "util/error.hpp"

namespace ctxkit::runner {

// The largest prompt a call passes to the client; a longer one is cut (bounded_text).
inline constexpr size_t kMaxPromptBytes = 100000;

// Text for the client's command line with every NUL byte replaced by U+FFFD: exec would end the
// argument at the first NUL, and the client would get the text cut short (no task description,
// no DONE/BLOCKED rules) while the run folder recorded all of it. Replaced before the text is
// recorded, what is recorded is what the client gets.
std::string without_nul(std::string text);

// The rules that end every prompt: how to report the task (or, in a workflow, the step) done or
// blocked, and how to record decisions.
std::string report_rules(bool workflow);

// The prompt of one call: `work` (the task text or the step's instructions), a note from the
// second attempt on (`task_iteration` of `max_attempts`), then report_rules(); NUL bytes
// replaced, cut to kMaxPromptBytes.
std::string call_prompt(const std::string& work, int task_iteration, int max_attempts,
                        bool workflow);

// The client's arguments every call passes, after the configured ones (`claude_args`): the
// stream-json output.
std::vector<std::string> base_args(const std::vector<std::string>& claude_args);

// The argv of one call: `claude_bin`, base_args(), `-p`, then `--session-id SESSION` for a fresh
// session (a new random id when `session` is empty) or `--resume SESSION`, then
// `--append-system-prompt ANCHOR` when there is an anchor, and last the prompt.
std::vector<std::string> call_argv(const std::string& claude_bin,
                                   const std::vector<std::string>& claude_args, bool fresh,
                                   const std::string& session, const std::string& anchor,
                                   const std::string& prompt);

// How long one call may take: after its result line (or its exit) the client gets
// `exit_grace_seconds` to exit and close its output; a whole call is bounded by
// `call_timeout_seconds` (0: no bound).
struct CallLimits {
  int exit_grace_seconds = 30;
  int call_timeout_seconds = 0;
};

// What one call of the client gave.
struct CallResult {
  claude::StreamResult stream;  // its stream-json output, as read
  int exit_code = 0;
  int64_t client_ms = 0;
  int64_t exit_ms = -1;     // from the result line to the client's exit (-1: no result line)
  std::string stderr_tail;  // the last 2,000 bytes of its stderr
  bool timed_out = false;   // killed at call_timeout_seconds
  bool cut_off = false;  // killed (or its output left) exit_grace_seconds after its result or exit
};

// One call of the client: `argv` run in `cwd`, killed with SIGTERM when the caller dies. Its
// output is read line by line as it comes and not kept (the longest line is held, stderr's tail
// only); `on_result` is called once, when its result line arrives (while it is still exiting).
// A call killed at a limit is named in a `note`. An error: the client could not be run.
[[nodiscard]] Result<CallResult> invoke_client(const std::vector<std::string>& argv,
                                               const std::filesystem::path& cwd,
                                               const CallLimits& limits,
                                               const std::function<void()>& on_result,
                                               const std::function<void(const std::string&)>& note);

// The record of one call (tasks/<task>/iter-NNN.result.json): its exit, session, result, usage,
// cost, the task report it gave (`report`: done, blocked, none) and final text, and what it has of
// stderr_tail, timed_out and cut_off.
nlohmann::ordered_json call_record_json(const CallResult& call, const std::string& session_id,
                                        const char* report);

}  // namespace ctxkit::runner
