#include "workflow/workflow_events.hpp"

#include <fmt/core.h>
#include <fstream>
#include <nlohmann/json.hpp>

#include "util/fs.hpp"
#include "util/time.hpp"

namespace ctxkit::workflow {
namespace fs = std::filesystem;

Result<void> append_event(const fs::path& file, const fs::path& worktree, const WorkflowEvent& e) {
  nlohmann::ordered_json j = {{"at", util::format_iso8601_ms(util::now_ms())}, {"worktree", worktree.string()}, {"kind", e.kind},
                              {"action", e.action}, {"workflow", e.workflow}, {"step", e.step}, {"subStep", e.sub_step},
                              {"task", e.task_id}, {"iteration", e.iteration}, {"by", e.by}};
  if (e.percent) j["percent"] = *e.percent;
  if (e.min_percent) j["minPercent"] = *e.min_percent;
  // A private file in a private folder (0700 whatever the umask), never through a link.
  if (auto made = util::make_private_dirs(file.parent_path()); !made) return std::unexpected(made.error());
  return util::append_private_line(file, j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

std::vector<RecordedEvent> read_events(const fs::path& file, const fs::path& worktree) {
  std::vector<RecordedEvent> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("worktree", "") != worktree.string()) continue;
    RecordedEvent r;
    r.worktree = j.value("worktree", "");
    r.at = j.value("at", "");
    r.event.kind = j.value("kind", "");
    r.event.action = j.value("action", "");
    r.event.workflow = j.value("workflow", "");
    r.event.step = j.value("step", "");
    r.event.sub_step = j.value("subStep", "");
    r.event.task_id = j.value("task", "");
    r.event.iteration = j.value("iteration", 0L);
    r.event.by = j.value("by", "");
    if (j.contains("percent") && j["percent"].is_number()) r.event.percent = j["percent"].get<double>();
    if (j.contains("minPercent") && j["minPercent"].is_number()) r.event.min_percent = j["minPercent"].get<double>();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace ctxkit::workflow
