#include "apps/gate_app.hpp"

#include <fmt/core.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/archive_tool.hpp"
#include "apps/cli.hpp"
#include "apps/hook_input.hpp"
#include "apps/workflow_sink.hpp"
#include "context/context_meter.hpp"
#include "core/config.hpp"
#include "core/hook_stamp.hpp"
#include "core/locations.hpp"
#include "util/json_io.hpp"
#include "util/one_line.hpp"
#include "workflow/reanchor.hpp"
#include "workflow/step_gate.hpp"
#include "workflow/workflow_service.hpp"
#include "workflow/workflow_state.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {
constexpr const char* kTool = "ctx-gate";
}  // namespace

int run_gate(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(kTool,
                 "The pre-step context gate: what must happen before the next workflow step "
                 "(nothing, /compact or /clear).");
  auto app = cli.app();
  std::string worktree, session;
  bool json_out = false, hook = false;
  int max_tokens = 2000;
  app.add_option("--worktree", worktree,
                 "the worktree holding workflow-state.json (default: $CLAUDE_PROJECT_DIR, the "
                 "payload's cwd, else .)");
  app.add_option("--session", session,
                 "the session whose context counts for context_min_percent (default: "
                 "$CLAUDE_CODE_SESSION_ID)");
  app.add_flag("--json", json_out, "print the answer as JSON");
  app.add_flag("--hook", hook, "run as the SessionStart hook (payload on stdin)");
  app.add_option("--max-tokens", max_tokens, "the re-anchor's size limit in tokens (hook mode)")
      .range(100, 100000);
  cli.add_version();
  if (auto rc = cli.parse(args, ctx)) return *rc;

  std::optional<claude::HookPayload> payload;
  if (hook) {
    payload = read_hook_payload(ctx, kTool);
    if (!payload) return exit_code(fail_open_code(kTool));  // the note is printed
  } else if (worktree.empty()) {
    worktree = ctx.env.get_nonempty("CLAUDE_PROJECT_DIR").value_or(fs::current_path().string());
  }
  // Loaded once, for both modes.
  const core::Config cfg = core::load_config(
      ctx.env,
      {core::project_start_dir(ctx.env, hook ? payload->cwd : fs::absolute(worktree).string())});

  if (hook) {
    record_hook_run(cfg.locations(ctx.env), kTool);
    if (payload->source != "clear" && payload->source != "compact") return 0;
    if (worktree.empty())
      worktree = ctx.env.get_nonempty("CLAUDE_PROJECT_DIR").value_or(payload->cwd);
    if (worktree.empty()) return 0;
    // The action the step asked for happened in this session: the workflow service marks it (if
    // it was done before anyone asked) and records the confirmation, under the state's lock.
    workflow::ServiceOptions o;
    o.worktree = worktree;
    o.env = ctx.env;
    o.on_event = workflow_event_sink(cfg, ctx.env, fs::absolute(worktree), ctx.err, kTool);
    workflow::WorkflowService service(std::move(o));
    const auto kind = payload->source == "clear" ? workflow::ContextAction::Clear
                                                 : workflow::ContextAction::Compact;
    auto confirmed = service.confirm(kind, "session-start:" + payload->session_id);
    if (!confirmed) {
      print_note(ctx.err, kTool, "note: " + confirmed.error().message);
      return 0;
    }
    if (!*confirmed || (*confirmed)->machine->state_status() != "running") return 0;
    if ((*confirmed)->unsaved) print_note(ctx.err, kTool, "note: " + *(*confirmed)->unsaved);
    std::string text =
        workflow::workflow_reanchor(fs::absolute(worktree), payload->source, max_tokens);
    if (text.empty()) return 0;
    // What the context lost is searchable: say with which tool, when the session has it.
    if (const std::string tool = archive_search_tool(ctx.env, payload->cwd); !tool.empty())
      text += "\n\n" + (payload->source == "compact"
                            ? searchable_after_compaction(tool, payload->session_id)
                            : searchable_after_clear(tool));
    ojson out = {
        {"hookSpecificOutput", {{"hookEventName", "SessionStart"}, {"additionalContext", text}}}};
    ctx.out << util::dump_json(out, -1, util::BadUtf8::replace) << '\n';
    return 0;
  }

  const fs::path wt = fs::absolute(worktree);
  const auto error = cli.error(ctx);
  const core::Locations loc = cfg.locations(ctx.env);
  if (session.empty()) session = ctx.env.get_nonempty("CLAUDE_CODE_SESSION_ID").value_or("");
  workflow::ServiceOptions o;
  o.worktree = wt;
  o.env = ctx.env;
  o.context_percent = [&] { return context::session_percent(session, ctx.env, loc, cfg.context); };
  o.on_event = workflow_event_sink(cfg, ctx.env, wt, ctx.err, kTool);
  workflow::WorkflowService service(std::move(o));
  auto taken = service.take_gate(kTool);
  if (!taken) return error(taken.error().message);
  ojson answer = {{"action", "none"}};
  if (*taken && (*taken)->machine->state_status() == "running") {
    const auto& m = *(*taken)->machine;
    const auto& d = (*taken)->gate;
    const auto* sub = m.current_loop_step();
    answer["step"] = m.step_id();
    if (sub) answer["subStep"] = sub->id;
    if (m.task().is_object()) answer["task"] = m.task()["id"];
    if (auto it = m.ralph_iteration()) answer["iteration"] = *it;
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
  if (json_out)
    ctx.out << util::dump_json(answer, -1, util::BadUtf8::replace) << '\n';
  else if (answer.contains("command"))
    ctx.out << util::one_line(answer["command"].get<std::string>(), SIZE_MAX)
            << '\n';  // the focus is the template's text
  return 0;
}

}  // namespace ctxkit::apps
