#include "claude/hook_response.hpp"

#include <nlohmann/json.hpp>

#include "util/json_io.hpp"

namespace ctxkit::claude {

const char* hook_event_name(HookEvent event) {
  switch (event) {
    case HookEvent::PostToolUse:
      return "PostToolUse";
    case HookEvent::SessionStart:
      return "SessionStart";
    case HookEvent::UserPromptSubmit:
      return "UserPromptSubmit";
  }
  return "PostToolUse";
}

std::string additional_context_response(HookEvent event, const std::string& additional_context,
                                        const std::string& system_message) {
  nlohmann::ordered_json j;
  j["hookSpecificOutput"]["hookEventName"] = hook_event_name(event);
  j["hookSpecificOutput"]["additionalContext"] = additional_context;
  if (!system_message.empty()) j["systemMessage"] = system_message;
  return util::dump_json(j, -1, util::BadUtf8::replace);
}

}  // namespace ctxkit::claude
