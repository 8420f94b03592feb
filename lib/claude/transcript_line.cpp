#include "claude/transcript_line.hpp"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "util/utf8.hpp"

namespace ctxkit::claude {

namespace {
using json = nlohmann::json;

bool contains(std::string_view hay, std::string_view needle) {
  return ::memmem(hay.data(), hay.size(), needle.data(), needle.size()) != nullptr;
}

// Keeps only what the meter reads, so that large values (text, tool inputs and outputs, UI data)
// are never built: depth-1 keys except bulky ones, everything at depths 2 and 3 (message.*,
// message.usage.*, compactMetadata.*), and only "type" and "id" of message.content blocks.
bool keep_key(int depth, std::string_view k) {
  if (depth == 1) {
    return !(k == "toolUseResult" || k == "snapshot" || k == "data" || k == "attachment" ||
             k == "content" || k == "progress" || k == "normalizedMessages" || k == "summary");
  }
  if (depth <= 3) return true;
  if (depth == 4) return k == "type" || k == "id";
  return false;
}

Result<json> parse_filtered(std::string_view line) {
  auto cb = [](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key)
      return keep_key(depth, parsed.get_ref<const std::string&>());
    return true;
  };
  json j = json::parse(line, cb, false);
  if (j.is_discarded()) {
    std::string clean = util::sanitize_json_text(line);
    j = json::parse(clean, cb, false);
  }
  if (j.is_discarded()) return fail("not valid JSON", Error::Kind::Invalid);
  if (!j.is_object()) return fail("not a JSON object", Error::Kind::Invalid);
  return j;
}

// A token count: a non-negative integer, held at INT64_MAX; anything else counts 0.
int64_t int_of(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return 0;
  if (it->is_number_unsigned()) return util::sat_from_unsigned(it->get<uint64_t>());
  if (it->is_number_integer()) return std::max<int64_t>(it->get<int64_t>(), 0);
  return 0;
}

std::string str_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool bool_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}
}  // namespace

bool may_matter_for_meter(std::string_view line) {
  return contains(line, "\"assistant\"") || contains(line, "\"compact_boundary\"");
}

Result<TranscriptLine> parse_transcript_line(std::string_view line) {
  auto parsed = parse_filtered(line);
  if (!parsed) return std::unexpected(parsed.error());
  const json& j = *parsed;
  TranscriptLine t;
  t.type = str_of(j, "type");
  t.subtype = str_of(j, "subtype");
  t.timestamp = str_of(j, "timestamp");
  t.is_sidechain = bool_of(j, "isSidechain");
  t.is_api_error = bool_of(j, "isApiErrorMessage");
  if (auto m = j.find("message"); m != j.end() && m->is_object()) {
    t.model = str_of(*m, "model");
    t.message_id = str_of(*m, "id");
    if (auto u = m->find("usage"); u != m->end() && u->is_object()) {
      Usage usage;
      usage.input_tokens = int_of(*u, "input_tokens");
      usage.cache_creation_input_tokens = int_of(*u, "cache_creation_input_tokens");
      usage.cache_read_input_tokens = int_of(*u, "cache_read_input_tokens");
      t.usage = usage;
    }
    if (auto c = m->find("content"); c != m->end() && c->is_array()) {
      for (const auto& block : *c) {
        if (block.is_object() && str_of(block, "type") == "tool_use") {
          auto id = str_of(block, "id");
          if (!id.empty()) t.tool_use_ids.push_back(std::move(id));
        }
      }
    }
  }
  if (auto cm = j.find("compactMetadata"); cm != j.end() && cm->is_object()) {
    if (auto pt = cm->find("postTokens"); pt != cm->end() && pt->is_number())
      t.compact_post_tokens = int_of(*cm, "postTokens");
  }
  return t;
}

}  // namespace ctxkit::claude
