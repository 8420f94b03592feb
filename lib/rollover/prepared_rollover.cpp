#include "rollover/prepared_rollover.hpp"

#include <fmt/core.h>

#include "archive/session_archiver.hpp"
#include "claude/claude_cli.hpp"
#include "claude/session_locator.hpp"
#include "claude/transcript_head.hpp"
#include "context/compaction_point.hpp"
#include "context/context_meter.hpp"
#include "core/supervision.hpp"
#include "store/state_access.hpp"
#include "store/state_store.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/paths.hpp"
#include "util/shell.hpp"
#include "util/time.hpp"
#include "util/uuid.hpp"

namespace ctxkit::rollover {
namespace fs = std::filesystem;

Result<PreparedRollover> prepare_rollover(const RolloverRequest& request, const core::Config& cfg,
                                          const util::Env& env) {
  // Everything that can fail is checked before anything is archived or recorded.
  auto summary = read_summary(request.summary_file);
  if (!summary) return std::unexpected(summary.error());
  const core::Locations loc = cfg.locations(env);
  auto transcript = claude::locate_session(
      request.session, env, loc, std::chrono::milliseconds(cfg.context.transcript_wait_ms));
  if (!transcript) return std::unexpected(transcript.error());
  const fs::path path = *transcript;
  auto head = claude::read_transcript_head(path);
  if (!head) return std::unexpected(head.error());
  if (!head->is_transcript) return std::unexpected(claude::not_a_transcript(path, *head));

  PreparedRollover r;
  r.summary = std::move(*summary);
  r.inside = env.get("CLAUDECODE") == std::optional<std::string>("1");
  const auto supervisor = core::supervisor_of(env);
  r.supervised = supervisor.has_value();
  r.bin = request.claude_bin.empty() ? cfg.rollover.claude_bin : request.claude_bin;
  const bool outside = !r.inside && !r.supervised;
  std::string program = r.bin;
  if (outside) {
    auto found = find_program(r.bin, env);
    if (!found) return std::unexpected(found.error());
    program = *found;
  }
  if (auto made = util::make_private_dirs(loc.rollovers_dir(), loc.state_dir); !made)
    return fail(fmt::format("state directory: {}", made.error().message));
  std::string note;
  std::optional<store::StateStore> store = store::open_state(loc, cfg, note);
  if (!store) return fail(note);

  r.parent_session_id = path.stem().string();
  const std::string project = path.parent_path().filename().string();
  r.context_percent = context::transcript_percent(
      path, cfg.context,
      context::client_compaction_settings(env, core::project_start_dir(env, "")));
  // The session's working directory (decoded from the transcript), for the new session and the
  // printed command. Outside Claude Code the new session starts where the caller is.
  r.cwd = head->cwd;
  std::error_code ec;
  if (outside) r.cwd = fs::current_path(ec).string();
  if (r.cwd.empty() || !fs::is_directory(r.cwd, ec)) r.cwd = fs::current_path(ec).string();

  r.new_session_id = util::random_uuid();
  auto parent_record = store->session(r.parent_session_id);
  r.number = parent_record && *parent_record ? (*parent_record)->number + 1 : 2;
  auto exe_dir = util::executable_dir();
  r.archive = archive::archive_location(loc, project, r.parent_session_id);
  ContinuationInfo info;
  info.number = r.number;
  info.previous_percent = r.context_percent;
  info.summary = r.summary.text;
  info.parent_session_id = r.parent_session_id;
  info.parent_transcript = path.string();
  info.archive = r.archive.transcript.string();
  info.search_command = exe_dir ? (*exe_dir / "ctx-search").string() : std::string("ctx-search");
  if (request.retrieval) info.retrieval = request.retrieval(r.cwd, r.parent_session_id);
  auto prompt = render_continuation(continuation_template(exe_dir), info);
  if (!prompt) return std::unexpected(prompt.error());
  // The prompt is one argument of the client, whoever starts it: it must pass whole.
  CTXKIT_TRY(check_prompt_fits(*prompt, request.summary_file));
  r.launch.argv =
      claude::launch_argv(program, cfg.rollover.claude_args, request.print || cfg.rollover.print,
                          r.new_session_id, *prompt);
  if (outside) {
    CTXKIT_TRY(util::check_exec_args(r.launch));
  }

  auto archived = archive::archive_session(path, loc, cfg.archive);
  if (!archived) return std::unexpected(archived.error());
  r.prompt_file = loc.rollovers_dir() / (r.new_session_id + ".md");
  CTXKIT_TRY(util::write_file_atomic(r.prompt_file, *prompt, 0600));

  const std::string now = util::format_iso8601_ms(util::now_ms());
  store::SessionRecord parent, child;
  parent.session_id = r.parent_session_id;
  parent.project = project;
  parent.transcript = path.string();
  parent.cwd = r.cwd;
  parent.started_at = head->first_timestamp;
  child.session_id = r.new_session_id;
  child.project = project;
  child.transcript = (path.parent_path() / (r.new_session_id + ".jsonl")).string();
  child.cwd = r.cwd;
  child.started_at = now;
  child.summary = r.summary.text;
  if (supervisor) {
    // Record the hand-over for the supervisor first, so that a failure records nothing (it takes
    // the place of one not carried out yet).
    if (auto p = store::hand_over(*store, loc,
                                  {supervisor->token, r.parent_session_id, r.new_session_id,
                                   r.prompt_file.string(), r.cwd, false, "rollover", ""});
        !p)
      return std::unexpected(p.error());
  }
  auto recorded = store->record_derivation(
      parent, child, "rollover",
      r.context_percent ? std::optional<int64_t>(*r.context_percent) : std::nullopt, std::nullopt,
      now);
  if (!recorded) {
    if (supervisor) (void)store->clear_pending_rollover(supervisor->token);
    return std::unexpected(recorded.error());
  }
  return r;
}

std::string start_command(const PreparedRollover& r) {
  return fmt::format("cd {} && {} --session-id {} \"$(cat {})\"", util::shell_quote(r.cwd),
                     util::shell_quote(r.bin), r.new_session_id,
                     util::shell_quote(r.prompt_file.string()));
}

}  // namespace ctxkit::rollover
