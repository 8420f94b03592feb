#pragma once

// The record shared by the reminder decision (context/) and the state store (store/), so that the
// pure decision does not depend on the database.

#include <cstdint>

namespace ctxkit::core {

// The last reminder given to one session (or one subagent of it).
struct ReminderState {
  int tier = 0;             // 0 none/re-armed, 1 warn, 2 recommend, 3 urgent
  int64_t fired_at_ms = 0;  // when the last reminder was given
};

}  // namespace ctxkit::core
