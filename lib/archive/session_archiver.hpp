#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "archive/archive.hpp"
#include "core/config.hpp"
#include "store/search_index.hpp"
#include "util/error.hpp"

namespace ctxkit {

// What archiving a session did.
struct ArchiveOutcome {
  ArchiveLocation where;
  bool copied = false;           // the archive copy was (re)written now
  bool indexed = false;          // the index was brought up to date
  bool project_excluded = false; // listed in [archive] exclude_projects: archived, not indexed
  IndexReport index;
};

// The search index of a state directory: <state>/archive/index.db.
std::filesystem::path index_path(const std::filesystem::path& state_dir);

// Archives a session and makes it searchable: copies the transcript (up to its last complete
// line, when it grew) and its side folder to <state>/archive/<project>/, then indexes the lines
// added since the last run, unless the project is excluded or the session carries the exclusion
// marker. The transcript itself is never modified.
Result<ArchiveOutcome> archive_session(const std::filesystem::path& transcript, const std::filesystem::path& state_dir,
                                       const ArchiveConfig& config);

// Indexes an already archived copy (used after ctx-trim wrote the archive itself).
Result<IndexReport> index_archived(const ArchiveLocation& where, const std::string& project, const std::string& session_id,
                                   const std::filesystem::path& state_dir, const ArchiveConfig& config, bool* excluded_project);

}  // namespace ctxkit
