#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "archive/archive.hpp"
#include "core/config.hpp"
#include "core/locations.hpp"
#include "trim/trim_session.hpp"
#include "util/env.hpp"
#include "util/error.hpp"

namespace ctxkit::trim {

// What the user asked `ctx-trim` to do; unset values come from the configuration.
struct SessionTrimRequest {
  std::string session;                         // id, transcript path, or "" for the current session
  std::optional<int64_t> threshold;            // default: context.trim_threshold_chars
  std::optional<std::set<std::string>> tools;  // default: context.trim_target_tools (never empty)
  size_t keep_recent = 0;
  bool dry_run = false;
  std::string new_session_id;  // "" = a random UUID
  std::string trimmed_at;      // ISO 8601; "" = now
  std::string tool_version;    // "ctxkit <version>", for trim_metadata
  // Runs the indexing of the archive once the trim is done; util::detach when unset (the program
  // returns before the archived copy is indexed).
  std::function<void(const std::function<void()>&)> in_background;
};

// What one trim did: the original, its archived copy, the new session and the figures.
struct SessionTrim {
  std::filesystem::path transcript;  // the original (never modified)
  std::string parent_id;             // the original's session id
  std::string project;               // the client's project folder name
  std::string new_session_id;        // the trimmed copy's id (written only when outcome.written)
  archive::ArchiveLocation archive;  // where the original is archived (nothing there on a dry run)
  bool dry_run = false;
  size_t threshold = 0;
  std::set<std::string> tools;
  size_t keep_recent = 0;
  uint64_t min_tokens_saved = 0;           // below this nothing is written
  std::optional<int64_t> context_percent;  // the original's context use, when known
  TrimOutcome outcome;  // stats, bytes read and written, the new file, lines that came late
  std::string trimmed_at;
  std::string warning;            // the lineage could not be recorded (the trim itself stands)
  bool indexing_started = false;  // the archive's indexing was handed to in_background
};

// Trims a session as `ctx-trim` does: locates it (locate_session), checks that each target tool is
// Claude Code's, an MCP tool or used in the session, removes temporary copies a killed trim left,
// archives the original and writes the trimmed copy under a new id (trim_session: one read, both
// copies fsynced; the archive copy holds every line that was trimmed, so each notice points at a
// file that has its full text), records the derivation in the state database (a failure there is
// `warning`, not an error), and hands the indexing of the archive to `in_background` unless the
// project is excluded from it. A dry run reads and decides only. Errors (no such session, an
// unknown tool, a file that is not a transcript, a write that failed) say what and where; nothing
// is recorded then.
[[nodiscard]] Result<SessionTrim> trim_and_record(const SessionTrimRequest& request,
                                                  const core::Config& config, const util::Env& env);

// The command that continues in `session_id`: "cd <cwd> && claude --resume <id>", without the
// `cd` when the working directory is not known.
std::string resume_command(const std::string& cwd, const std::string& session_id);

}  // namespace ctxkit::trim
