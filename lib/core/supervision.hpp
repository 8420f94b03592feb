#pragma once

#include <optional>
#include <string>

#include "util/env.hpp"

namespace ctxkit::core {

// What a supervisor (ctx-rollover --supervise) puts in the environment of the client it runs, and
// so of every hook and program of that session.
inline constexpr const char* kSupervisorTokenVar = "CTXKIT_SUPERVISOR";
inline constexpr const char* kSupervisorPidVar = "CTXKIT_SUPERVISOR_PID";

// The supervisor a program runs under, as its environment names it: the token (never empty) and
// the pid as given (rollover::verify_supervisor proves it before anything is signalled).
struct SupervisorRef {
  std::string token;
  std::string pid_text;
};

inline std::optional<SupervisorRef> supervisor_of(const util::Env& env) {
  auto token = env.get_nonempty(kSupervisorTokenVar);
  if (!token) return std::nullopt;
  return SupervisorRef{std::move(*token), env.get(kSupervisorPidVar).value_or("")};
}

}  // namespace ctxkit::core
