#include "runner/dry_run.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>
#include <utility>

#include "runner/anchor.hpp"
#include "runner/client_call.hpp"
#include "util/json_io.hpp"

namespace ctxkit::runner {
namespace {

// The session a dry run's calls would be in, from one task's plan to the next.
struct PlannedSession {
  bool started = false;
  std::string id = "<new session id>";
  // The run's own session, put aside while a task in a mode of its own starts sessions.
  std::optional<std::pair<bool, std::string>> run;
};

void print_run_plan(std::ostream& out, const RunOptions& opts, size_t tasks) {
  out << fmt::format(
      "run plan: mode {} ({}), {} task(s), at most {} iteration(s), {} per task, on_fail {}\n",
      to_string(opts.mode), opts.mode_origin, tasks, opts.max_iterations, opts.max_task_iterations,
      to_string(opts.on_fail));
  if (opts.budget.any())
    out << fmt::format(
        "budget of the run:{}{}\n",
        opts.budget.max_tokens ? fmt::format(" {} tokens", *opts.budget.max_tokens) : "",
        opts.budget.max_cost_usd ? fmt::format(" ${}", *opts.budget.max_cost_usd) : "");
}

// Auto's thresholds (in auto mode) and the task's own budget, when it has one.
void print_task_limits(std::ostream& out, const RunOptions& opts, ContextMode mode,
                       const workflow::TaskSpec& s) {
  if (mode == ContextMode::Auto)
    out << fmt::format(
        "auto: a fresh session instead once the last call's context reaches {} %, a compaction "
        "between "
        "iterations once it reaches {} %\n",
        opts.auto_thresholds.fresh_at, opts.auto_thresholds.compact_at);
  if (s.max_tokens || s.max_cost_usd)
    out << fmt::format("budget of the task:{}{}\n",
                       s.max_tokens ? fmt::format(" {} tokens", *s.max_tokens) : "",
                       s.max_cost_usd ? fmt::format(" ${}", *s.max_cost_usd) : "");
}

// A call's argv (an argument with blanks or quotes as a JSON string) and its anchor.
void print_call(std::ostream& out, const std::vector<std::string>& argv,
                const std::string& anchor) {
  out << "argv:";
  for (const auto& a : argv)
    out << ' '
        << (a.find_first_of(" \n\t'\"") == std::string::npos ? a
                                                             : util::dump_json(nlohmann::json(a)));
  out << '\n';
  if (!anchor.empty())
    out << "anchor (" << anchor.size() << " bytes, about " << estimate_tokens(anchor.size())
        << " tokens):\n"
        << anchor << '\n';
}

// Task `s` (the n-th) of a dry run: its first call (the session, argv and anchor) and what
// its further iterations do.
void print_task_plan(std::ostream& out, const RunOptions& opts, const PlanAnchor& make_anchor,
                     const workflow::TaskSpec& s, int n, PlannedSession& session) {
  if (s.done) {
    out << fmt::format("\ntask {} ({}): already done in the tasks file, skipped\n", s.id, s.title);
    return;
  }
  const ContextMode mode = task_mode(opts.mode, parse_context_mode(s.context_mode));
  const int max_attempts = s.max_iterations > 0 ? s.max_iterations : opts.max_task_iterations;
  if (mode == opts.mode && session.run) {
    std::tie(session.started, session.id) = *session.run;
    session.run.reset();
  }
  const auto plan = plan_session(mode, session.started, true, false, false);
  if (plan.fresh && mode != opts.mode && !session.run)
    session.run.emplace(session.started, session.id);
  session.started = true;
  const std::string anchor = opts.reanchor ? make_anchor(s, mode) : "";
  const auto argv = call_argv(opts.claude_bin, opts.claude_args, plan.fresh,
                              plan.fresh ? "<session id " + std::to_string(n) + ">" : session.id,
                              anchor, call_prompt(task_text(s), 1, max_attempts, false));
  if (plan.fresh)
    if (auto at = std::find(argv.begin(), argv.end(), "--session-id");
        at != argv.end() && at + 1 != argv.end())
      session.id = *(at + 1);
  out << fmt::format("\ntask {} ({}){}: first call {} the session{}\n", s.id, s.title,
                     s.context_mode.empty() ? "" : fmt::format(", context mode {}", s.context_mode),
                     plan.fresh ? "starts" : "resumes",
                     plan.fresh ? fmt::format(" ({})", plan.reason) : "");
  print_task_limits(out, opts, mode, s);
  print_call(out, argv, anchor);
  if (mode == ContextMode::FreshPerIteration && max_attempts > 1)
    out << fmt::format("further iterations (up to {}) each start a fresh session\n", max_attempts);
  else if (max_attempts > 1)
    out << fmt::format("further iterations (up to {}) resume the same session\n", max_attempts);
}

}  // namespace

void print_dry_run(std::ostream& out, const RunOptions& opts,
                   const std::vector<workflow::TaskSpec>& specs, const std::string& workflow_name,
                   const PlanAnchor& anchor) {
  print_run_plan(out, opts, opts.workflow.empty() ? specs.size() : 0);
  if (!opts.workflow.empty()) {
    out << fmt::format(
        "workflow: {} ({}); steps and their context actions come from the template as the run "
        "reaches them\n",
        workflow_name, opts.workflow);
    return;
  }
  PlannedSession session;
  int n = 0;
  for (const auto& s : specs) print_task_plan(out, opts, anchor, s, ++n, session);
}

}  // namespace ctxkit::runner
