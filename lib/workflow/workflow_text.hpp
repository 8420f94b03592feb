#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workflow/workflow_events.hpp"

namespace ctxkit::workflow {

// What `ctx-workflow` prints of the service's answer to `tool` (workflow_list, workflow_set_tasks
// for `loop_id`, workflow_context, or a status: workflow_status, workflow_start,
// workflow_advance). Text from outside (templates, task titles, the model's outputs) is one line
// with its control characters escaped, or, where it spans lines (instructions, outputs), each
// line so. Ends with a newline.
std::string answer_text(const std::string& tool, const nlohmann::ordered_json& body,
                        const std::string& loop_id = {});

// The fate of the context action of `step` from the event log: its last hand-out or skip, then
// what followed it (a confirmation of that step, an execution); empty when the log has neither.
std::string action_fate(const std::vector<RecordedEvent>& events, const std::string& step);

}  // namespace ctxkit::workflow
