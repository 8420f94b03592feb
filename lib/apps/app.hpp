#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "util/env.hpp"
#include "util/error.hpp"
#include "util/exit_code.hpp"

namespace ctxkit {

// Everything a tool touches outside its arguments, so that whole-tool behaviour runs in-process
// in tests: the environment, stdin (read on demand) and the two output streams.
struct AppContext {
  util::Env env;
  std::function<Result<std::string>()> read_stdin;
  std::ostream& out;
  std::ostream& err;
};

// Reads all of this process's stdin. Refuses a terminal (nothing was piped in).
Result<std::string> read_process_stdin();

// Builds a context over this process's environment, stdin and std::cout/std::cerr.
AppContext process_context();

// Runs a tool main with one top-level catch: an escaping exception becomes one stderr line
// "<tool>: error: <what>" and `failure_code`.
int guarded_main(const char* tool, int argc, char** argv, ExitCode failure_code,
                 const std::function<int(const std::vector<std::string>&, AppContext&)>& run);

// The one stderr line of a program: "<tool>: error: <message>". The message (which may carry
// paths, ids and event names from the input) is made one line: control characters escaped,
// length capped (util::one_line).
void print_error(std::ostream& err, std::string_view tool, std::string_view message);
// "<tool>: <text>" for notes and warnings, made one line the same way.
void print_note(std::ostream& err, std::string_view tool, std::string_view text);

// The ctxkit version string.
const char* version();

}  // namespace ctxkit
