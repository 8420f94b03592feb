#pragma once

#include <cstddef>
#include <string>
#include <vector>

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

}  // namespace ctxkit::runner
