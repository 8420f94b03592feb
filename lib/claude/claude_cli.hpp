#pragma once

#include <string>
#include <vector>

namespace ctxkit::claude {

// The command lines ctxkit gives the `claude` program. Pure: argv vectors, never a shell string.

// Starts a fresh session: BIN [EXTRA…] [-p] --session-id ID PROMPT.
std::vector<std::string> launch_argv(const std::string& bin, const std::vector<std::string>& extra,
                                     bool print, const std::string& session_id,
                                     const std::string& prompt);

// The arguments a supervised client is restarted with: the original ones minus those that pick
// a session (--resume/-r X, --continue/-c, --session-id X, --fork-session) and minus a trailing
// prompt (a last argument that is not an option nor the value of one).
std::vector<std::string> relaunch_args(const std::vector<std::string>& args);

// Restarts a supervised client in a new session: relaunch_args(args) --session-id ID PROMPT.
std::vector<std::string> relaunch_argv(const std::vector<std::string>& args,
                                       const std::string& session_id, const std::string& prompt);

// Resumes a supervised client's session: relaunch_args(args) --resume ID PROMPT.
std::vector<std::string> resume_argv(const std::vector<std::string>& args,
                                     const std::string& session_id, const std::string& prompt);

// Compacts a supervised client's session headless with the client's own options:
// relaunch_args(args) -p --resume ID "/compact[ FOCUS]".
std::vector<std::string> headless_compact_argv(const std::vector<std::string>& args,
                                               const std::string& session_id,
                                               const std::string& focus);

// Compacts a session headless: BIN [EXTRA…] -p --resume ID "/compact[ FOCUS]" (the client runs
// the slash command as the prompt; an empty focus leaves the summarizer's default instructions).
std::vector<std::string> compact_argv(const std::string& bin, const std::vector<std::string>& extra,
                                      const std::string& session_id, const std::string& focus);

}  // namespace ctxkit::claude
