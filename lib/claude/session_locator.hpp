#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/locations.hpp"
#include "util/env.hpp"
#include "util/error.hpp"

namespace ctxkit::claude {

// Finds a session's transcript. `what` is a session id (looked up in every project folder of
// `loc.claude_projects_dir()`; the most recently written match wins), a path to a transcript,
// or empty for the current session ($CLAUDE_CODE_SESSION_ID in `env`). The current session's
// transcript may not be on disk yet when a tool runs early in a session (the client writes it a
// moment later): it is looked for again for up to `current_wait`. Errors name what was looked for
// and where.
[[nodiscard]] Result<std::filesystem::path> locate_session(
    const std::string& what, const util::Env& env, const core::Locations& loc,
    std::chrono::milliseconds current_wait = std::chrono::milliseconds(0));

// The most recently written transcript of the project at `project` (its folder under
// `loc.claude_projects_dir()`, named as the client names it), if there is one.
std::optional<std::filesystem::path> newest_project_transcript(
    const core::Locations& loc, const std::filesystem::path& project);

// Whether `text` looks like a session id (letters, digits and '-', 8 to 64 characters).
bool looks_like_session_id(std::string_view text);

}  // namespace ctxkit::claude
