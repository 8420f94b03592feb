#include "claude/hook_payload.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "util/utf8.hpp"

namespace ctxkit {

namespace {
using json = nlohmann::json;

// Parses keeping only depth-1 scalars: nested objects and arrays (tool_input, tool_response, ...)
// are dropped as they are read.
Result<json> parse_top_level(std::string_view text) {
  auto keep = [](int depth, json::parse_event_t event, json&) {
    if (event == json::parse_event_t::key || event == json::parse_event_t::value) return true;
    if (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start)
      return depth <= 0;
    return true;
  };
  json j = json::parse(text, keep, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    std::string clean = util::sanitize_json_text(text);
    j = json::parse(clean, keep, false);
  }
  if (j.is_discarded()) {
    try {
      json discard = json::parse(text);
      (void)discard;
    } catch (const json::parse_error& e) {
      std::string what = e.what();
      auto pos = what.find("parse error");
      return fail(fmt::format("payload is not valid JSON: {}",
                              pos == std::string::npos ? what : what.substr(pos)),
                  Error::Kind::Invalid);
    } catch (...) {
    }
    return fail("payload is not valid JSON", Error::Kind::Invalid);
  }
  return j;
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return {};
  return it->get<std::string>();
}
}  // namespace

std::filesystem::path HookPayload::context_transcript() const {
  std::filesystem::path main(transcript_path);
  if (agent_id.empty()) return main;
  return main.parent_path() / main.stem() / "subagents" / fmt::format("agent-{}.jsonl", agent_id);
}

Result<HookPayload> parse_hook_payload(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return fail("no hook payload on stdin (empty input)", Error::Kind::Invalid);
  auto parsed = parse_top_level(text);
  if (!parsed) return std::unexpected(parsed.error());
  const json& j = *parsed;
  if (!j.is_object()) return fail("payload is not a JSON object", Error::Kind::Invalid);
  HookPayload p;
  p.session_id = str(j, "session_id");
  p.transcript_path = str(j, "transcript_path");
  p.cwd = str(j, "cwd");
  p.hook_event_name = str(j, "hook_event_name");
  p.tool_name = str(j, "tool_name");
  p.tool_use_id = str(j, "tool_use_id");
  p.agent_id = str(j, "agent_id");
  p.agent_type = str(j, "agent_type");
  p.source = str(j, "source");
  p.reason = str(j, "reason");
  if (auto it = j.find("stop_hook_active"); it != j.end() && it->is_boolean()) p.stop_hook_active = it->get<bool>();
  if (p.transcript_path.empty()) return fail("payload has no transcript_path", Error::Kind::Invalid);
  if (p.session_id.empty()) return fail("payload has no session_id", Error::Kind::Invalid);
  if (p.agent_id.find('/') != std::string::npos || p.agent_id.find("..") != std::string::npos)
    return fail(fmt::format("payload has an invalid agent_id '{}'", p.agent_id), Error::Kind::Invalid);
  return p;
}

}  // namespace ctxkit
