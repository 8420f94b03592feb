#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace ctxkit::claude {

// The fields of a Claude Code hook payload that ctxkit uses. Unknown fields are ignored.
struct HookPayload {
  std::string session_id;
  std::string transcript_path;
  std::string cwd;
  std::string hook_event_name;
  std::string tool_name;
  std::string tool_use_id;
  std::string agent_id;  // set when the hook fired inside a subagent
  std::string agent_type;
  std::string source;  // SessionStart
  std::string reason;  // SessionEnd
  bool stop_hook_active = false;

  // The transcript this payload's context lives in: the subagent's own file
  // (<session dir>/subagents/agent-<agent_id>.jsonl) when agent_id is set, else transcript_path.
  std::filesystem::path context_transcript() const;
};

// Fills `buf` with up to `cap` bytes of input and returns how many; 0 means the end of input.
using ByteSource = std::function<Result<size_t>(char* buf, size_t cap)>;

// Returns the next chunk of input, empty at the end; the view stays valid until the next call.
using ChunkSource = std::function<Result<std::string_view>()>;

// The longest value kept for one of HookPayload's string fields.
inline constexpr size_t kMaxHookFieldBytes = 64 * 1024;
// The deepest nesting accepted inside a skipped value.
inline constexpr size_t kMaxHookPayloadDepth = 1 << 20;

// Scans a hook payload read in chunks from `source`. Only the top-level fields HookPayload
// holds are kept; every other value (tool_input, tool_response, ...) is checked as strict JSON
// and skipped without being built, without recursion, so memory stays flat whatever the size.
// Errors (empty input, not JSON, not an object, transcript_path or session_id missing, a kept
// field over kMaxHookFieldBytes, a read error) carry a one-line message. Ill-formed UTF-8 is
// kept as bytes and an escaped lone UTF-16 surrogate becomes U+FFFD; duplicate keys: the last
// one wins; a kept field of another type than string reads as empty.
[[nodiscard]] Result<HookPayload> scan_hook_payload(const ByteSource& source);
// The same over a source that hands out its own chunks (no copy into a buffer of the scanner's).
[[nodiscard]] Result<HookPayload> scan_hook_payload_chunks(const ChunkSource& source);

// scan_hook_payload over a string held in memory.
[[nodiscard]] Result<HookPayload> parse_hook_payload(std::string_view text);

}  // namespace ctxkit::claude
