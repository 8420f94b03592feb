#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/env.hpp"
#include "util/error.hpp"

namespace ctxkit {

// A handoff summary read from a file.
struct Summary {
  std::string text;
  size_t words = 0;
  // The skill asks for at most about 500 words; longer summaries are accepted with a warning.
  bool too_long() const { return words > 550; }
};

// Reads and checks a summary file: a missing, unreadable, empty (only whitespace) or non-UTF-8
// file is an error naming it.
Result<Summary> read_summary(const std::filesystem::path& file);

// What the continuation prompt says.
struct ContinuationInfo {
  int64_t number = 2;                 // this session's number in its line of work
  std::optional<int> previous_percent;
  std::string summary;
  std::string parent_session_id;
  std::string parent_transcript;
  std::string archive;
  std::string search_command;         // e.g. /home/me/.local/bin/ctx-search
};

// The continuation template: <exe dir>/../share/ctxkit/prompts/continuation.md when installed
// beside the program, else the copy built into the program.
std::string continuation_template(const std::optional<std::filesystem::path>& exe_dir);

// Renders the template (fmt named fields {number} {percent} {summary} {search_command}
// {parent_session_id} {parent_transcript} {archive}); a template with unknown or broken fields
// is an error.
Result<std::string> render_continuation(const std::string& tmpl, const ContinuationInfo& info);

// The argv that starts a fresh session: BIN [EXTRA…] [-p] --session-id ID PROMPT.
std::vector<std::string> launch_argv(const std::string& bin, const std::vector<std::string>& extra, bool print,
                                     const std::string& session_id, const std::string& prompt);

// The arguments a supervised client is restarted with: the original ones minus those that pick
// a session (--resume/-r X, --continue/-c, --session-id X, --fork-session) and minus a trailing
// prompt (a last argument that is not an option nor the value of one).
std::vector<std::string> relaunch_args(const std::vector<std::string>& args);

// The full path of `bin` (searched in $PATH unless it contains '/'), or an error naming it.
Result<std::string> find_program(const std::string& bin, const util::Env& env);

}  // namespace ctxkit
