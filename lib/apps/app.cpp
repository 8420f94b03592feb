#include "apps/app.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "ctxkit_version.hpp"

namespace ctxkit::apps {

const char* version() {
  return CTXKIT_VERSION;
}

Result<std::string> read_process_stdin() {
  if (::isatty(0))
    return fail("expected a JSON payload on stdin (stdin is a terminal)", Error::Kind::Invalid);
  std::string data;
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(0, buf, sizeof buf);
    if (n > 0) {
      data.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) break;
    if (errno == EINTR) continue;
    return fail(fmt::format("reading stdin: {}", std::strerror(errno)));
  }
  return data;
}

AppContext process_context() {
  return AppContext{util::Env::from_process(), read_process_stdin, std::cout, std::cerr};
}

ExitCode fail_open_code(std::string_view tool) {
  // ctx-gate is also the SessionStart hook of the re-anchor: when it cannot run it prints a note
  // and the session starts as it would without a workflow, with no error shown at every start,
  // /clear and compaction. Every other program (the PostToolUse and session hooks included)
  // exits `failure`: the user sees the one error line, and the client goes on.
  if (tool == "ctx-gate") return ExitCode::ok;
  // ctx-cap is an extra too: an output it cannot cap reaches the model as the client made it.
  if (tool == "ctx-cap") return ExitCode::ok;
  return ExitCode::failure;
}

int program_main(const char* tool, int argc, char** argv,
                 const std::function<int(const std::vector<std::string>&, AppContext&)>& run) {
  return guarded_main(tool, argc, argv, fail_open_code(tool), run);
}

int guarded_main(const char* tool, int argc, char** argv, ExitCode failure_code,
                 const std::function<int(const std::vector<std::string>&, AppContext&)>& run) {
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    AppContext ctx = process_context();
    int rc = run(args, ctx);
    std::cout.flush();
    return rc;
  } catch (const std::exception& e) {
    print_error(std::cerr, tool, e.what());
  } catch (...) {
    print_error(std::cerr, tool, "unexpected failure");
  }
  return exit_code(failure_code);
}

}  // namespace ctxkit::apps
