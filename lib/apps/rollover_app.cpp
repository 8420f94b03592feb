#include "apps/rollover_app.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/archive_tool.hpp"
#include "apps/cli.hpp"
#include "archive/archive.hpp"
#include "archive/session_archiver.hpp"
#include "claude/claude_cli.hpp"
#include "claude/session_locator.hpp"
#include "claude/transcript_head.hpp"
#include "context/context_meter.hpp"
#include "core/config.hpp"
#include "core/locations.hpp"
#include "rollover/rollover.hpp"
#include "rollover/supervisor.hpp"
#include "store/state_access.hpp"
#include "store/state_store.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/paths.hpp"
#include "util/process.hpp"
#include "util/shell.hpp"
#include "util/time.hpp"
#include "util/uuid.hpp"

namespace ctxkit {
namespace fs = std::filesystem;

namespace {
constexpr const char* kTool = "ctx-rollover";

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
  CLI::App& app = cli.app();
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
  Config cfg = load_config(ctx.env, {project_start_dir(ctx.env, "")});
  if (supervise_mode) {
    if (command.empty()) {
      return cli.error(ctx)(
          "--supervise needs a command: ctx-rollover --supervise -- claude [args…]");
    }
    return run_supervisor(command, cfg, ctx.env, ctx.out, ctx.err);
  }
  const auto error = cli.error(ctx);
  if (!command.empty()) return error("a command after -- is only used with --supervise");
  if (summary_file.empty())
    return error("--summary-file is required (write the handoff summary to a file first)");

  // Everything that can fail is checked before anything is archived or recorded.
  auto summary = read_summary(summary_file);
  if (!summary) return error(summary.error().message);
  const Locations loc = cfg.locations(ctx.env);
  auto transcript = locate_session(session, ctx.env, loc);
  if (!transcript) return error(transcript.error().message);
  const fs::path path = *transcript;
  auto head = read_transcript_head(path);
  if (!head) return error(head.error().message);
  if (!head->is_transcript) return error(not_a_transcript(path, *head).message);
  const bool inside = ctx.env.get("CLAUDECODE") == std::optional<std::string>("1");
  const auto supervisor = ctx.env.get_nonempty("CTXKIT_SUPERVISOR");
  const std::string bin = claude_bin.empty() ? cfg.rollover.claude_bin : claude_bin;
  std::string program = bin;
  if (!inside && !supervisor) {
    auto found = find_program(bin, ctx.env);
    if (!found) return error(found.error().message);
    program = *found;
  }
  if (auto made = util::make_private_dirs(loc.rollovers_dir(), loc.state_dir); !made)
    return error(fmt::format("state directory: {}", made.error().message));
  std::string note;
  std::optional<StateStore> store = open_state(loc, cfg, note);
  if (!store) return error(note);

  const std::string parent_id = path.stem().string();
  const std::string project = path.parent_path().filename().string();
  const std::optional<int> pct = transcript_percent(
      path, cfg.context,
      read_compaction_settings(ctx.env,
                               client_settings_files(ctx.env, project_start_dir(ctx.env, ""))));
  // The session's working directory (decoded from the transcript), for the new session and the
  // printed command. Outside Claude Code the new session starts where the caller is.
  std::string cwd = head->cwd;
  std::error_code ec;
  if (!inside && !supervisor) cwd = fs::current_path(ec).string();
  if (cwd.empty() || !fs::is_directory(cwd, ec)) cwd = fs::current_path(ec).string();

