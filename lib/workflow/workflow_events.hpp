#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "workflow/workflow_service.hpp"

namespace ctxkit::workflow {

// A recorded event: the event, its worktree and when it happened.
struct RecordedEvent {
  WorkflowEvent event;
  std::string worktree;
  std::string at;  // ISO 8601 UTC
};

// The event log (Locations::workflow_events()): one JSON line per event, appended (O_APPEND,
// mode 0600). Appends one event to `file`. Errors name the file.
Result<void> append_event(const std::filesystem::path& file, const std::filesystem::path& worktree, const WorkflowEvent& event);

// The events of `worktree`, oldest first (unreadable lines skipped; a missing file is empty).
std::vector<RecordedEvent> read_events(const std::filesystem::path& file, const std::filesystem::path& worktree);

}  // namespace ctxkit::workflow
