#include "apps/rollover_app.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/archive_tool.hpp"
#include "apps/cli.hpp"
#include "core/config.hpp"
#include "rollover/prepared_rollover.hpp"
#include "rollover/supervisor.hpp"
#include "util/json_io.hpp"
#include "util/process.hpp"

namespace ctxkit::apps {

namespace {
constexpr const char* kTool = "ctx-rollover";

// Runs the supervisor, telling the user what it does on stderr; the exit code is the last
// client's (1 when the first cannot start).
int supervise(const std::vector<std::string>& command, const core::Config& cfg, AppContext& ctx) {
  using Kind = rollover::SupervisorEvent::Kind;
  auto report = [&ctx](const rollover::SupervisorEvent& e) {
    switch (e.kind) {
      case Kind::NotRecorded:
        print_note(
            ctx.err, kTool,
            "warning: " + e.detail + " (a ready rollover is noticed within half a second instead)");
        break;
      case Kind::RolloverDropped:
        print_error(ctx.err, kTool,
                    fmt::format("the rollover to session {} cannot start, the current session "
                                "goes on: {}",
                                e.session, e.detail));
        break;
      case Kind::TerminalRestored:
        if (::isatty(1)) ctx.out << "\x1b[?25h" << std::flush;  // show the cursor again
        break;
      case Kind::Compacting:
        print_note(ctx.err, kTool,
                   "compacting session " + e.session +
                       (e.detail.empty() ? "" : " (focus: " + e.detail + ")"));
        break;
      case Kind::CompactFailed:
        print_error(ctx.err, kTool,
                    fmt::format("/compact of session {} failed ({}); resuming it as it is",
                                e.session, e.detail));
        break;
      case Kind::Resuming:
        print_note(ctx.err, kTool, "resuming session " + e.session);
        break;
      case Kind::Starting:
        print_note(ctx.err, kTool, "starting the new session " + e.session);
        break;
      case Kind::LeftUndone: {
        const std::string session = e.session.empty() ? "its session" : "session " + e.session;
        const std::string what =
            e.detail == "rollover"
                ? fmt::format("the rollover of {} undone: dropped (run /rollover again)", session)
            : e.detail == "compact"
                ? fmt::format(
                      "/compact of {} undone: dropped (type /compact in it, or a turn "
                      "that ends past [compact] at asks for it again)",
                      session)
                : fmt::format("/{} of {} undone: dropped (type /{} in it)", e.detail, session,
                              e.detail);
        print_note(ctx.err, kTool, "warning: a supervisor that is gone left " + what);
        break;
      }
    }
  };
  const rollover::SupervisorResult r = rollover::run_supervisor(command, cfg, ctx.env, report);
  if (r.spawn_error) {
    print_error(ctx.err, kTool, r.spawn_error->message);
    return r.last_status ? r.last_status : 1;
  }
  return r.last_status;
}
}  // namespace

int run_rollover(const std::vector<std::string>& args_in, AppContext& ctx) {
  // Everything after "--" is the supervised command, taken as it is.
  std::vector<std::string> args, command;
  bool after = false;
  for (const auto& a : args_in) {
    if (!after && a == "--") {
      after = true;
      continue;
    }
    (after ? command : args).push_back(a);
  }
  ProgramCli cli(kTool,
                 "Hands the work over to a fresh Claude Code session that starts with a handoff "
                 "summary and can search "
                 "the archived previous session.");
  auto app = cli.app();
  std::string summary_file, session, claude_bin;
  bool print = false, supervise_mode = false, json_out = false;
  app.add_option("--summary-file", summary_file, "the handoff summary (about 500 words at most)");
  app.add_option("--session", session,
                 "session id or transcript path (default: $CLAUDE_CODE_SESSION_ID)");
  app.add_option("--claude-bin", claude_bin,
                 "the Claude Code program (default: rollover.claude_bin)");
  app.add_flag("--print", print, "start the new session headless (claude -p)");
  app.add_flag("--supervise", supervise_mode,
               "run `-- claude [args…]` as a child and carry out its rollovers");
  app.add_flag("--json", json_out,
               "print what was prepared as one JSON object (inside Claude Code)");
  cli.add_show_config();
  cli.add_version();
  if (auto rc = cli.parse(args, ctx)) return *rc;
  core::Config cfg = core::load_config(ctx.env, {core::project_start_dir(ctx.env, "")});
  if (supervise_mode) {
    if (command.empty()) {
      return cli.error(ctx)(
          "--supervise needs a command: ctx-rollover --supervise -- claude [args…]");
    }
    return supervise(command, cfg, ctx);
  }
  const auto error = cli.error(ctx);
  if (!command.empty()) return error("a command after -- is only used with --supervise");
  if (summary_file.empty())
    return error("--summary-file is required (write the handoff summary to a file first)");

  rollover::RolloverRequest request;
  request.summary_file = summary_file;
  request.session = session;
  request.claude_bin = claude_bin;
  request.print = print;
  request.retrieval = [&ctx](const std::string& cwd, const std::string& parent_id) {
    return continuation_retrieval(archive_search_tool(ctx.env, cwd), parent_id);
  };
  auto prepared = rollover::prepare_rollover(request, cfg, ctx.env);
  if (!prepared) return error(prepared.error().message);
  const rollover::PreparedRollover& r = *prepared;
  if (r.summary.too_long())
    print_note(
        ctx.err, kTool,
        fmt::format("warning: the summary has {} words; about 500 is the aim", r.summary.words));

  const std::string command_line = rollover::start_command(r);
  if (json_out) {
    nlohmann::ordered_json j = {
        {"session_id", r.new_session_id},
        {"parent_session_id", r.parent_session_id},
        {"number", r.number},
        {"context_percent", r.context_percent ? nlohmann::ordered_json(*r.context_percent)
                                              : nlohmann::ordered_json(nullptr)},
        {"archive", r.archive.transcript.string()},
        {"prompt_file", r.prompt_file.string()},
        {"supervised", r.supervised},
        {"command", command_line}};
    ctx.out << util::dump_json(j) << '\n';
    if (r.inside || r.supervised) return 0;
  }
  if (r.supervised) {
    ctx.out << fmt::format(
        "Rollover prepared: session #{} ({}) starts with your handoff summary as soon as this turn "
        "ends. "
        "The previous session is archived and searchable.\n",
        r.number, r.new_session_id);
    return 0;
  }
  if (r.inside) {
    ctx.out << fmt::format(
        "Rollover prepared: session #{} ({}) with your handoff summary; the previous session is "
        "archived "
        "and searchable.\nStart it (after leaving this session) with:\n  {}\n",
        r.number, r.new_session_id, command_line);
    return 0;
  }
  // Outside Claude Code: become the new session, in the caller's directory.
  std::cout.flush();
  return error(util::exec_process(r.launch).message);
}

}  // namespace ctxkit::apps
