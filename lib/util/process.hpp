#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace ctxkit::util {

// What a finished child process returned.
struct ProcessResult {
  int exit_code = -1;     // exit status, or 128 + signal number when killed by a signal
  std::string out;        // everything it wrote to stdout
  std::string err;        // everything it wrote to stderr
  bool timed_out = false; // it was killed because the timeout passed
};

// How to start a child: argv (argv[0] is searched in PATH), never a shell.
struct ProcessSpec {
  std::vector<std::string> argv;
  std::optional<std::map<std::string, std::string>> env;  // replaces the environment if set
  std::optional<std::filesystem::path> cwd;
  std::string stdin_data;
  std::optional<std::chrono::milliseconds> timeout;
};

// Runs a child to completion, feeding stdin and collecting both output streams. A child that
// cannot be started is an error; a child that fails is a result with its exit code.
Result<ProcessResult> run_process(const ProcessSpec& spec);

// Runs `work` in a grandchild detached from the caller (new session, stdin/stdout/stderr on
// /dev/null, so no pipe of the caller is held open) and returns as soon as the intermediate
// child has exited. When fork fails, `work` runs in this process instead: the work is done
// either way, only later.
void detach(const std::function<void()>& work);

}  // namespace ctxkit::util
