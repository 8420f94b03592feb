#include "runner/workflow_driver.hpp"

#include <fmt/core.h>

#include <cstdint>
#include <utility>

#include "context/context_meter.hpp"
#include "runner/anchor.hpp"
#include "workflow/workflow_state.hpp"

namespace ctxkit::runner {

WorkflowDriver::WorkflowDriver(const RunOptions& o, const util::Env& env,
                               const core::Locations& loc,
                               std::vector<workflow::TaskSpec> loop_tasks)
    : opts_(o),
      loc_(loc),
      loop_tasks_(std::move(loop_tasks)),
      service_(make_options(o, env, loc, figure_)) {}

workflow::ServiceOptions WorkflowDriver::make_options(const RunOptions& o, const util::Env& env,
                                                      const core::Locations& loc,
                                                      std::shared_ptr<const GateSession> session) {
  workflow::ServiceOptions s;
  s.worktree = o.project;
  s.repo_root = o.project;
  s.workflow = o.workflow;
  s.env = env;
  s.context_percent = [session, env, loc] {
    return context::session_percent(session->id, env, loc, session->context);
  };
  return s;
}

Result<void> WorkflowDriver::ensure_started() {
  auto text = workflow::read_state_text(opts_.project);
  if (!text) return std::unexpected(text.error());
  if (*text) return {};
  workflow::StartRequest request;
  if (!opts_.summary.empty()) request.summary = opts_.summary;
  auto r = service_.start(request);
  if (!r) return fail(fmt::format("workflow_start: {}", workflow::error_text(r.error().message)));
  note_answer(*r);
  return {};
}

Result<void> WorkflowDriver::advance(const std::string& output, const std::string& session,
                                     const core::ContextConfig& context) {
  figure_->id = session;
  figure_->context = context;
  auto r = service_.advance(output);
  if (!r) return fail(fmt::format("workflow_advance: {}", workflow::error_text(r.error().message)));
  note_answer(*r);
  return {};
}

Result<Position> WorkflowDriver::position(const std::string& session, const util::Env&,
                                          const core::Config& cfg) {
  auto m = load();
  if (!m) return std::unexpected(m.error());
  Position p;
  if (m->state_status() != "running") {
    p.finished = true;
    p.workflow_failed = m->state_status() == "failed";
    return p;
  }
  // A loop reached without tasks gets the tasks file's tasks (else the workflow skips it).
  if (m->step_type() == workflow::StepType::Loop && !loop_tasks_.empty() &&
      !m->has_tasks(m->step_id())) {
    std::vector<workflow::TaskInput> list;
    for (const auto& t : loop_tasks_) {
      workflow::TaskInput item{t.id, t.title, std::nullopt};
      if (!t.description.empty()) item.description = t.description;
      list.push_back(std::move(item));
    }
    auto r = service_.set_tasks(m->step_id(), list);
    if (!r)
      return fail(fmt::format("workflow_set_tasks: {}", workflow::error_text(r.error().message)));
    auto again = load();
    if (!again) return std::unexpected(again.error());
    *m = std::move(*again);
  }
  // An action not handed out yet (after set_tasks, or a state another client left) is taken
  // here, as ctx-gate takes it: the service's gate, under the state's lock, from the state as
  // it is now; `session`'s figure decides a context_min_percent.
  figure_->id = session;
  figure_->context = cfg.context;
  auto taken = service_.take_gate("ctx-run");
  if (!taken) return std::unexpected(taken.error());
  if (!*taken) return fail("the workflow state disappeared");
  *m = *(*taken)->machine;
  const auto* sub = m->current_loop_step();
  const auto& d = (*taken)->gate;
  p.action = d.action != workflow::ContextAction::None ? d.action : handed_out_;
  handed_out_ = workflow::ContextAction::None;
  if (p.action == workflow::ContextAction::Compact) p.focus = workflow::compact_focus(*m);
  const auto task = m->current_task();
  p.task_key = m->step_id();
  if (task) p.task_key += "/" + task->id;
  p.key = p.task_key;
  if (sub) p.key += "/" + sub->id;
  if (auto it = m->ralph_iteration()) p.key += fmt::format("#{}", *it);
  p.title = task ? task->title : m->step_id();
  p.on_fail = opts_.on_fail;
  p.mode = opts_.mode;
  p.max_attempts = opts_.max_task_iterations;
  if (sub && !sub->on_fail.empty())
    if (auto f = parse_on_fail(sub->on_fail)) p.on_fail = *f;
  std::vector<AnchorSection> sections = workflow_sections(*m);
  p.workflow_text =
      assemble_anchor(fmt::format("Workflow \"{}\"\n", m->workflow().name), sections, "", SIZE_MAX);
  std::string where = fmt::format("Workflow \"{}\", step {}", m->workflow().name, m->step_id());
  if (sub) where += fmt::format(", sub-step {}", sub->id);
  if (task) where += fmt::format(", task {}: {}", task->id, task->title);
  if (auto it = m->ralph_iteration())
    where += fmt::format(", iteration {} of {}", *it, m->current_step().n);
  p.work = where + "\n\n" + m->instructions();
  return p;
}

Result<workflow::WorkflowMachine> WorkflowDriver::load() {
  auto text = workflow::read_state_text(opts_.project);
  if (!text) return std::unexpected(text.error());
  if (!*text) return fail("the workflow state disappeared");
  return workflow::WorkflowMachine::from_state_text(**text, nullptr);
}

void WorkflowDriver::note_answer(const workflow::WorkflowAnswer& answer) {
  if (answer.gate.action != workflow::ContextAction::None) handed_out_ = answer.gate.action;
}

}  // namespace ctxkit::runner
