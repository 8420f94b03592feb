#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/env.hpp"
#include "util/error.hpp"

namespace ctxkit::rollover {

// A handoff summary read from a file.
struct Summary {
  std::string text;
  size_t words = 0;
  // The skill asks for at most about 500 words; longer summaries are accepted with a warning.
  bool too_long() const { return words > 550; }
};

// Reads and checks a summary file: a missing, unreadable, empty (only whitespace) or non-UTF-8
// file, or one with a NUL byte (it could not be passed whole as a program argument), is an error
// naming it.
[[nodiscard]] Result<Summary> read_summary(const std::filesystem::path& file);

// What the continuation prompt says.
struct ContinuationInfo {
  int64_t number = 2;  // this session's number in its line of work
  std::optional<int> previous_percent;
  std::string summary;
  std::string parent_session_id;
  std::string parent_transcript;
  std::string archive;
  std::string search_command;  // e.g. /home/me/.local/bin/ctx-search
  std::string
      retrieval;  // how to search the previous session ({retrieval}); empty: with search_command
};

// The continuation template: <exe dir>/../share/ctxkit/prompts/continuation.md when installed
// beside the program, else the copy built into the program.
std::string continuation_template(const std::optional<std::filesystem::path>& exe_dir);

// Renders the template (fmt named fields {number} {percent} {summary} {retrieval}
// {search_command} {parent_session_id} {parent_transcript} {archive}); a template with unknown or
// broken fields is an error.
[[nodiscard]] Result<std::string> render_continuation(const std::string& tmpl,
                                                      const ContinuationInfo& info);

// The full path of `bin` (searched in $PATH unless it contains '/'), or an error naming it and
// saying how to choose another program.
[[nodiscard]] Result<std::string> find_program(const std::string& bin, const util::Env& env);

// Whether a rendered continuation prompt can be given to the client as one program argument:
// an error saying how long it is and what the limit is otherwise (the summary is what to shorten).
[[nodiscard]] Result<void> check_prompt_fits(const std::string& prompt,
                                             const std::filesystem::path& summary_file);

}  // namespace ctxkit::rollover
