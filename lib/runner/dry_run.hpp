#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "runner/policy.hpp"
#include "runner/runner.hpp"
#include "workflow/task_list.hpp"

namespace ctxkit::runner {

// The anchor a task's fresh session would get, in the mode the task runs in (a dry run passes
// "(the previous task's summary)" for the summary it cannot know yet).
using PlanAnchor = std::function<std::string(const workflow::TaskSpec&, ContextMode)>;

// Prints a dry run's plan on `out`: the run's limits, then each task's first call as it would be
// made (its session, argv and anchor, `anchor` asked only when `opts.reanchor`) and what its
// further iterations do. A workflow run (`opts.workflow`, the template's `workflow_name`) prints
// one line instead of tasks: its steps are known only as the run reaches them. Nothing is run or
// recorded; the fresh sessions' ids are placeholders.
void print_dry_run(std::ostream& out, const RunOptions& opts,
                   const std::vector<workflow::TaskSpec>& specs, const std::string& workflow_name,
                   const PlanAnchor& anchor);

}  // namespace ctxkit::runner
