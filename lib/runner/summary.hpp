#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace ctxkit::runner {

// What a finished task's summary is made of (hybrid mode hands it to the next task's anchor).
struct SummaryInputs {
  std::string task_id, title, status;  // status: done, skipped, failed
  std::vector<std::string> files_changed;
  std::string final_message;  // the agent's last final message
  std::string progress_tail;  // the progress file's last lines
  std::string blocked_reason;
};

// The summary, at most `max_lines` lines: title and status, files changed (first 20), key
// decisions ("Decision:" lines of the progress file and of the final message, the newest
// last, without repeats), known issues (the blocked reason; "Issue:", "Known issue:", "TODO:"
// lines of the final message). Pure.
std::string build_task_summary(const SummaryInputs& in, size_t max_lines);

}  // namespace ctxkit::runner
