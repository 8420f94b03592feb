#include "pins/pin_scope.hpp"

#include <optional>

#include "context/pins.hpp"
#include "core/project_folder.hpp"
#include "util/time.hpp"

namespace ctxkit::pins {

Result<PinScope> resolve_pin_scope(store::StateStore& store, const std::string& session_id,
                                   const std::string& project_dir) {
  PinScope s;
  s.session_id = session_id;
  if (!session_id.empty()) {
    auto rec = store.session(session_id);
    if (!rec) return std::unexpected(rec.error());
    if (*rec) {
      s.line_id = (*rec)->line_id.empty() ? session_id : (*rec)->line_id;
      s.project = (*rec)->project;
      s.recorded = true;
    } else {
      s.line_id = session_id;
    }
  }
  if (s.project.empty() && !project_dir.empty()) s.project = core::project_folder_name(project_dir);
  return s;
}

Result<int64_t> add_pin(store::StateStore& store, const PinScope& scope, const std::string& text,
                        bool project, bool* existed) {
  auto normal = context::normalize_pin(text);
  if (!normal) return std::unexpected(normal.error());
  store::PinRow row;
  row.scope_kind = project ? "project" : "line";
  row.scope = project ? scope.project : scope.line_id;
  if (row.scope.empty())
    return fail(project ? "no project: run it in the project's folder"
                        : "no session: run it inside a Claude Code session, give --session, or "
                          "pin to the project with --project",
                Error::Kind::Invalid);
  row.text = *normal;
  row.created_at_ms = util::now_ms();
  row.session_id = scope.session_id;
  return store.add_pin(row, context::kMaxPinsPerScope, existed);
}

Result<PinList> list_pins(store::StateStore& store, const PinScope& scope) {
  PinList out;
  auto rows = store.pins(scope.line_id, scope.project, context::kMaxInjectedPins);
  if (!rows) return std::unexpected(rows.error());
  out.pins = std::move(*rows);
  auto n = store.count_pins(scope.line_id, scope.project);
  if (!n) return std::unexpected(n.error());
  out.total = *n;
  return out;
}

store::PinView pin_view_of(const PinScope& scope, const PinList& list) {
  store::PinView v;
  v.recorded = scope.recorded;
  v.project = scope.recorded ? std::string() : scope.project;
  v.total = list.total;
  v.texts.reserve(list.pins.size());
  for (const auto& pin : list.pins) v.texts.push_back(pin.text);
  return v;
}

Result<PinList> list_pins_writing_view(store::StateStore& store, const core::Locations& loc,
                                       const PinScope& scope, std::string& note) {
  std::optional<PinList> list;
  auto r =
      store::PinViews(loc.state_db()).refresh(scope.session_id, [&]() -> Result<store::PinView> {
        auto read = list_pins(store, scope);
        if (!read) return std::unexpected(read.error());
        list = std::move(*read);
        return pin_view_of(scope, *list);
      });
  if (!r) note = r.error().message;
  if (list) return std::move(*list);
  return list_pins(store, scope);  // the lock held elsewhere: read without writing the view
}

std::string refresh_pin_view(store::StateStore& store, const core::Locations& loc,
                             const PinScope& scope) {
  if (!store::PinViews::usable_id(scope.session_id)) return {};
  std::string note;
  if (auto list = list_pins_writing_view(store, loc, scope, note); !list)
    return list.error().message;
  return note;
}

}  // namespace ctxkit::pins
