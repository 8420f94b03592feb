#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/locations.hpp"
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

// Removes the prompt file of an action handed to a supervisor once it is carried out, dropped or
// replaced: only a file of ctxkit's own folder for them (rollovers/, *.md), never one elsewhere
// that a row names.
inline void forget_prompt_file(const Locations& loc, const std::string& path) {
  const std::filesystem::path file(path);
  if (file.parent_path() != loc.rollovers_dir() || file.extension() != ".md") return;
  std::error_code ec;
  std::filesystem::remove(file, ec);
}

}  // namespace ctxkit::core
