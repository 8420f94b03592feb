#include "workflow/step_gate.hpp"

#include <fmt/core.h>

#include "workflow/js_compat.hpp"

namespace ctxkit::workflow {
namespace {
std::string expand_task(const WorkflowMachine& m, const std::string& text) {
  const auto task = m.task();
  if (!task.is_object()) return text;
  std::string out = js::replace_all(text, "{task.id}", task["id"].get<std::string>());
  return js::replace_all(out, "{task.title}", task["title"].get<std::string>());
}

std::string first_line(const std::string& text) {
  const auto start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return {};
  const auto end = text.find('\n', start);
  std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t'))
    line.pop_back();
  return line;
}
}  // namespace

std::string command_of(ContextAction action) {
  switch (action) {
    case ContextAction::Compact:
      return "/compact";
    case ContextAction::Clear:
      return "/clear";
    case ContextAction::None:
      break;
  }
  return {};
}

std::string compact_focus(const WorkflowMachine& m) {
  const auto* sub = m.current_loop_step();
  const auto& step = m.current_step();
  if (sub && sub->compact_focus) return expand_task(m, *sub->compact_focus);
  if (step.compact_focus) return expand_task(m, *step.compact_focus);
  std::string where = step.id;
  if (sub) where += " / " + sub->id;
  const auto task = m.task();
  if (task.is_object())
    where += fmt::format(" (task {}: {})", task["id"].get<std::string>(),
                         task["title"].get<std::string>());
  if (auto it = m.ralph_iteration(); it && step.n > 1)
    where += fmt::format(" (iteration {} of {})", *it, step.n);
  const std::string raw = sub ? expand_task(m, sub->instructions) : step.instructions;
  const std::string line = first_line(raw);
  return line.empty() ? fmt::format("Next workflow step: {}", where)
                      : fmt::format("Next workflow step: {} - {}", where, line);
}

GateDecision decide_gate(const WorkflowMachine& m, std::optional<double> context_percent) {
  GateDecision d;
  const ContextAction a = m.pending_action();
  if (a == ContextAction::None) return d;
  const auto* sub = m.current_loop_step();
  if (sub && sub->context_min_percent)
    d.min_percent = sub->context_min_percent;
  else if (m.current_step().context_min_percent)
    d.min_percent = m.current_step().context_min_percent;
  d.percent = context_percent;
  if (d.min_percent && context_percent && *context_percent < *d.min_percent) {
    d.skipped = a;
    return d;
  }
  d.action = a;
  if (a == ContextAction::Compact) d.focus = compact_focus(m);
  return d;
}

bool gate_needs_percent(const WorkflowMachine& machine) {
  const auto* sub = machine.current_loop_step();
  return (sub && sub->context_min_percent) || machine.current_step().context_min_percent;
}

}  // namespace ctxkit::workflow
