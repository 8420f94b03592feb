#include "apps/pin_tools.hpp"

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "context/pins.hpp"
#include "pins/pin_scope.hpp"
#include "store/state_access.hpp"
#include "util/json_io.hpp"
#include "util/time.hpp"

namespace ctxkit::apps {

namespace {
using json = nlohmann::json;

mcp::ToolResult tool_error(const std::string& text) {
  return {text, true};
}

std::string dump(const json& j) {
  return util::dump_json(j, -1, util::BadUtf8::replace);
}

// Opens the store and resolves the server's scope, or says why not.
template <class Body>
mcp::ToolResult with_scope(const PinToolContext& c, Body body) {
  std::string problem;
  auto store = store::open_state(c.locations, c.config, problem);
  if (!store) return tool_error(problem);
  auto scope = pins::resolve_pin_scope(*store, c.session_id, c.project_dir);
  if (!scope) return tool_error(scope.error().message);
  return body(*store, *scope);
}

mcp::ToolResult pin_fact(const PinToolContext& c, const json& a) {
  auto text = a.find("text");
  if (text == a.end() || !text->is_string()) return tool_error("text must be a string");
  bool project = false;
  if (auto p = a.find("project"); p != a.end() && !p->is_null()) {
    if (!p->is_boolean()) return tool_error("project must be true or false");
    project = p->get<bool>();
  }
  return with_scope(c, [&](store::StateStore& s, const pins::PinScope& scope) -> mcp::ToolResult {
    bool existed = false;
    auto id = pins::add_pin(s, scope, text->get<std::string>(), project, &existed);
    if (!id) return tool_error(id.error().message);
    // Else the next PreCompact reads the store.
    (void)pins::refresh_pin_view(s, c.locations, scope);
    auto n = s.count_pins(scope.line_id, scope.project);
    return {dump({{"id", *id},
                  {"scope", project ? "project" : "line"},
                  {"already_pinned", existed},
                  {"pins", n ? *n : 0},
                  {"next",
                   "It is given to the summarizer at every compaction and re-stated after one "
                   "that drops it; unpin it when it no longer holds."}}),
            false};
  });
}

mcp::ToolResult list(const PinToolContext& c, const json&) {
  return with_scope(c, [&](store::StateStore& s, const pins::PinScope& scope) -> mcp::ToolResult {
    auto listed = pins::list_pins(s, scope);
    if (!listed) return tool_error(listed.error().message);
    json arr = json::array();
    for (const auto& p : listed->pins)
      arr.push_back({{"id", p.id},
                     {"scope", p.scope_kind},
                     {"text", p.text},
                     {"created_at", util::format_iso8601_ms(p.created_at_ms)}});
    return {dump({{"pins", arr}, {"total", listed->total}}), false};
  });
}

mcp::ToolResult unpin(const PinToolContext& c, const json& a) {
  auto id = a.find("id");
  auto whole = [](const json& v) {
    if (v.is_number_integer()) return true;
    if (!v.is_number_float()) return false;
    const double d = v.get<double>();
    return std::isfinite(d) && std::fabs(d) < 9e15 && d == std::trunc(d);
  };
  if (id == a.end() || !whole(*id)) return tool_error("id must be an integer (list_pins)");
  const int64_t n =
      id->is_number_integer() ? id->get<int64_t>() : static_cast<int64_t>(id->get<double>());
  return with_scope(c, [&](store::StateStore& s, const pins::PinScope& scope) -> mcp::ToolResult {
    auto r = s.remove_pin(n, scope.line_id, scope.project);
    if (!r) return tool_error(r.error().message);
    if (!*r) return tool_error(fmt::format("no pin {} in this line of work or project", n));
    (void)pins::refresh_pin_view(s, c.locations, scope);
    return {dump({{"removed", n}}), false};
  });
}

json object_schema(json properties, json required) {
  return json{
      {"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}};
}

}  // namespace

void add_pin_tools(mcp::ToolRegistry& tools, std::shared_ptr<const PinToolContext> context) {
  tools.add(
      {"pin_fact",
       fmt::format(
           "Pin a fact that must survive compaction: a decision, a constraint, an id, a number "
           "the work depends on. Pinned facts are given to the summarizer at every compaction, "
           "checked in its summary, and re-stated to you after a compaction that dropped them. "
           "One short fact per pin (at most {} characters); pins belong to this line of work "
           "(trims and rollovers keep them), or with project: true to every session of the "
           "project.",
           context::kMaxPinChars),
       object_schema({{"text", {{"type", "string"}, {"description", "The fact, in one sentence."}}},
                      {"project",
                       {{"type", "boolean"},
                        {"description", "Pin it to the project instead of this line of work."}}}},
                     {"text"}),
       [context](const json& a) { return pin_fact(*context, a); }});
  tools.add({"list_pins", "List the pinned facts of this line of work and project, with their ids.",
             object_schema(json::object(), json::array()),
             [context](const json& a) { return list(*context, a); }});
  tools.add(
      {"unpin", "Remove a pinned fact that no longer holds (its id from list_pins).",
       object_schema({{"id", {{"type", "integer"}, {"description", "The pin's id."}}}}, {"id"}),
       [context](const json& a) { return unpin(*context, a); }});
}

}  // namespace ctxkit::apps
