#pragma once

#include <cstddef>

#include "util/error.hpp"
#include "util/process.hpp"

namespace ctxkit::util {

// What run_bounded returned.
struct BoundedRun {
  ProcessResult result;
  bool overflowed = false;  // it was killed because its stdout passed `max_output`
};

// run_process for a program that is not ctxkit's (the user's status line, a server being
// probed), so that it cannot hold the caller: it leads a process group of its own, and what
// kills it (the spec's timeout, or more than `max_output` bytes on stdout; 0: no limit) kills the
// whole group, its children included. stdout then keeps the first `max_output` bytes.
[[nodiscard]] Result<BoundedRun> run_bounded(const ProcessSpec& spec, size_t max_output);

}  // namespace ctxkit::util
