#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace ctxkit {

// The fields of a Claude Code hook payload that ctxkit uses. Unknown fields are ignored.
struct HookPayload {
  std::string session_id;
  std::string transcript_path;
  std::string cwd;
  std::string hook_event_name;
  std::string tool_name;
  std::string tool_use_id;
  std::string agent_id;    // set when the hook fired inside a subagent
  std::string agent_type;
  std::string source;      // SessionStart
  std::string reason;      // SessionEnd
  bool stop_hook_active = false;

  // The transcript this payload's context lives in: the subagent's own file
  // (<session dir>/subagents/agent-<agent_id>.jsonl) when agent_id is set, else transcript_path.
  std::filesystem::path context_transcript() const;
};

// Parses a hook payload. Errors (empty input, not JSON, not an object, transcript_path or
// session_id missing) carry a one-line message. Large values such as tool_response are skipped
// without building them; ill-formed UTF-8 is tolerated.
Result<HookPayload> parse_hook_payload(std::string_view text);

}  // namespace ctxkit
