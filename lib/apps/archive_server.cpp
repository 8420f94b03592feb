#include "apps/archive_server.hpp"

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "apps/archive_tool.hpp"
#include "util/json_io.hpp"
#include "util/time.hpp"

namespace ctxkit::apps {

namespace {
using json = nlohmann::json;
constexpr const char* kInstructions =
    "This server searches the archive of Claude Code sessions: every earlier session of every "
    "project, and the current "
    "session up to its last turn (its subagents included). What a compaction, /clear, trim or "
    "rollover removed from your "
    "context is still there. Search it (archive_search) after a compaction or rollover when you "
    "need a detail that is no "
    "longer in your context, or when the user refers to earlier work; open a hit with "
    "archive_show; cite what you use as "
    "SESSION:LINE.";

json schema(json properties, json required) {
  return json{
      {"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}};
}

json search_tool_json() {
  return {{"name", "archive_search"},
          {"description",
           "Search past and current Claude Code sessions (user prompts, your answers, tool inputs "
           "and tool outputs), this "
           "conversation before a compaction included. Search when: the conversation was "
           "compacted, cleared, trimmed or rolled "
           "over and you need an exact detail that is no longer in your context (an error message, "
           "a file path, a command and "
           "its output, a decision and its reason); or the user refers to earlier work (\"as we "
           "did last week\", \"the error "
           "from before\"). Write the query as plain words, as the user would type them: every "
           "word must occur; identifiers "
           "and punctuation such as engine.c:42 or ERR_CONN_RESET are matched literally; there are "
           "no operators. Each hit is "
           "cited as SESSION:LINE (SESSION/agent-ID:LINE when a subagent's transcript holds it) "
           "with its time, kind "
           "(user, assistant, tool_use, tool_result), project, a snippet with the words in [ ], "
           "and the command that resumes "
           "its session. Open a hit in full with archive_show; cite SESSION:LINE when you use it."},
          {"inputSchema",
           schema({{"query",
                    {{"type", "string"},
                     {"description", "The words to find, taken literally (all must occur)."}}},
                   {"project",
                    {{"type", "string"},
                     {"description",
                      "Only this project: its folder path (/home/me/app) or the client's folder "
                      "name (-home-me-app)."}}},
                   {"session", {{"type", "string"}, {"description", "Only this session id."}}},
                   {"since",
                    {{"type", "string"},
                     {"description",
                      "Only messages at or after this date or time: YYYY-MM-DD[THH:MM[:SS]], UTC "
                      "unless it ends in Z or +HH:MM."}}},
                   {"limit",
                    {{"type", "integer"},
                     {"minimum", 1},
                     {"maximum", 50},
                     {"description", "At most this many hits (default 10)."}}}},
                  {"query"})}};
}

json show_tool_json() {
  return {
      {"name", "archive_show"},
      {"description",
       "Show an archived message in full, with the messages around it: give the SESSION and LINE "
       "of an archive_search hit "
       "(SESSION may be SESSION/agent-ID for a subagent's transcript). Use it to read a hit's "
       "whole tool output, prompt "
       "or answer before relying on it. Or give the HANDLE a capped tool output names (its "
       "preview says which lines were left out) with lines \"A:B\" or bytes \"A:B\", or a "
       "search for the lines of that output that hold some text."},
      {"inputSchema",
       schema({{"session",
                {{"type", "string"},
                 {"description",
                  "The session id as the hit cites it (SESSION or SESSION/agent-ID); SESSION:LINE "
                  "is accepted too."}}},
               {"line",
                {{"type", "integer"}, {"minimum", 1}, {"description", "The line the hit cites."}}},
               {"before",
                {{"type", "integer"},
                 {"minimum", 0},
                 {"maximum", 20},
                 {"description", "Also this many lines before it (default 0)."}}},
               {"after",
                {{"type", "integer"},
                 {"minimum", 0},
                 {"maximum", 20},
                 {"description", "Also this many lines after it (default 0)."}}},
               {"handle",
                {{"type", "string"},
                 {"description",
                  "The handle of a capped tool output (instead of session and line)."}}},
               {"lines",
                {{"type", "string"},
                 {"description",
                  "With handle: the lines A:B of the output (1-based, both included; A: to the "
                  "end)."}}},
               {"bytes",
                {{"type", "string"},
                 {"description",
                  "With handle: the bytes A:B of the output (from offset A to B, B excluded)."}}},
               {"search",
                {{"type", "string"},
                 {"description",
                  "With handle: the lines of the output (or of its lines A:B) that hold this "
                  "text, ignoring case."}}}},
              json::array())}};
}

mcp::ToolResult tool_error(const std::string& text) {
  return {text, true};
}

// A string argument: nullopt with `error` set when present and not a string.
std::optional<std::string> string_arg(const json& a, const char* key, std::string& error) {
  auto it = a.find(key);
  if (it == a.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    error = fmt::format("{} must be a string", key);
    return std::nullopt;
  }
  return it->get<std::string>();
}

std::optional<int64_t> int_arg(const json& a, const char* key, int64_t fallback, int64_t lo,
                               int64_t hi, std::string& error) {
  auto it = a.find(key);
  if (it == a.end() || it->is_null()) return fallback;
  // A float is taken when it is a whole number within int64's range (casting one outside it is
  // undefined).
  auto whole = [](double d) {
    return std::isfinite(d) && d >= -9.2e18 && d <= 9.2e18 && d == std::trunc(d);
  };
  if (!it->is_number_integer() && !(it->is_number_float() && whole(it->get<double>()))) {
    error = fmt::format("{} must be an integer", key);
    return std::nullopt;
  }
  int64_t v =
      it->is_number_integer() ? it->get<int64_t>() : static_cast<int64_t>(it->get<double>());
  if (v < lo || v > hi) {
    error = fmt::format("{} must be from {} to {}", key, lo, hi);
    return std::nullopt;
  }
  return v;
}

// What the answer says of the archive's index: one sentence, or "".
std::string index_note(const archive::IndexStatus& status) {
  if (!status.archived) return "Nothing is archived yet.";
  if (!status.caught_up && !status.progress.complete())
    return fmt::format(
        "The search index is being built ({} of {} sessions pending); results come from what is "
        "indexed so far.",
        status.progress.files_pending, status.progress.files);
  return status.note;
}

mcp::ToolResult search(archive::ArchiveRecall& recall, const json& a) {
  std::string error;
  auto query = string_arg(a, "query", error);
  auto project = string_arg(a, "project", error);
  auto session = string_arg(a, "session", error);
  auto since = string_arg(a, "since", error);
  auto limit = int_arg(a, "limit", 10, 1, 50, error);
  if (!error.empty()) return tool_error(error);
  if (store::SearchIndex::fts_query(*query).empty())
    return tool_error("query is empty: give the words to find");
  if (auto why = store::SearchIndex::query_too_long(*query); !why.empty()) return tool_error(why);
  store::SearchQuery q;
  q.words = *query;
  q.project = *project;
  q.session = *session;
  q.limit = static_cast<int>(*limit);
  if (!since->empty()) {
    auto ms = util::parse_iso8601_ms(*since);
    if (!ms)
      return tool_error(fmt::format(
          "since '{}' is not a date or time (YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM])", *since));
    q.since = util::format_iso8601_ms(*ms);
  }
  auto found = recall.search(q);
  if (!found) return tool_error(found.error().message);
  json hits = json::array();
  for (const auto& h : found->hits) {
    json j{{"cite", h.cite}, {"session_id", h.session_id}};
    if (!h.agent.empty()) j["agent"] = h.agent;
    j.update({{"line", h.line},
              {"timestamp", h.timestamp},
              {"kind", h.kind},
              {"project", h.project},
              {"snippet", h.snippet},
              {"resume", h.resume}});
    hits.push_back(std::move(j));
  }
  json out{{"hits", std::move(hits)}};
  if (const std::string note = index_note(recall.index_status()); !note.empty()) out["note"] = note;
  if (found->capped)
    out["more"] = fmt::format(
        "more than {} messages match; the newest {} were ranked: add words, session, project or "
        "since to narrow",
        store::SearchIndex::kMaxRanked, store::SearchIndex::kMaxRanked);
  out["next"] = found->hits.empty() ? "No matches: try other or fewer words."
                                    : "Open a hit in full with archive_show {\"session\": ..., "
                                      "\"line\": ...}; cite it as SESSION:LINE.";
  return {util::dump_json(out), false};
}

mcp::ToolResult show_output(archive::ArchiveRecall& recall, const json& a,
                            const std::string& handle) {
  std::string error;
  auto lines = string_arg(a, "lines", error);
  auto bytes = string_arg(a, "bytes", error);
  auto search = string_arg(a, "search", error);
  if (!error.empty()) return tool_error(error);
  if (!lines->empty() && !bytes->empty()) return tool_error("give lines or bytes, not both");
  archive::OutputRange range;
  if (!lines->empty() || !bytes->empty()) {
    auto parsed = archive::parse_output_range(bytes->empty() ? *lines : *bytes, !bytes->empty());
    if (!parsed) return tool_error(parsed.error().message);
    range = *parsed;
  }
  auto slice = recall.show_output(handle, range, *search);
  if (!slice) return tool_error(slice.error().message);
  const archive::OutputMeta& m = slice->meta;
  json out{{"handle", m.handle},   {"tool", m.tool_name},     {"session_id", m.session_id},
           {"project", m.project}, {"output_lines", m.lines}, {"output_bytes", m.bytes}};
  if (!search->empty()) {
    json matches = json::array();
    for (const auto& x : slice->matches) matches.push_back({{"line", x.line}, {"text", x.text}});
    out["matches"] = std::move(matches);
    if (slice->more_matches)
      out["more"] = fmt::format("more than {} lines match: give lines A:B to narrow",
                                archive::kMaxOutputMatches);
  } else if (range.bytes) {
    out.update(
        {{"bytes", fmt::format("{}:{}", slice->from_byte, slice->to_byte)}, {"text", slice->text}});
    if (slice->cut)
      out["next"] = fmt::format("the range goes on: bytes {}:{}", slice->to_byte,
                                range.to == 0 ? std::string() : std::to_string(range.to));
  } else {
    out.update({{"lines", fmt::format("{}:{}", slice->first_line, slice->last_line)},
                {"text", slice->text}});
    if (slice->cut)
      out["next"] = fmt::format("the range goes on: lines {}:{}", slice->last_line + 1,
                                range.to == 0 ? std::string() : std::to_string(range.to));
  }
  return {util::dump_json(out, -1, util::BadUtf8::replace), false};
}

mcp::ToolResult show(archive::ArchiveRecall& recall, const json& a) {
  std::string error;
  auto handle = string_arg(a, "handle", error);
  if (!error.empty()) return tool_error(error);
  if (!handle->empty()) return show_output(recall, a, *handle);
  auto session = string_arg(a, "session", error);
  auto before = int_arg(a, "before", 0, 0, 20, error);
  auto after = int_arg(a, "after", 0, 0, 20, error);
  auto line = int_arg(a, "line", 0, 1, INT64_MAX, error);
  if (!error.empty()) return tool_error(error);
  std::string ref_text = *session;
  int64_t at = *line;
  // SESSION:LINE as a hit cites it.
  if (auto colon = ref_text.rfind(':'); colon != std::string::npos) {
    const std::string tail = ref_text.substr(colon + 1);
    if (tail.empty() || tail.find_first_not_of("0123456789") != std::string::npos ||
        tail.size() > 15)
      return tool_error(fmt::format("session '{}' is not SESSION or SESSION:LINE", ref_text));
    if (at == 0) at = std::stoll(tail);
    ref_text.resize(colon);
  }
  if (ref_text.empty())
    return tool_error("give session and line (a hit), or handle (a capped output)");
  if (at < 1) return tool_error("line is required (the LINE of SESSION:LINE)");
  auto ref = archive::parse_session_ref(ref_text);
  if (!ref)
    return tool_error(fmt::format(
        "'{}' is not a session id (SESSION or SESSION/agent-ID, as a hit cites it)", ref_text));
  auto shown = recall.show(*ref, at, static_cast<int>(*before), static_cast<int>(*after));
  if (!shown) return tool_error(shown.error().message);
  json messages = json::array();
  const std::string prefix = ref->session_id + (ref->agent.empty() ? "" : "/" + ref->agent);
  for (const auto& m : shown->messages) {
    json j{{"cite", fmt::format("{}:{}", prefix, m.line)},
           {"line", m.line},
           {"kind", m.role.empty() ? "(no message text)" : m.role},
           {"timestamp", m.timestamp},
           {"text", m.text}};
    if (m.omitted_chars) j["omitted_chars"] = m.omitted_chars;
    messages.push_back(std::move(j));
  }
  json out{{"session_id", shown->session_id}};
  if (!shown->agent.empty()) out["agent"] = shown->agent;
  out.update(
      {{"project", shown->project}, {"resume", shown->resume}, {"messages", std::move(messages)}});
  return {util::dump_json(out), false};
}
}  // namespace

mcp::McpServer archive_server(archive::ArchiveRecall& recall, const std::string& version,
                              std::shared_ptr<const PinToolContext> pins) {
  mcp::ToolRegistry tools;
  auto add = [&](json t, mcp::ToolResult (*handler)(archive::ArchiveRecall&, const json&)) {
    tools.add({t.at("name").get<std::string>(), t.at("description").get<std::string>(),
               t.at("inputSchema"),
               [&recall, handler](const json& arguments) { return handler(recall, arguments); }});
  };
  add(search_tool_json(), search);
  add(show_tool_json(), show);
  if (pins) add_pin_tools(tools, std::move(pins));
  return mcp::McpServer(mcp::ServerInfo{kArchiveServer, version, kInstructions}, std::move(tools));
}

}  // namespace ctxkit::apps
