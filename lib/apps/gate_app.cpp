#include "apps/gate_app.hpp"

#include <fmt/core.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/cli.hpp"
#include "apps/hook_input.hpp"
#include "claude/session_locator.hpp"
#include "context/context_meter.hpp"
#include "core/config.hpp"
#include "core/hook_stamp.hpp"
#include "core/locations.hpp"
#include "workflow/step_gate.hpp"
#include "workflow/workflow_events.hpp"
#include "workflow/workflow_service.hpp"
#include "workflow/workflow_state.hpp"

namespace ctxkit {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
constexpr const char* kTool = "ctx-gate";

Result<std::optional<workflow::WorkflowMachine>> load_machine(const fs::path& worktree) {
  auto text = workflow::read_state_text(worktree);
  if (!text) return std::unexpected(text.error());
  if (!*text) return std::optional<workflow::WorkflowMachine>();
  auto m = workflow::WorkflowMachine::from_state_text(**text, nullptr);
  if (!m) return fail(fmt::format("{}: {}", workflow::state_path(worktree).string(), m.error().message));
  return std::optional<workflow::WorkflowMachine>(std::move(*m));
}

std::optional<double> session_percent(const std::string& session, const util::Env& env, const Config& cfg,
                                      const Locations& loc) {
  if (session.empty()) return std::nullopt;
  auto transcript = locate_session(session, env, loc);
  if (!transcript) return std::nullopt;
  auto p = transcript_percent(*transcript, cfg.context);
  if (!p) return std::nullopt;
  return static_cast<double>(*p);
}

// Cuts `text` to at most `max` bytes on a UTF-8 boundary, marking the cut.
std::string bounded(const std::string& text, size_t max) {
  if (text.size() <= max) return text;
  size_t cut = max > 40 ? max - 40 : max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + fmt::format("\n[... cut: {} more characters]", text.size() - cut);
}

std::string position_line(const workflow::WorkflowMachine& m) {
  const auto& tmpl = m.workflow();
  std::string line = fmt::format("Current step: {} ({} of {})", m.step_id(), tmpl.step_index(m.step_id()) + 1, tmpl.steps.size());
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
    line += fmt::format(", task {}: {} ({} of {})", task["id"].get<std::string>(), task["title"].get<std::string>(),
                        task["index"].get<long>() + 1, total);
  }
  if (auto it = m.ralph_iteration()) line += fmt::format(", iteration {} of {}", *it, m.current_step().n);
  return line;
}
}  // namespace

std::string workflow_reanchor(const std::string& worktree, const std::string& source, int max_tokens) {
  auto loaded = load_machine(worktree);
  if (!loaded || !*loaded) return {};
  const auto& m = **loaded;
  if (m.state_status() != "running") return {};
  const size_t budget = static_cast<size_t>(std::max(max_tokens, 100)) * 4;
  std::string head = fmt::format("Workflow \"{}\" is in progress in {} (context was {}ed; the workflow state is unchanged).\n",
                                 m.workflow().name, worktree, source == "clear" ? "clear" : "compact");
  if (auto s = m.summary()) head += fmt::format("Request: {}\n", *s);
  head += position_line(m) + "\n";
  const std::string tail =
      "When this step is done, call workflow_advance with a summary of what was done (or run `ctx-workflow advance --output "
      "...`); workflow_status gives these instructions again.";
  std::string handoff;
  if (auto last = m.latest_output()) handoff = fmt::format("Latest handoff ({}):\n{}\n", last->first, last->second);
  std::string instructions = fmt::format("Step instructions:\n{}\n", m.instructions());
  // The instructions get two thirds of what is left, the handoff the rest.
  const size_t fixed = head.size() + tail.size() + 2;
  const size_t left = budget > fixed ? budget - fixed : 0;
  const size_t handoff_max = handoff.empty() ? 0 : std::max<size_t>(left / 3, left > instructions.size() ? left - instructions.size() : 0);
  handoff = bounded(handoff, handoff_max);
  instructions = bounded(instructions, left > handoff.size() ? left - handoff.size() : 0);
  return bounded(head + instructions + handoff + tail, budget);
}

