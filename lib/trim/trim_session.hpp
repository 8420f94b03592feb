#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <set>
#include <string>

#include "trim/trimmer.hpp"
#include "util/error.hpp"

namespace ctxkit::trim {

// One trim of a session's transcript.
struct TrimRequest {
  std::filesystem::path transcript;  // the session's transcript (never modified)
  std::string new_session_id;        // the copy's id (its file: <same folder>/<id>.jsonl)
  size_t threshold = 500;
  std::set<std::string> tools;
  size_t keep_recent = 0;  // leave the results of the last N responses alone
  bool dry_run = false;    // read and decide, write nothing
  // A dry run of at least this many bytes is read in two parts on two threads when the process
  // may run on two CPUs or more: the first `first_part` of the bytes (to a line's end), and the
  // rest.
  uint64_t split_at_least = 16 << 20;
  double first_part = 0.5;
  std::filesystem::path archive_transcript;  // where the original is archived ("" = no archive)
  std::filesystem::path archive_side_dir;
  uint64_t min_tokens_saved = 300;  // below this nothing is written
  std::string trimmed_at;           // ISO 8601, for trim_metadata
  std::string tool_version;
  // Called once the snapshot is taken (its size fixed), before anything is read.
  std::function<void()> after_snapshot;
};

// What a trim did.
struct TrimOutcome {
  TrimStats stats;
  std::string session_id;        // the original's id (file name stem)
  std::string cwd;               // from the transcript, for the resume command
  std::string first_timestamp;   // when the session started (its first timestamp)
  std::filesystem::path output;  // the new transcript ("" when nothing was written)
  bool written = false;
  bool archived = false;        // the archive copy was written now
  uint64_t snapshot_bytes = 0;  // bytes of complete lines trimmed
  uint64_t output_bytes = 0;    // bytes of the new transcript (0 when nothing was written)
  uint64_t late_bytes = 0;      // bytes that arrived after the snapshot
  uint64_t late_lines = 0;      // complete lines among them
  int parts = 1;                // read in this many parts (see TrimRequest::split_at_least)
};

// Trims a transcript into a new session file beside it, streaming: the original is read once
// (twice with keep_recent) up to its last complete line at the start, the archive copy and the
// new file are written through temporary files (fsynced, renamed), and the new file's first line
// carries trim_metadata. The side folder (<id>/subagents, <id>/tool-results) is copied to the new
// id. Nothing is written below `min_tokens_saved`. A file that is not a Claude Code transcript is
// an error.
[[nodiscard]] Result<TrimOutcome> trim_session(const TrimRequest& request);

// Whether the first lines of `transcript` look like a Claude Code session (JSON objects with
// sessionId or a known type).
[[nodiscard]] Result<void> check_is_transcript(const std::filesystem::path& transcript);

}  // namespace ctxkit::trim
