#include "apps/session_hook_app.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <functional>

#include "apps/archive_tool.hpp"
#include "apps/cli.hpp"
#include "apps/compact_trigger.hpp"
#include "apps/hook_input.hpp"
#include "apps/pins_app.hpp"
#include "archive/archive.hpp"
#include "archive/session_archiver.hpp"
#include "claude/hook_response.hpp"
#include "context/context_meter.hpp"
#include "core/config.hpp"
#include "core/hook_stamp.hpp"
#include "core/locations.hpp"
#include "rollover/rollover.hpp"
#include "rollover/supervisor.hpp"
#include "store/state_access.hpp"
#include "store/state_store.hpp"
#include "util/fs.hpp"
#include "util/one_line.hpp"
#include "util/process.hpp"
#include "util/time.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;

namespace {
constexpr const char* kTool = "ctx-session-hook";

// The live session's new lines archived and indexed (what the Stop and PreCompact hooks start).
void archive_live(const fs::path& transcript, const core::Locations& loc,
                  const core::ArchiveConfig& archive_cfg) {
  auto r = archive::archive_session(transcript, loc, archive_cfg, /*queue_once=*/true);
  if (r && !r->indexed && !r->project_excluded && !r->queued_behind)
    archive::run_indexer(loc, archive_cfg, /*queue_once=*/true);
  if (!r && util::make_private_dirs(loc.state_dir))
    (void)util::append_private_line(
        loc.archive_log(),
        fmt::format("{} archiving {}: {}", util::format_iso8601_ms(util::now_ms()),
                    util::one_line(transcript.string()), util::one_line(r.error().message)));
}

// Whether an archiver of this session already waits for the one at work (it holds the session's
// queue lock): it reads the transcript's size once it starts, so it archives this turn too, and
// another would only find the queue taken and leave.
bool archiver_queued(const fs::path& transcript, const core::Locations& loc) {
  const auto where = archive::archive_location(loc, transcript.parent_path().filename().string(),
                                               transcript.stem().string());
  const fs::path queue =
      where.transcript.parent_path() / ("." + transcript.stem().string() + ".queue");
  int fd = ::open(queue.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases it when this process took it
  return held;
}

// Runs `work` in a child of this process, in a new session, once this hook's own output is over:
// its stdin, stdout and stderr are put on /dev/null before the fork, so the child never holds
// the client's pipes, and this process waits neither for the child nor for it to be scheduled
// (util::detach waits for an intermediate child, and posix_spawn for the child's exec: on a
// loaded machine that wait was most of what the hook cost). For the end of a hook only: nothing
// written after it is seen. When fork fails, `work` runs here.
void detach_after_output(const std::function<void()>& work, AppContext& ctx) {
  ctx.out.flush();
  ctx.err.flush();
  std::fflush(nullptr);
  if (int null = ::open("/dev/null", O_RDWR | O_CLOEXEC); null >= 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::close(null);
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    work();
    ::_exit(0);
  }
  if (pid < 0) work();
}

}  // namespace

int run_session_hook(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli(kTool,
                 "SessionStart/Stop/PreCompact/SessionEnd hook: records sessions, hands rollovers "
                 "to the supervisor, archives and "
                 "indexes sessions (after every turn, before a compaction, at the end).");
  std::string event;
  bool foreground = false;
  cli.app().add_option("event", event, "hook event name (informational)");
  cli.app().add_flag("--foreground", foreground,
                     "archive in this process instead of a detached one");
  cli.add_version();
  if (auto rc = cli.parse(args, ctx)) return *rc;
  auto payload = read_hook_payload(ctx, kTool);
  if (!payload) return exit_code(fail_open_code(kTool));
  core::Config cfg = core::load_config(ctx.env, {core::project_start_dir(ctx.env, payload->cwd)});
  const core::Locations loc = cfg.locations(ctx.env);
  record_hook_run(loc, kTool);
  const std::string& ev = payload->hook_event_name;
  const fs::path transcript(payload->transcript_path);
  std::string note;
  std::function<void()> after_output;  // detached once the hook's output is over

  if (ev == "SessionStart") {
    if (auto store = store::open_state(loc, cfg, note)) {
      store::SessionRecord r;
      r.session_id = payload->session_id;
      r.project = transcript.parent_path().filename().string();
      r.transcript = transcript.string();
      r.cwd = payload->cwd;
      r.started_at = util::format_iso8601_ms(util::now_ms());
      if (auto w = store->record_session_seen(r); !w) note = w.error().message;
      // The session's pins as a view, so that its first PreCompact opens no database.
      if (auto scope = resolve_pin_scope(*store, payload->session_id, payload->cwd); scope) {
        if (auto n = refresh_pin_view(*store, loc, *scope); !n.empty() && note.empty()) note = n;
      }
    }
    // After a compaction: counted with the tokens it freed (the status line's {compactions} and
    // {reclaimed}), then one line telling the model that what it lost is searchable, and how.
    if (payload->source == "compact" && !payload->session_id.empty()) {
      std::string meter_note;
      if (auto meter = store::open_meter(loc, cfg, meter_note)) {
        const auto figures = context::last_compaction(payload->transcript_path);
        const int64_t freed =
            figures && figures->post_tokens > 0 ? figures->pre_tokens - figures->post_tokens : 0;
        if (auto r = meter->record_compaction(payload->session_id, freed); !r)
          meter_note = r.error().message;
      }
      if (note.empty()) note = meter_note;
    }
    if (payload->source == "compact" && !payload->session_id.empty())
      ctx.out << claude::session_start_response(searchable_after_compaction(
                     archive_search_tool(ctx.env, payload->cwd), payload->session_id))
              << '\n';
  } else if (ev == "Stop" || ev == "PreCompact") {
    // Under a supervisor: mark its pending rollover ready, then wake it, but only once the pid
    // is proven to be that supervisor (it polls anyway; a wrong pid is never signalled).
    auto supervisor = ev == "Stop" ? ctx.env.get_nonempty("CTXKIT_SUPERVISOR") : std::nullopt;
    if (supervisor) {
      if (auto store = store::open_state(loc, cfg, note)) {
        auto ready = store->mark_rollover_ready(*supervisor, payload->session_id);
        if (!ready) {
          note = ready.error().message;
        } else if (*ready) {
          auto pid = rollover::verify_supervisor(
              loc, ctx.env.get("CTXKIT_SUPERVISOR_PID").value_or(""), *supervisor);
          if (pid)
            ::kill(*pid, SIGUSR1);
          else
            note = fmt::format("note: not waking the supervisor: {}", pid.error().message);
        }
      }
    }
    // The live session searchable: its new lines archived (appended to the archived copy) and
    // indexed by the detached, resumable indexer, so this hook returns at once. It is started
    // once this hook's output is over (below), and not at all when an archiver of this session
    // already waits for the one at work.
    std::error_code ec;
    if (!payload->transcript_path.empty() && fs::is_regular_file(transcript, ec)) {
      const core::ArchiveConfig archive_cfg = cfg.archive;
      auto work = [transcript, loc, archive_cfg] { archive_live(transcript, loc, archive_cfg); };
      if (foreground)
        work();
      else if (!archiver_queued(transcript, loc))
        after_output = work;
    }
  } else if (ev == "SessionEnd") {
    std::error_code ec;
    if (!fs::exists(transcript, ec)) {
      note = fmt::format("nothing to archive: {} does not exist", transcript.string());
    } else {
      const core::ArchiveConfig archive_cfg = cfg.archive;
      const util::Env env = ctx.env;
      auto work = [transcript, loc, archive_cfg, env] {
        auto r = archive::archive_session(transcript, loc, archive_cfg);
        // Another indexer was at work: wait for it, then finish what it left (this session).
        if (r && !r->indexed && !r->project_excluded) archive::run_indexer(loc, archive_cfg);
        if (!r) {
          // Detached: leave the reason where the user can find it (private folder, no links).
          if (util::make_private_dirs(loc.state_dir)) {
            (void)util::append_private_line(
                loc.archive_log(),
                fmt::format("{} archiving {}: {}", util::format_iso8601_ms(util::now_ms()),
                            util::one_line(transcript.string()),
                            util::one_line(r.error().message)));
          }
        }
        if (archive_cfg.episodic_memory_sync) {
          if (auto prog = rollover::find_program("episodic-memory", env)) {
            util::ProcessSpec spec;
            spec.argv = {*prog, "sync"};
            spec.timeout = std::chrono::minutes(10);
            (void)util::run_process(spec);
          }
        }
      };
      if (foreground)
        work();
      else
        util::detach(work);
    }
  } else {
    note = fmt::format(
        "note: ignoring a '{}' payload (this hook handles SessionStart, Stop, PreCompact and "
        "SessionEnd)",
        ev.empty() ? "unnamed" : ev);
  }
  if (!note.empty()) print_note(ctx.err, kTool, note);
  // [compact] at under a supervisor: checked once the turn's last reply is in the transcript
  // (it is written after this hook starts), so after this hook's output (compact_trigger.hpp).
  if (ev == "Stop" && cfg.compact.at > 0 && ctx.env.get_nonempty("CTXKIT_SUPERVISOR")) {
    auto trigger = [cfg, loc, env = ctx.env, session = payload->session_id,
                    transcript = payload->transcript_path, cwd = payload->cwd] {
      compact_after_turn_if_due(cfg, loc, env, session, transcript, cwd);
    };
    if (foreground) {
      trigger();
    } else if (after_output) {
      after_output = [archive = after_output, trigger] {
        trigger();
        archive();
      };
    } else {
      after_output = trigger;
    }
  }
  if (after_output) detach_after_output(after_output, ctx);
  return 0;
}

}  // namespace ctxkit::apps
