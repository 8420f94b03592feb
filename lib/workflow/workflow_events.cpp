#include "workflow/workflow_events.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "store/state_store.hpp"
#include "util/json_io.hpp"
#include "util/time.hpp"

namespace ctxkit::workflow {
namespace fs = std::filesystem;

Result<void> append_event(store::StateStore& store, const fs::path& worktree,
                          const WorkflowEvent& e) {
  const int64_t now = util::now_ms();
  nlohmann::ordered_json j = {{"at", util::format_iso8601_ms(now)},
                              {"worktree", worktree.string()},
                              {"kind", e.kind},
                              {"action", e.action},
                              {"workflow", e.workflow},
                              {"step", e.step},
                              {"subStep", e.sub_step},
                              {"task", e.task_id},
                              {"iteration", e.iteration},
                              {"by", e.by}};
  if (e.percent) j["percent"] = *e.percent;
  if (e.min_percent) j["minPercent"] = *e.min_percent;
  return store.append_event(
      {now, "workflow", worktree.string(), e.kind, util::dump_json(j, -1, util::BadUtf8::replace)});
}

Result<void> append_event(const fs::path& state_db, int busy_timeout_ms, const fs::path& worktree,
                          const WorkflowEvent& e) {
  // The state database: a private file in a private folder, never through a link.
  auto store = store::StateStore::open(state_db, busy_timeout_ms);
  if (!store) return std::unexpected(store.error());
  return append_event(*store, worktree, e);
}

std::vector<RecordedEvent> read_events(const fs::path& state_db, int busy_timeout_ms,
                                       const fs::path& worktree) {
  std::vector<RecordedEvent> out;
  std::error_code ec;
  if (!fs::exists(state_db, ec)) return out;
  auto store = store::StateStore::open(state_db, busy_timeout_ms);
  if (!store) return out;
  auto rows = store->events("workflow", worktree.string());
  if (!rows) return out;
  for (const auto& row : *rows) {
    auto j = util::parse_json(row.data);
    if (j.is_discarded() || !j.is_object()) continue;
    RecordedEvent r;
    r.worktree = row.scope;
    r.at = j.value("at", "");
    r.event.kind = j.value("kind", "");
    r.event.action = j.value("action", "");
    r.event.workflow = j.value("workflow", "");
    r.event.step = j.value("step", "");
    r.event.sub_step = j.value("subStep", "");
    r.event.task_id = j.value("task", "");
    r.event.iteration = j.value("iteration", 0L);
    r.event.by = j.value("by", "");
    if (j.contains("percent") && j["percent"].is_number())
      r.event.percent = j["percent"].get<double>();
    if (j.contains("minPercent") && j["minPercent"].is_number())
      r.event.min_percent = j["minPercent"].get<double>();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace ctxkit::workflow
