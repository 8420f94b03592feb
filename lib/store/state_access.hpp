#pragma once

#include <optional>
#include <string>

#include "core/config.hpp"
#include "core/locations.hpp"
#include "store/meter_store.hpp"
#include "store/state_store.hpp"

namespace ctxkit::store {

// Opens the state database (`loc.state_db()`) with the busy timeout of `config`. A database SQLite
// reports as corrupt is moved aside and a fresh one created once. Returns the store, or nullopt
// with `problem` set to a one-line description (the caller then runs without state).
// `problem_kind`, when given, receives the kind of the failure (Busy: the database is locked).
std::optional<StateStore> open_state(const core::Locations& loc, const core::Config& config,
                                     std::string& problem, Error::Kind* problem_kind = nullptr);

// The same for the meter database (`loc.meter_db()`).
std::optional<MeterStore> open_meter(const core::Locations& loc, const core::Config& config,
                                     std::string& problem, Error::Kind* problem_kind = nullptr);

// Hands an action over to its supervisor (`p.supervisor`): it takes the place of one that
// supervisor had not carried out yet, whose prompt file goes (core::forget_prompt_file).
[[nodiscard]] Result<void> hand_over(StateStore& store, const core::Locations& loc,
                                     const PendingRollover& p);

}  // namespace ctxkit::store
