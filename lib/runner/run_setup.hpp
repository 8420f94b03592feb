#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runner/run_record.hpp"
#include "runner/runner.hpp"
#include "util/env.hpp"
#include "util/error.hpp"
#include "workflow/task_list.hpp"

namespace ctxkit::runner {

// What a run starts or goes on with, every input checked before anything runs.
struct RunSetup {
  // A new run's state (its folder not created yet), or the resumed run's (read again under its
  // lock, which the record holds).
  RunRecord record;
  std::vector<workflow::TaskSpec> specs;  // the tasks, in order (a workflow run's may be none)
  std::string workflow_name;              // the workflow's own name (a workflow run)
  bool summaries_wanted = false;          // some task carries the previous task's summary
};

// Where the set-up's notes go (one line each, without the program's name).
using SetupNote = std::function<void(const std::string&)>;

// A new run from `opts`: the tasks file loaded and ordered (every task's context_mode known), the
// workflow template found and loaded (`opts.workflow` becomes its path) and checked against a
// workflow state the project holds, the client found on PATH (not for a dry run); then the run's
// state, with a new run id and the options it records. An error names the input that is wrong.
[[nodiscard]] Result<RunSetup> set_up_new_run(RunOptions& opts, const util::Env& env);

// The run `opts.resume_run` to go on with: run.json read, locked, read again under the lock; a
// completed run, an unknown mode, a session id that is not one or a task's unknown context_mode
// refused. The options it was started with hold again (`opts` takes them), but for a budget
// given now and the client to run (a recorded client that differs is named in a note and
// replaced); the tasks' budgets are read again from the tasks file when it still reads.
[[nodiscard]] Result<RunSetup> set_up_resumed_run(RunOptions& opts, const util::Env& env,
                                                  const SetupNote& note);

// A new run id: YYYYMMDDTHHMMSS.mmmZ-xxxxxx (sorts by start time, unique with the random part).
std::string new_run_id(int64_t now_ms);

}  // namespace ctxkit::runner
