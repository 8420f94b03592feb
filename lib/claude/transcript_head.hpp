#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace ctxkit::claude {

// What the first lines of a transcript say about its session. Strings are decoded JSON (a cwd
// "/tmp/a \"b\"" comes out as /tmp/a "b"); empty when not found within the limits.
struct TranscriptHead {
  bool is_transcript = false;  // a line with "sessionId", or a "type" string and a "uuid", was seen
  std::string session_id;      // the first "sessionId"
  std::string cwd;             // the first "cwd"
  std::string first_timestamp;  // the first "timestamp"
  uint64_t lines_read = 0;      // complete lines looked at
};

// How much of a file read_transcript_head looks at.
struct HeadLimits {
  uint64_t max_lines = 200;
  uint64_t max_bytes = 64ull << 20;  // complete lines that end within this many bytes
};

// What one line contributes to a transcript's head: the top-level fields of a JSON object line.
// Values of other fields are skipped without being built, however large or deeply nested; a
// field of the wrong type counts as absent. nullopt when the line is not a JSON object (text that
// is not valid UTF-8 is repaired first, as the client's lines may hold some).
struct HeadLine {
  bool session_line = false;
  std::optional<std::string> session_id, cwd, timestamp;
};
std::optional<HeadLine> parse_head_line(std::string_view line);

// Reads a transcript's head: lines from the start until everything is known or a limit is
// reached. A missing or unreadable file (or one that is not a regular file) is an error naming
// it; a file that is readable but not a transcript is a head with is_transcript false.
[[nodiscard]] Result<TranscriptHead> read_transcript_head(const std::filesystem::path& transcript,
                                                          HeadLimits limits = {});

// The error for a file whose head is not a transcript's: "<path> is not a Claude Code transcript
// (no session lines in its first N lines)".
Error not_a_transcript(const std::filesystem::path& transcript, const TranscriptHead& head);

}  // namespace ctxkit::claude