  const std::string new_id = util::random_uuid();
  auto parent_record = store->session(parent_id);
  int64_t number = parent_record && *parent_record ? (*parent_record)->number + 1 : 2;
  auto exe_dir = util::executable_dir();
  const ArchiveLocation where = archive_location(loc, project, parent_id);
  ContinuationInfo info;
  info.number = number;
  info.previous_percent = pct;
  info.summary = summary->text;
  info.parent_session_id = parent_id;
  info.parent_transcript = path.string();
  info.archive = where.transcript.string();
  info.search_command = exe_dir ? (*exe_dir / "ctx-search").string() : std::string("ctx-search");
  info.retrieval = continuation_retrieval(archive_search_tool(ctx.env, cwd), parent_id);
  auto prompt = render_continuation(continuation_template(exe_dir), info);
  if (!prompt) return error(prompt.error().message);
  // The prompt is one argument of the client, whoever starts it: it must pass whole.
  if (auto fits = check_prompt_fits(*prompt, summary_file); !fits)
    return error(fits.error().message);
  util::SpawnSpec launch;
  launch.argv =
      launch_argv(program, cfg.rollover.claude_args, print || cfg.rollover.print, new_id, *prompt);
  if (!inside && !supervisor) {
    if (auto ok = util::check_exec_args(launch); !ok) return error(ok.error().message);
  }

  auto archived = archive_session(path, loc, cfg.archive);
  if (!archived) return error(archived.error().message);
  const fs::path prompt_file = loc.rollovers_dir() / (new_id + ".md");
  if (auto r = util::write_file_atomic(prompt_file, *prompt, 0600); !r)
    return error(r.error().message);

  const std::string now = util::format_iso8601_ms(util::now_ms());
  SessionRecord parent, child;
  parent.session_id = parent_id;
  parent.project = project;
  parent.transcript = path.string();
  parent.cwd = cwd;
  parent.started_at = head->first_timestamp;
  child.session_id = new_id;
  child.project = project;
  child.transcript = (path.parent_path() / (new_id + ".jsonl")).string();
  child.cwd = cwd;
  child.started_at = now;
  child.summary = summary->text;
  if (supervisor) {
    // Record the hand-over for the supervisor first, so that a failure records nothing.
    if (auto r = store->put_pending_rollover(
            {*supervisor, parent_id, new_id, prompt_file.string(), cwd, false, "rollover", ""});
        !r)
      return error(r.error().message);
  }
  auto recorded = store->record_derivation(parent, child, "rollover",
                                           pct ? std::optional<int64_t>(*pct) : std::nullopt,
                                           std::nullopt, now);
  if (!recorded) {
    if (supervisor) (void)store->clear_pending_rollover(*supervisor);
    return error(recorded.error().message);
  }
  if (summary->too_long())
    print_note(
        ctx.err, kTool,
        fmt::format("warning: the summary has {} words; about 500 is the aim", summary->words));

  const std::string command_line =
      fmt::format("cd {} && {} --session-id {} \"$(cat {})\"", util::shell_quote(cwd),
                  util::shell_quote(bin), new_id, util::shell_quote(prompt_file.string()));
  if (json_out) {
    nlohmann::ordered_json j = {
        {"session_id", new_id},
        {"parent_session_id", parent_id},
        {"number", number},
        {"context_percent", pct ? nlohmann::ordered_json(*pct) : nlohmann::ordered_json(nullptr)},
        {"archive", where.transcript.string()},
        {"prompt_file", prompt_file.string()},
        {"supervised", supervisor.has_value()},
        {"command", command_line}};
    ctx.out << j.dump() << '\n';
    if (inside || supervisor) return 0;
  }
  if (supervisor) {
    ctx.out << fmt::format(
        "Rollover prepared: session #{} ({}) starts with your handoff summary as soon as this turn "
        "ends. "
        "The previous session is archived and searchable.\n",
        number, new_id);
    return 0;
  }
  if (inside) {
    ctx.out << fmt::format(
        "Rollover prepared: session #{} ({}) with your handoff summary; the previous session is "
        "archived "
        "and searchable.\nStart it (after leaving this session) with:\n  {}\n",
        number, new_id, command_line);
    return 0;
  }
  // Outside Claude Code: become the new session, in the caller's directory.
  std::cout.flush();
  return error(util::exec_process(launch).message);
}

}  // namespace ctxkit
