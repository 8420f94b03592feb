#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "util/env.hpp"
#include "util/error.hpp"
#include "util/exit_code.hpp"
#include "util/one_line.hpp"

namespace ctxkit::apps {

// Everything a tool touches outside its arguments, so that whole-tool behaviour runs in-process
// in tests: the environment, stdin (read on demand) and the two output streams.
struct AppContext {
  util::Env env;
  std::function<Result<std::string>()> read_stdin;
  std::ostream& out;
  std::ostream& err;
};

// Reads all of this process's stdin. Refuses a terminal (nothing was piped in).
[[nodiscard]] Result<std::string> read_process_stdin();

// Builds a context over this process's environment, stdin and std::cout/std::cerr.
AppContext process_context();

// Runs a tool main with one top-level catch: an escaping exception becomes one stderr line
// "<tool>: error: <what>" and `failure_code`.
int guarded_main(const char* tool, int argc, char** argv, ExitCode failure_code,
                 const std::function<int(const std::vector<std::string>&, AppContext&)>& run);

// The one stderr line of a program ("<tool>: error: <message>") and its notes ("<tool>: <text>"),
// made one line by util::one_line (control characters escaped, length capped).
using util::print_error;
using util::print_note;

// What a program exits with when it fails where it must fail open (an exception escaping its
// run, or a hook payload it cannot read): the one table of docs/troubleshooting.md, "Exit codes". A
// hook never exits `block` by accident; Claude Code shows any other non-zero code to the user as a
// non-blocking hook error and carries on.
ExitCode fail_open_code(std::string_view tool);

// guarded_main with the program's code from the fail-open table: the `main` of every program.
int program_main(const char* tool, int argc, char** argv,
                 const std::function<int(const std::vector<std::string>&, AppContext&)>& run);

// The ctxkit version string.
const char* version();

}  // namespace ctxkit::apps
