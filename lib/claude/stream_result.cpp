#include "claude/stream_result.hpp"

#include <nlohmann/json.hpp>

namespace ctxkit {
namespace {
using json = nlohmann::json;

// The events a runner needs start with one of these (the client writes "type" first).
bool wanted(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  line.remove_prefix(i);
  return line.starts_with(R"({"type":"system")") || line.starts_with(R"({"type":"result")");
}

uint64_t count(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) return 0;
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (it->is_number_integer()) return it->get<int64_t>() > 0 ? static_cast<uint64_t>(it->get<int64_t>()) : 0;
  if (it->is_number_float()) return it->get<double>() > 0 ? static_cast<uint64_t>(it->get<double>()) : 0;
  return 0;
}

std::string text_of(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}
}  // namespace

void StreamResultReader::feed_line(std::string_view line) {
  if (!wanted(line)) return;
  // Events are shallow; anything deeper is not one (and must not exhaust the stack).
  bool too_deep = false;
  json::parser_callback_t limit = [&](int depth, json::parse_event_t, json&) {
    if (depth > 64) too_deep = true;
    return !too_deep;
  };
  json ev = json::parse(line.begin(), line.end(), limit, false);
  if (too_deep || !ev.is_object()) return;
  const std::string type = text_of(ev, "type");
  const std::string subtype = text_of(ev, "subtype");
  if (type == "system") {
    if (subtype == "init" && result_.session_id.empty()) result_.session_id = text_of(ev, "session_id");
    if (subtype == "compact_boundary") result_.compacted = true;
    return;
  }
  if (type != "result") return;
  result_.has_result = true;
  result_.subtype = subtype;
  auto err = ev.find("is_error");
  result_.is_error = (err != ev.end() && err->is_boolean() && err->get<bool>()) || subtype != "success";
  result_.text = text_of(ev, "result");
  if (result_.session_id.empty()) result_.session_id = text_of(ev, "session_id");
  result_.num_turns = static_cast<long>(count(ev, "num_turns"));
  if (auto c = ev.find("total_cost_usd"); c != ev.end() && c->is_number()) result_.cost_usd = c->get<double>();
  TokenUsage u;
  auto models = ev.find("modelUsage");
  if (models != ev.end() && models->is_object() && !models->empty()) {
    for (const auto& [name, m] : models->items()) {
      if (!m.is_object()) continue;
      u += TokenUsage{count(m, "inputTokens"), count(m, "cacheCreationInputTokens"), count(m, "cacheReadInputTokens"),
                      count(m, "outputTokens")};
    }
  } else if (auto usage = ev.find("usage"); usage != ev.end() && usage->is_object()) {
    u = TokenUsage{count(*usage, "input_tokens"), count(*usage, "cache_creation_input_tokens"),
                   count(*usage, "cache_read_input_tokens"), count(*usage, "output_tokens")};
  }
  result_.usage = u;
}

void StreamResultReader::feed(std::string_view text) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    feed_line(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

StreamResult parse_stream_json(std::string_view text) {
  StreamResultReader r;
  r.feed(text);
  return r.result();
}

}  // namespace ctxkit