int run_gate(const std::vector<std::string>& args, AppContext& ctx) {
  CLI::App app{"The pre-step context gate: what must happen before the next workflow step (nothing, /compact or /clear)."};
  app.name(kTool);
  std::string worktree, session;
  bool json_out = false, hook = false, show_version = false;
  int max_tokens = 2000;
  app.add_option("--worktree", worktree, "the worktree holding workflow-state.json (default: $CLAUDE_PROJECT_DIR, the payload's cwd, else .)");
  app.add_option("--session", session, "the session whose context counts for context_min_percent (default: $CLAUDE_CODE_SESSION_ID)");
  app.add_flag("--json", json_out, "print the answer as JSON");
  app.add_flag("--hook", hook, "run as the SessionStart hook (payload on stdin)");
  app.add_option("--max-tokens", max_tokens, "the re-anchor's size limit in tokens (hook mode)")->check(CLI::Range(100, 100000));
  app.add_flag("--version", show_version, "print the version");
  if (auto rc = parse_cli(app, args, ctx, kTool)) return *rc;
  if (show_version) {
    ctx.out << kTool << ' ' << version() << '\n';
    return 0;
  }

  if (hook) {
    auto payload = read_hook_payload(ctx, kTool);
    if (!payload) return 0;  // fail open: the note is printed
    record_hook_run(load_config(ctx.env, {project_start_dir(ctx.env, payload->cwd)}).locations(ctx.env), kTool);
    if (payload->source != "clear" && payload->source != "compact") return 0;
    if (worktree.empty()) worktree = ctx.env.get_nonempty("CLAUDE_PROJECT_DIR").value_or(payload->cwd);
    if (worktree.empty()) return 0;
    auto loaded = load_machine(worktree);
    if (!loaded) {
      print_note(ctx.err, kTool, "note: " + std::string(loaded.error().message));
      return 0;
    }
    if (!*loaded || (*loaded)->state_status() != "running") return 0;
    auto& m = **loaded;
    const auto kind = payload->source == "clear" ? workflow::ContextAction::Clear : workflow::ContextAction::Compact;
    const Config cfg = load_config(ctx.env, {project_start_dir(ctx.env, payload->cwd)});
    if (m.declared_action() == kind) {
      // The action the step asked for happened in this session: mark it (if it was done before
      // anyone asked) and record the confirmation.
      if (!m.action_executed()) {
        m.mark_action_executed();
        if (auto w = workflow::save_state(worktree, m); !w) print_note(ctx.err, kTool, "note: " + std::string(w.error().message));
      }
      workflow::WorkflowEvent e;
      e.kind = "confirmed";
      e.action = workflow::to_string(kind);
      e.workflow = m.workflow().name;
      e.step = m.step_id();
      if (const auto* sub = m.current_loop_step()) e.sub_step = sub->id;
      if (m.task().is_object()) e.task_id = m.task()["id"].get<std::string>();
      e.iteration = m.ralph_iteration().value_or(0);
      e.by = "session-start:" + payload->session_id;
      if (auto r = workflow::append_event(cfg.locations(ctx.env).workflow_events(), fs::absolute(worktree), e); !r)
        print_note(ctx.err, kTool, "note: " + std::string(r.error().message));
    }
    const std::string text = workflow_reanchor(fs::absolute(worktree).string(), payload->source, max_tokens);
    if (text.empty()) return 0;
    ojson out = {{"hookSpecificOutput", {{"hookEventName", "SessionStart"}, {"additionalContext", text}}}};
    ctx.out << out.dump(-1, ' ', false, ojson::error_handler_t::replace) << '\n';
    return 0;
  }

  if (worktree.empty()) worktree = ctx.env.get_nonempty("CLAUDE_PROJECT_DIR").value_or(fs::current_path().string());
  const fs::path wt = fs::absolute(worktree);
  auto error = [&](const std::string& what) {
    print_error(ctx.err, kTool, what);
    return 1;
  };
  auto loaded = load_machine(wt);
  if (!loaded) return error(loaded.error().message);
  ojson answer = {{"action", "none"}};
  if (*loaded && (*loaded)->state_status() == "running") {
    auto& m = **loaded;
    const Config cfg = load_config(ctx.env, {project_start_dir(ctx.env, wt.string())});
    const Locations loc = cfg.locations(ctx.env);
    if (session.empty()) session = ctx.env.get_nonempty("CLAUDE_CODE_SESSION_ID").value_or("");
    std::optional<double> percent;
    const auto* sub = m.current_loop_step();
    if ((sub && sub->context_min_percent) || m.current_step().context_min_percent) percent = session_percent(session, ctx.env, cfg, loc);
    const auto d = workflow::decide_gate(m, percent);
    answer["step"] = m.step_id();
    if (sub) answer["subStep"] = sub->id;
    if (m.task().is_object()) answer["task"] = m.task()["id"];
    if (auto it = m.ralph_iteration()) answer["iteration"] = *it;
    if (d.action != workflow::ContextAction::None || d.skipped != workflow::ContextAction::None) {
      m.mark_action_executed();
      if (auto w = workflow::save_state(wt, m); !w) return error(w.error().message);
      if (auto r = workflow::append_event(loc.workflow_events(), wt, workflow::event_for(m, d, "ctx-gate")); !r)
        print_note(ctx.err, kTool, "note: " + std::string(r.error().message));
    }
    if (d.action != workflow::ContextAction::None) {
      answer["action"] = workflow::to_string(d.action);
      std::string command = workflow::command_of(d.action);
      if (d.action == workflow::ContextAction::Compact) {
        answer["focus"] = d.focus;
        command += " " + d.focus;
      }
      answer["command"] = command;
    } else if (d.skipped != workflow::ContextAction::None) {
      answer["skipped"] = workflow::to_string(d.skipped);
      if (d.percent) answer["percent"] = *d.percent;
      if (d.min_percent) answer["minPercent"] = *d.min_percent;
    }
  }
  if (json_out) ctx.out << answer.dump(-1, ' ', false, ojson::error_handler_t::replace) << '\n';
  else if (answer.contains("command")) ctx.out << answer["command"].get<std::string>() << '\n';
  return 0;
}

}  // namespace ctxkit
