#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/locations.hpp"
#include "report/timeline.hpp"
#include "store/state_store.hpp"

namespace ctxkit::report {

// What to take from the state database for one session.
struct StateEventsOptions {
  bool came_from = true;  // the trim or rollover the session came from (lineage)
  bool ended_by = true;   // the trim or rollover that ended it
  // How far before the session's first and after its last timestamp an event still counts.
  int64_t slack_ms = 60'000;
};

// The events ctxkit's state database holds for the session `part` (record: its lineage row, if
// any): the trim or rollover it came from and the one that ended it (skipped when the transcript
// already showed that trim, in `already`), the workflow's context actions in its folder or naming
// it, and ctx-run's events naming it, between its first and last timestamp. A row that cannot be
// read is skipped; a database error is returned.
[[nodiscard]] Result<std::vector<Event>> state_events(
    store::StateStore& store, const SessionPart& part,
    const std::optional<store::SessionRecord>& record, const std::vector<Event>& already,
    const StateEventsOptions& options = {});

// The outputs ctx-cap capped in the session `part`, from the archive's record of them
// (archive::capped_output_events), between its first and last timestamp (with `slack_ms`); one
// that `already` shows (as an earlier version's row of the state database) is not repeated.
std::vector<Event> cap_events(const core::Locations& loc, const SessionPart& part,
                              const std::vector<Event>& already, int64_t slack_ms = 60'000);

}  // namespace ctxkit::report
