#include "report/state_events.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "archive/output_archive.hpp"
#include "context/context_meter.hpp"
#include "util/json_depth.hpp"
#include "util/json_io.hpp"
#include "util/one_line.hpp"
#include "util/time.hpp"

namespace ctxkit::report {
using json = nlohmann::json;

namespace {

bool is_handover(const std::string& reason) {
  return reason == "trim" || reason == "rollover";
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Event lineage_event(const store::SessionRecord& ended, const std::string& session,
                    const std::string& other, bool came_from) {
  Event e;
  e.kind = ended.end_reason;
  e.session = session;
  e.handover = true;
  e.at_ms = util::parse_iso8601_ms(ended.ended_at).value_or(0);
  if (ended.end_reason == "trim" && ended.tokens_saved && *ended.tokens_saved > 0)
    e.tokens_freed = *ended.tokens_saved;
  const std::string figure =
      ended.context_at_end ? fmt::format(" at {}%", *ended.context_at_end) : std::string();
  e.label = e.tokens_freed ? fmt::format("{} −{}", e.kind, context::short_tokens(*e.tokens_freed))
                           : e.kind;
  if (came_from)
    e.detail = fmt::format("{} of {}{}: this session continues it", e.kind, other, figure);
  else
    e.detail = fmt::format("{}{}: continued as {}", e.kind, figure, other.empty() ? "?" : other);
  if (e.tokens_freed) e.detail += fmt::format(", about {} tokens freed", *e.tokens_freed);
  return e;
}

Event workflow_event(const store::EventRow& row, const json& d, const std::string& session) {
  Event e;
  e.kind = "workflow";
  e.session = session;
  e.at_ms = row.at_ms;
  const std::string action = str(d, "action");
  e.label = action.empty() ? row.kind : fmt::format("{} {}", row.kind, action);
  std::string where;
  if (auto wf = str(d, "workflow"); !wf.empty()) where = wf;
  if (auto step = str(d, "step"); !step.empty()) where += (where.empty() ? "" : " ") + step;
  if (auto sub = str(d, "subStep"); !sub.empty()) where += "/" + sub;
  e.detail = fmt::format("workflow {}{}{}", e.label, where.empty() ? "" : " at " + where,
                         str(d, "by").empty() ? "" : " by " + str(d, "by"));
  if (auto p = d.find("percent"); p != d.end() && p->is_number())
    e.detail += fmt::format(" (context {}%)", p->get<double>());
  return e;
}

Event run_event(const store::EventRow& row, const json& d, const std::string& session) {
  Event e;
  e.kind = "run";
  e.session = session;
  e.at_ms = row.at_ms;
  e.label = row.kind;
  e.detail = fmt::format("ctx-run {}: {}", row.scope, row.kind);
  if (auto task = str(d, "task_id"); !task.empty()) e.detail += ", task " + task;
  return e;
}

int64_t num(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

// A tool output ctx-cap kept out of the window (the event ctx-cap records).
Event cap_event(const store::EventRow& row, const json& d, const std::string& session) {
  Event e;
  e.kind = "cap";
  e.session = session;
  e.at_ms = row.at_ms;
  const int64_t tokens = num(d, "tokens_kept_out");
  if (tokens > 0) e.tokens_freed = tokens;
  e.label = tokens > 0 ? fmt::format("cap −{}", context::short_tokens(tokens)) : "cap";
  const std::string tool = str(d, "tool").empty() ? std::string("a tool") : str(d, "tool");
  e.detail = fmt::format("{} output of {} characters capped to {}", tool, num(d, "chars"),
                         num(d, "kept_chars"));
  if (tokens > 0) e.detail += fmt::format(", about {} tokens kept out of the window", tokens);
  if (auto handle = str(d, "handle"); !handle.empty())
    e.detail += fmt::format("; the whole output: archive_show {}", handle);
  return e;
}

// What one compaction kept of the pins (and restored after it).
Event pins_event(const store::PinCheckRow& c, const std::string& session) {
  Event e;
  e.kind = "pins";
  e.session = session;
  e.at_ms = c.at_ms;
  e.label = fmt::format("pins {}/{}", c.kept, c.total);
  e.detail = fmt::format("{} compaction kept {} of {} pin{}", c.trigger.empty() ? "a" : c.trigger,
                         c.kept, c.total, c.total == 1 ? "" : "s");
  std::vector<std::string> dropped;
  if (util::json_depth(c.detail, 8) <= 8) {
    const json d = util::parse_json(c.detail);
    if (d.is_array())
      for (const auto& pin : d)
        if (pin.is_object() && pin.value("kept", true) == false && pin.contains("text") &&
            pin["text"].is_string())
          dropped.push_back(pin["text"].get<std::string>());
  }
  for (size_t i = 0; i < dropped.size() && i < 3; ++i)
    e.detail += fmt::format("{}\u201c{}\u201d", i == 0 ? "; dropped: " : ", ",
                            util::one_line(dropped[i], 80));
  if (dropped.size() > 3) e.detail += fmt::format(" and {} more", dropped.size() - 3);
  if (c.restored > 0)
    e.detail += fmt::format("; {} re-injected after it{}", c.restored,
                            c.restored_at_ms ? "" : " (on the next prompt)");
  return e;
}

}  // namespace

Result<std::vector<Event>> state_events(store::StateStore& store, const SessionPart& part,
                                        const std::optional<store::SessionRecord>& record,
                                        const std::vector<Event>& already,
                                        const StateEventsOptions& options) {
  std::vector<Event> out;
  const std::string& id = part.session_id;
  if (record && options.came_from && !record->parent_id.empty()) {
    auto parent = store.session(record->parent_id);
    if (!parent) return std::unexpected(parent.error());
    if (*parent && is_handover((*parent)->end_reason)) {
      const bool shown = std::any_of(already.begin(), already.end(), [&](const Event& e) {
        return e.kind == (*parent)->end_reason && e.line == 1;
      });
      if (!shown) {
        Event e = lineage_event(**parent, id, record->parent_id, true);
        if (!e.at_ms) e.at_ms = util::parse_iso8601_ms(record->started_at).value_or(0);
        out.push_back(std::move(e));
      }
    }
  }
  if (record && options.ended_by && is_handover(record->end_reason)) {
    auto kids = store.children(id);
    if (!kids) return std::unexpected(kids.error());
    out.push_back(lineage_event(*record, id, kids->empty() ? "" : kids->back().session_id, false));
  }
  if (part.start_ms == 0) return out;
  auto rows = store.events_between(part.start_ms - options.slack_ms, part.end_ms + options.slack_ms,
                                   100'000);
  if (!rows) return std::unexpected(rows.error());
  const std::string cwd = !part.cwd.empty() ? part.cwd : record ? record->cwd : std::string();
  for (const auto& row : *rows) {
    if (row.source == "cap") {
      if (row.scope != id || row.kind != "capped") continue;
    } else if (row.source != "workflow" && row.source != "run") {
      continue;
    }
    if (util::json_depth(row.data, 32) > 32) continue;
    json d = util::parse_json(row.data);
    if (d.is_discarded() || !d.is_object()) continue;
    if (row.source == "cap") {
      out.push_back(cap_event(row, d, id));
    } else if (row.source == "workflow") {
      const bool named = str(d, "session") == id || str(d, "newSession") == id;
      if (!named && (cwd.empty() || row.scope != cwd)) continue;
      out.push_back(workflow_event(row, d, id));
    } else if (str(d, "session_id") == id) {
      out.push_back(run_event(row, d, id));
    }
  }
  // What each compaction of the session kept of the pins.
  const std::string line = record && !record->line_id.empty() ? record->line_id : id;
  auto checks = store.pin_checks_of_line(line);
  if (!checks) return std::unexpected(checks.error());
  if (checks->empty() && line != id) {
    checks = store.pin_checks_of_line(id);
    if (!checks) return std::unexpected(checks.error());
  }
  for (const auto& c : *checks)
    if (c.session_id == id) out.push_back(pins_event(c, id));
  return out;
}

std::vector<Event> cap_events(const core::Locations& loc, const SessionPart& part,
                              const std::vector<Event>& already, int64_t slack_ms) {
  std::vector<Event> out;
  if (part.start_ms == 0) return out;
  for (const auto& c : archive::capped_output_events(loc, part.session_id)) {
    if (c.at_ms < part.start_ms - slack_ms || c.at_ms > part.end_ms + slack_ms) continue;
    const json d = util::parse_json(c.data);
    if (!d.is_object()) continue;
    store::EventRow row{c.at_ms, "cap", part.session_id, "capped", c.data};
    Event e = cap_event(row, d, part.session_id);
    const bool shown = std::any_of(already.begin(), already.end(), [&](const Event& a) {
      return a.kind == "cap" && a.at_ms == e.at_ms && a.detail == e.detail;
    });
    if (!shown) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace ctxkit::report
