#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "context/compaction_point.hpp"
#include "core/config.hpp"
#include "report/timeline.hpp"
#include "util/error.hpp"

namespace ctxkit::report {

// What one pass over a transcript found: its readings and the events it holds itself.
struct TranscriptScan {
  std::string session_id;                  // the file's stem
  std::string model, client_version, cwd;  // the newest seen
  std::vector<Point> points;
  std::vector<Event> events;  // compactions, reminders, the trim that wrote this copy
  uint64_t lines = 0;
  int64_t start_ms = 0, end_ms = 0;
  int64_t max_tokens = 0;
};

// A reminder of ctx-remind, recognised in the text the model was given: "Context at N% ..."; its
// tier by the words of each tier's text (context/reminder.cpp), nullopt when `text` is not one.
struct ReminderText {
  int percent = 0;
  int tier = 0;  // 0: the words name no tier
};
std::optional<ReminderText> parse_reminder_text(std::string_view text);

// Reads `transcript` line by line: every main-chain reading (the lines of one response counted
// once; sidechains, API errors and "<synthetic>" responses skipped; with `subagent`, a subagent's
// own file, whose lines are all sidechain), each compaction boundary (tokens before and after,
// the estimate after as a reading), each reminder of ctx-remind the model was given (a hook's
// additional context), and the trim that wrote this copy (trim_metadata on the first line).
// Lines that are not JSON are skipped. `session` names the events. A missing or unreadable file
// is an error.
[[nodiscard]] Result<TranscriptScan> scan_transcript(const std::filesystem::path& transcript,
                                                     const std::string& session,
                                                     bool subagent = false);

// The subagents' transcripts of a session (`<transcript without .jsonl>/subagents/agent-*.jsonl`),
// sorted by name; none when there is no such folder.
std::vector<std::filesystem::path> subagent_transcripts(const std::filesystem::path& transcript);

// A session part from a scan: the window, the basis and the compaction point from the newest
// model and client release the transcript names, the configuration and the client's settings.
SessionPart make_session_part(TranscriptScan scan, const std::filesystem::path& transcript,
                              const core::ContextConfig& config,
                              const context::CompactionSettings& settings);

}  // namespace ctxkit::report
