#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "archive/archive.hpp"
#include "archive/indexer.hpp"
#include "core/config.hpp"
#include "core/locations.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"

namespace ctxkit::archive {

// What archiving a session did.
struct ArchiveOutcome {
  ArchiveLocation where;
  bool copied = false;   // the archive copy was (re)written now
  bool indexed = false;  // the index was brought up to date now (else the next indexer does it)
  bool project_excluded = false;  // listed in [archive] exclude_projects: archived, not indexed
  bool queued_behind = false;  // with queue_once: another archiver of the session waits already (it
                               // does this one's work)
  PendingRun index;
};

// Archives a session and makes it searchable: copies the transcript (up to its last complete
// line, when it grew) and its side folder to <archive>/<project>/ (archive_location), then, unless
// the project is excluded, indexes what is pending in the archive when no other indexer is at work
// (one that is will find this session too, or the next indexer will). The transcript itself is
// never modified. When the archived copy is a prefix of the transcript, only the new lines are
// appended to it (a live session is archived after every turn); otherwise it is copied whole. With
// `queue_once` (the hooks of a live session), nothing is done when another archiver of the same
// session already waits: it copies whatever the transcript holds when its turn comes.
[[nodiscard]] Result<ArchiveOutcome> archive_session(const std::filesystem::path& transcript,
                                                     const core::Locations& loc,
                                                     const core::ArchiveConfig& config,
                                                     bool queue_once = false);

// A session's transcript archived and indexed, as the session hook has it done after each turn
// (`live`: with queue_once, then the indexer unless another archiver of the session waits) or at
// its end (the indexer waited for, then run). A failure is also written to the archive's log, the
// place a detached run leaves it. Returns the failure's message, else "".
std::string archive_and_index(const std::filesystem::path& transcript, const core::Locations& loc,
                              const core::ArchiveConfig& config, bool live);

// Waits for and takes the lock archive_session holds while it writes the archived copy of a
// session (a file beside it, in its folder, which the caller has made private). A trim holds it
// while it writes its own copy, so that the two never replace each other's work. An error when
// the lock file cannot be made.
[[nodiscard]] Result<util::FileLock> lock_session_archive(const ArchiveLocation& where);

}  // namespace ctxkit::archive
