#pragma once

#include <filesystem>
#include <string>

#include "core/locations.hpp"
#include "util/error.hpp"

namespace ctxkit::archive {

// Where a session is archived: <state>/archive/<project folder>/<session id>.jsonl and its side
// folder <state>/archive/<project folder>/<session id>/ (subagents/, tool-results/).
struct ArchiveLocation {
  std::filesystem::path transcript;
  std::filesystem::path side_dir;
};

ArchiveLocation archive_location(const core::Locations& loc, const std::string& project,
                                 const std::string& session_id);

// Whether the archived copy must be (re)written for a source of `source_bytes`: it is missing or
// shorter (the source grew since).
bool archive_needs_update(const ArchiveLocation& where, uint64_t source_bytes);

// Copies a session's side folder (recursively) into `to`: each file that is missing there or
// shorter is copied atomically with mode 0600; nothing else is touched. A missing `from` is not
// an error.
[[nodiscard]] Result<void> copy_side_folder(const std::filesystem::path& from,
                                            const std::filesystem::path& to);

// Removes temporary copies a killed trim or archiver left in `dir`: files named
// ".<name>.jsonl.tmp.XXXXXX" (util::AtomicFile's names for transcripts), regular, owned by this
// user and untouched for `min_age_s` seconds (a copy being written now is never taken). Returns how
// many were removed.
size_t remove_stale_temporaries(const std::filesystem::path& dir, int64_t min_age_s = 600);

}  // namespace ctxkit::archive
