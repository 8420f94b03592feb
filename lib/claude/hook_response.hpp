#pragma once

#include <cstddef>
#include <string>

namespace ctxkit::claude {

// The hook events whose stdout JSON can carry context for the model.
enum class HookEvent { PostToolUse, SessionStart, UserPromptSubmit };

// The name Claude Code uses for an event ("PostToolUse", ...).
const char* hook_event_name(HookEvent event);

// additionalContext longer than this is not inlined by the client (it is saved to a file and the
// model sees a short preview).
inline constexpr size_t kAdditionalContextInlineLimit = 10'000;

// A hook's stdout for an exit-0 run that gives the model text:
// {"hookSpecificOutput":{"hookEventName":E,"additionalContext":X}} plus "systemMessage" (shown
// to the human, not sent to the model) when `system_message` is non-empty. Invalid UTF-8 is
// replaced, never an exception. The model receives, for PostToolUse, "PostToolUse:<Tool> hook
// additional context: X" after the tool result; for SessionStart, "SessionStart hook additional
// context: X" (on startup, resume, clear — as the new session's first message — and compact).
std::string additional_context_response(HookEvent event, const std::string& additional_context,
                                        const std::string& system_message = "");

// The PostToolUse shape (the context reminder).
inline std::string post_tool_use_response(const std::string& additional_context,
                                          const std::string& system_message = "") {
  return additional_context_response(HookEvent::PostToolUse, additional_context, system_message);
}

// The SessionStart shape (re-injecting what a fresh or compacted context needs).
inline std::string session_start_response(const std::string& additional_context,
                                          const std::string& system_message = "") {
  return additional_context_response(HookEvent::SessionStart, additional_context, system_message);
}

}  // namespace ctxkit::claude
