#pragma once

#include <string>
#include <vector>

#include "core/locations.hpp"
#include "store/pin_views.hpp"
#include "store/state_store.hpp"
#include "util/error.hpp"

namespace ctxkit::pins {

// Where a session's pins live: its line of work (trims and rollovers inherit it) and its
// project (the client's folder name of the project).
struct PinScope {
  std::string session_id;  // empty outside a session
  std::string line_id;     // empty outside a session
  std::string project;     // empty when unknown
  bool recorded = false;   // the session's record decided line and project
};

// The scope of `session_id` (may be empty) in `project_dir` (the project's folder; may be empty):
// the line as the lineage records it, the project as the session was recorded in, else the
// folder name of `project_dir`.
[[nodiscard]] Result<PinScope> resolve_pin_scope(store::StateStore& store,
                                                 const std::string& session_id,
                                                 const std::string& project_dir);

// Pins `text` (normalized by context::normalize_pin) to the line of work, or with `project` to
// the project. Returns the pin's id; `existed` tells that the same text was pinned already.
[[nodiscard]] Result<int64_t> add_pin(store::StateStore& store, const PinScope& scope,
                                      const std::string& text, bool project,
                                      bool* existed = nullptr);

// The pins of a scope, oldest first (at most context::kMaxInjectedPins of them), and how many
// there are in all.
struct PinList {
  std::vector<store::PinRow> pins;
  int64_t total = 0;
};
[[nodiscard]] Result<PinList> list_pins(store::StateStore& store, const PinScope& scope);

// The view of a scope's pins that its session's PreCompact hook reads (store/pin_views.hpp).
store::PinView pin_view_of(const PinScope& scope, const PinList& list);
// list_pins(), read under the views' lock so that the session's view is written from the same
// reading; read without the lock (and no view written) when another program holds it. `note`
// says why no view was written.
[[nodiscard]] Result<PinList> list_pins_writing_view(store::StateStore& store,
                                                     const core::Locations& loc,
                                                     const PinScope& scope, std::string& note);
// Writes that view from `store` after a change, so that the session's next PreCompact opens no
// database; returns a note when it could not (the hook then reads the database, as before).
std::string refresh_pin_view(store::StateStore& store, const core::Locations& loc,
                             const PinScope& scope);

}  // namespace ctxkit::pins
