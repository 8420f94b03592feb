#pragma once

#include <optional>
#include <string>

#include "core/config.hpp"
#include "store/state_store.hpp"
#include "util/env.hpp"

namespace ctxkit {

// Opens the state database of `config` ("state.db" in the state directory). A database SQLite
// reports as corrupt is moved aside and a fresh one created once. Returns the store, or nullopt
// with `problem` set to a one-line description (the caller then runs without state).
// `problem_kind`, when given, receives the kind of the failure (Busy: the database is locked).
std::optional<StateStore> open_state(const Config& config, const util::Env& env, std::string& problem,
                                     Error::Kind* problem_kind = nullptr);

}  // namespace ctxkit
