#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace ctxkit::claude {

// What kind of output a PostToolUse payload carries, for the live cap.
enum class OutputKind {
  Other,  // a tool the cap leaves alone, or an output of a shape it does not know
  Bash,   // the Bash result object: {stdout, stderr, interrupted, ..., persistedOutputPath?}
  Mcp,    // an MCP tool's content blocks: [{"type": "text", "text": ...}, ...]
};

// One member of the Bash result object kept as the client wrote it.
struct RawMember {
  std::string_view key;  // decoded
  std::string_view raw;  // the value's JSON text
};

// The fields of a PostToolUse payload the cap needs, as views into the buffer given to
// scan_tool_payload (decoded in place: valid while that buffer lives and is not changed).
struct ToolPayload {
  std::string_view hook_event_name, tool_name, tool_use_id, session_id, cwd, agent_id;
  OutputKind kind = OutputKind::Other;
  // Bash: stdout and stderr; the file where the client put an output over its own limit
  // (persistedOutputPath, whose stdout then holds only the output's first 30,000 characters);
  // every other member in order.
  std::string_view stdout_text, stderr_text, persisted_path;
  std::vector<RawMember> other_members;
  // Mcp: the text of each block (kind is Other when a block is not text: an image is never cut).
  std::vector<std::string_view> texts;
};

// Scans a hook payload held whole in `data` (strict JSON, an object at the top; strings are
// decoded in place, so the buffer is changed and the views point into it). Memory beyond the
// buffer stays small whatever the output's size: nothing is copied. A value nested deeper than
// 256 levels, a bad escape or a control character in a string it reads, or anything but JSON is
// an error (kind Invalid) with a one-line message; the strings of values it skips are checked
// for their end only. An escaped lone surrogate becomes U+FFFD; UTF-8 is not checked (the
// answer's writer replaces ill-formed bytes).
[[nodiscard]] Result<ToolPayload> scan_tool_payload(char* data, size_t size);

// Whether a tool's output may be capped at all: Bash and MCP tools, except ctxkit's own servers
// (mcp__ctxkit-*, mcp__plugin_ctxkit_*: their answers are what the model asked the archive for).
bool cappable_tool(std::string_view tool_name);

// The PostToolUse answer that replaces the output: {"hookSpecificOutput": {"hookEventName":
// "PostToolUse", "updatedToolOutput": X}}, X in the tool's own shape (the client drops a
// replacement of another shape without a word): for Bash the result object with `preview` as
// stdout, stderr empty, persistedOutputPath and persistedOutputSize left out (with them the
// client wraps stdout in its own <persisted-output> notice), every other member as it was; for an
// MCP tool one text block. `preview` must be well-formed UTF-8 (ill-formed bytes are replaced).
std::string cap_response(const ToolPayload& payload, std::string_view preview);

}  // namespace ctxkit::claude
