#include "workflow/reanchor.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

#include "workflow/workflow_service.hpp"
#include "workflow/workflow_state.hpp"
#include "workflow/workflow_template.hpp"

namespace ctxkit::workflow {
namespace fs = std::filesystem;

namespace {
std::string render(const AnchorSection& s) {
  return (s.heading.empty() ? "" : s.heading + "\n") + s.body +
         (s.body.ends_with('\n') ? "" : "\n");
}
}  // namespace

std::string bounded_text(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  auto boundary = [&](size_t cut) {
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return cut;
  };
  // The note takes at most 40 bytes; a smaller room gets the text cut without one.
  if (max <= 40) return std::string(text.substr(0, boundary(max)));
  const size_t cut = boundary(max - 40);
  return std::string(text.substr(0, cut)) +
         fmt::format("\n[... cut: {} more characters]", text.size() - cut);
}

std::string assemble_anchor(std::string_view head, const std::vector<AnchorSection>& sections,
                            std::string_view tail, size_t max_bytes) {
  std::vector<std::string> parts;
  parts.reserve(sections.size());
  for (const auto& s : sections)
    if (!s.body.empty()) parts.push_back(render(s));
  const size_t fixed = head.size() + tail.size();
  const size_t all = std::accumulate(parts.begin(), parts.end(), fixed,
                                     [](size_t n, const std::string& p) { return n + p.size(); });
  if (all > max_bytes) {
    // Max-min fair shares of what head and tail leave: the shortest parts keep everything,
    // the longer ones split the rest evenly.
    size_t room = max_bytes > fixed ? max_bytes - fixed : 0;
    std::vector<size_t> order(parts.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return parts[a].size() < parts[b].size(); });
    std::vector<size_t> share(parts.size(), 0);
    size_t left = order.size();
    for (size_t i : order) {
      const size_t fair = left ? room / left : 0;
      share[i] = std::min(parts[i].size(), fair);
      room -= share[i];
      --left;
    }
    for (size_t i = 0; i < parts.size(); ++i) parts[i] = bounded_text(parts[i], share[i]);
  }
  std::string out(head);
  for (const auto& p : parts) out += p;
  out += tail;
  return out;
}

std::vector<AnchorSection> workflow_sections(const WorkflowMachine& m) {
  const auto& tmpl = m.workflow();
  std::string line = fmt::format("Current step: {} ({} of {})", m.step_id(),
                                 tmpl.step_index(m.step_id()) + 1, tmpl.steps.size());
  if (const auto* sub = m.current_loop_step()) {
    const auto* subs = tmpl.loop(m.step_id());
    size_t idx = 0;
    for (size_t i = 0; subs && i < subs->size(); ++i)
      if ((*subs)[i].id == sub->id) idx = i;
    line += fmt::format(", sub-step {} ({} of {})", sub->id, idx + 1, subs ? subs->size() : 0);
  }
  const auto task = m.task();
  if (task.is_object()) {
    const auto& tasks = m.state()["tasks"];
    size_t total = tasks.contains(m.step_id()) ? tasks[m.step_id()].size() : 0;
    line += fmt::format(", task {}: {} ({} of {})", task["id"].get<std::string>(),
                        task["title"].get<std::string>(), task["index"].get<long>() + 1, total);
  }
  if (auto it = m.ralph_iteration())
    line += fmt::format(", iteration {} of {}", *it, m.current_step().n);
  std::vector<AnchorSection> out;
  std::string position;
  if (auto s = m.summary()) position += fmt::format("Request: {}\n", *s);
  position += line;
  out.push_back({"", position});
  out.push_back({"Step instructions:", m.instructions()});
  if (auto last = m.latest_output())
    out.push_back({fmt::format("Latest handoff ({}):", last->first), last->second});
  return out;
}

std::string workflow_reanchor(const fs::path& worktree, std::string_view source, int max_tokens) {
  auto text = read_state_text(worktree);
  if (!text || !*text) return {};
  auto m = WorkflowMachine::from_state_text(**text, nullptr);
  if (!m || m->state_status() != "running") return {};
  const size_t budget = static_cast<size_t>(std::max(max_tokens, 100)) * 4;
  const std::string head = fmt::format(
      "Workflow \"{}\" is in progress in {} (context was {}ed; the workflow state is unchanged).\n",
      m->workflow().name, worktree.string(), source == "clear" ? "clear" : "compact");
  const std::string tail =
      "When this step is done, call workflow_advance with a summary of what was done (or run "
      "`ctx-workflow advance --output "
      "...`); workflow_status gives these instructions again.";
  return bounded_text(assemble_anchor(head, workflow_sections(*m), tail, budget), budget);
}

}  // namespace ctxkit::workflow
