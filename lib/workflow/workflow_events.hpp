#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "store/state_store.hpp"
#include "util/error.hpp"
#include "workflow/workflow_service.hpp"

namespace ctxkit::workflow {

// A recorded event: the event, its worktree and when it happened.
struct RecordedEvent {
  WorkflowEvent event;
  std::string worktree;
  std::string at;  // ISO 8601 UTC
};

// The event log: rows of the state database's `events` table (source "workflow", scope = the
// worktree), so `ctx-workflow status` and the runner's report read the same record. Appends one
// event to the database at `state_db`. Errors name the database.
[[nodiscard]] Result<void> append_event(const std::filesystem::path& state_db, int busy_timeout_ms,
                                        const std::filesystem::path& worktree,
                                        const WorkflowEvent& event);
// The same into a database already open (a server appends many: opening it is most of the cost).
[[nodiscard]] Result<void> append_event(store::StateStore& store,
                                        const std::filesystem::path& worktree,
                                        const WorkflowEvent& event);

// The events of `worktree`, oldest first (unreadable rows skipped; no database is no events).
std::vector<RecordedEvent> read_events(const std::filesystem::path& state_db, int busy_timeout_ms,
                                       const std::filesystem::path& worktree);

}  // namespace ctxkit::workflow
