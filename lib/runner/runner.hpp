#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/locations.hpp"
#include "runner/anchor.hpp"
#include "runner/policy.hpp"
#include "util/env.hpp"

namespace ctxkit::runner {

// Everything a run is started with (command line over [runner] configuration over defaults).
struct RunOptions {
  std::filesystem::path project;  // where claude runs and .ctxkit/runs/ lives
  ContextMode mode = ContextMode::Continuous;
  std::string mode_origin = "default";  // where the mode came from (flag, .work.toml, ...)
  std::filesystem::path tasks_file;     // a tasks file, or
  std::string workflow;  // a workflow template (name from the search path, or a path)
  std::string summary;   // the workflow's request summary (workflow_start)
  std::string claude_bin = "claude";
  std::vector<std::string> claude_args;  // passed through before the runner's own arguments
  int max_iterations = 50;
  int max_task_iterations = 3;
  OnFail on_fail = OnFail::Abort;
  bool reanchor = true;
  AnchorSources sources;
  std::vector<std::string> anchor_files;
  std::string progress_file = "progress.txt";
  // Whether anchor_files / progress_file come from the user's own configuration: then they may
  // name a file anywhere; otherwise only a file inside the project is read.
  bool anchor_files_anywhere = false;
  bool progress_file_anywhere = false;
  int progress_lines = 20;
  int summary_max_lines = 50;
  int anchor_max_tokens = 4000;
  int exit_grace_seconds =
      30;  // after the result line (or the client's exit): then it is killed, its output left
  int call_timeout_seconds = 0;  // a call killed after this long (0: no limit)
  // The run's budget (checked between calls; reached: the run stops as on STOP). On --resume the
  // recorded budget holds unless `budget_given`: then this one replaces it.
  Budget budget;
  bool budget_given = false;
  AutoThresholds auto_thresholds;  // --context-mode auto's fresh_at / compact_at
  LimitPolicy limits;              // what a call that ended on a rate or usage limit leads to
  int limit_tick_ms = 200;         // how often a wait for a limit looks at STOP, PAUSE and SIGINT
  bool dry_run = false;
  std::string resume_run;  // --resume RUN: continue this run
  int busy_timeout_ms = 1000;
};

// The world a run talks to.
struct RunEnvironment {
  util::Env env;
  core::Locations locations;
  std::ostream& out;
  std::ostream& err;
  bool progress_lines_only = true;    // stderr is not a terminal: one line per event
  std::function<bool()> interrupted;  // SIGINT arrived (checked after each call)
};

// How a run ended.
enum class RunEnd {
  Completed,    // every task done, or the plan of a dry run printed
  BadInput,     // nothing run: `why` says what is wrong with the input
  Failed,       // the run could not go on (a call could not be made, the workflow failed)
  Aborted,      // a task failed and on_fail is abort
  Stopped,      // on max_iterations, STOP, a budget or a limit: it can be resumed
  Interrupted,  // SIGINT, after the current call was recorded
};

// run.json's status of a run that ended as `end`: "completed", "failed", "aborted", or
// "stopped" (a stop and an interrupt alike); "" for BadInput, which records nothing.
std::string_view run_status(RunEnd end);

struct RunOutcome {
  RunEnd end = RunEnd::Completed;
  std::string why;     // the error, or why the run stopped ("" when it completed)
  std::string run_id;  // "" when nothing was recorded (bad input, a dry run)
  std::string status;  // run.json's status: completed, stopped, aborted, failed
  std::filesystem::path folder;
  // A run stopped on a budget or a limit: run.json's stopped_on scope ("run", "task", "limit")
  // and, for a budget, which one ("tokens", "cost").
  std::string stopped_scope;
  std::string stopped_budget;
};

// Runs (or resumes, or plans with dry_run) a run. Progress goes to world.err as it happens, a
// dry run's plan to world.out; the outcome says how it ended, for the caller to report.
RunOutcome run(const RunOptions& options, RunEnvironment& world);

// The run folder of `run` (an id under <project>/.ctxkit/runs, or a path to a run folder).
std::filesystem::path run_folder(const std::filesystem::path& project, const std::string& run);

}  // namespace ctxkit::runner
