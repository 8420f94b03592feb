#include "apps/session_hook_app.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>

#include "apps/archive_tool.hpp"
#include "apps/cli.hpp"
#include "apps/hook_input.hpp"
#include "archive/archive.hpp"
#include "claude/hook_response.hpp"
#include "context/context_meter.hpp"
#include "core/archive_log.hpp"
#include "core/config.hpp"
#include "core/hook_stamp.hpp"
#include "core/locations.hpp"
#include "core/supervision.hpp"
#include "pins/pin_scope.hpp"
#include "rollover/compact_trigger.hpp"
#include "rollover/rollover.hpp"
#include "rollover/supervisor.hpp"
#include "store/state_access.hpp"
#include "store/state_store.hpp"
#include "util/fs.hpp"
#include "util/paths.hpp"
#include "util/process.hpp"
#include "util/time.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;

namespace {
constexpr const char* kTool = "ctx-session-hook";

// Leaves a note in the archive's log (what a detached run leaves where the user finds it).
void log_note(const core::Locations& loc, const std::string& what) {
  core::append_archive_log(loc, std::string(kTool) + ": " + what);
}

// The archive's work on a transcript (archive::archive_and_index) is done by `ctx-search
// --archive`, the program beside this one: the indexer reads messages with libsimdjson, a shared
// library, and this hook, which runs at every session's start and every turn's end, is linked
// static so that it starts fast (docs/performance.md). Run in the project's folder, as the hook
// reads its configuration there.
std::vector<std::string> archiver_argv(const fs::path& transcript, bool ended) {
  const fs::path dir = util::executable_dir().value_or(fs::path());
  // One word, so that a path that starts with '-' is never read as an option.
  std::vector<std::string> argv{(dir / "ctx-search").string(), "--archive=" + transcript.string()};
  if (ended) argv.push_back("--ended");
  return argv;
}

// Runs the archiver and waits for it (--foreground). It is part of this hook's run: killed with
// it, so that a hook killed mid-write leaves no indexer still writing behind it.
void run_archiver(const std::vector<std::string>& argv, const std::string& cwd,
                  const core::Locations& loc) {
  util::ProcessSpec spec;
  spec.argv = argv;
  spec.parent_death_signal = SIGKILL;
  std::error_code ec;
  if (!cwd.empty() && fs::is_directory(cwd, ec)) spec.cwd = cwd;
  auto r = util::run_process(spec);
  if (!r) log_note(loc, fmt::format("running {}: {}", argv.front(), r.error().message));
}

// Becomes the archiver (in a detached child: nothing follows in this process).
void exec_archiver(const std::vector<std::string>& argv, const std::string& cwd,
                   const core::Locations& loc) {
  std::error_code ec;
  if (!cwd.empty() && fs::is_directory(cwd, ec)) (void)::chdir(cwd.c_str());
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(args.front(), args.data());
  log_note(loc, fmt::format("running {}: {}", argv.front(), std::strerror(errno)));
}

// Whether an archiver of this session already waits for the one at work (it holds the session's
// queue lock): it reads the transcript's size once it starts, so it archives this turn too, and
// another would only find the queue taken and leave.
bool archiver_queued(const fs::path& transcript, const core::Locations& loc) {
  const auto where = archive::archive_location(loc, transcript.parent_path().filename().string(),
                                               transcript.stem().string());
  // The name built by appending: GCC 12 reports `"." + string&&` inlined here as a memcpy out of
  // bounds (its bug 105329).
  std::string name = ".";
  name += transcript.stem().string();
  name += ".queue";
  const fs::path queue = where.transcript.parent_path() / name;
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
                     "record and archive in this process (and wait for it) instead of a detached "
                     "one");
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
    // The session recorded (with its pins' view, so that its first PreCompact opens no database)
    // and, after a compaction, the compaction counted: once the hook's output is over, so that the
    // client's start waits for none of it (the first write of a database syncs it).
    auto record = [cfg, loc, p = *payload](std::string& problem) {
      const fs::path path(p.transcript_path);
      if (auto store = store::open_state(loc, cfg, problem)) {
        store::SessionRecord r;
        r.session_id = p.session_id;
        r.project = path.parent_path().filename().string();
        r.transcript = path.string();
        r.cwd = p.cwd;
        r.started_at = util::format_iso8601_ms(util::now_ms());
        if (auto w = store->record_session_seen(r); !w) problem = w.error().message;
        if (auto scope = pins::resolve_pin_scope(*store, p.session_id, p.cwd); scope) {
          if (auto n = pins::refresh_pin_view(*store, loc, *scope); !n.empty() && problem.empty())
            problem = n;
        }
      }
      // After a compaction: counted with the tokens it freed (the status line's {compactions}
      // and {reclaimed}).
      if (p.source == "compact" && !p.session_id.empty()) {
        std::string meter_note;
        if (auto meter = store::open_meter(loc, cfg, meter_note)) {
          const auto figures = context::last_compaction(p.transcript_path);
          const int64_t freed =
              figures && figures->post_tokens > 0 ? figures->pre_tokens - figures->post_tokens : 0;
          if (auto r = meter->record_compaction(p.session_id, freed); !r)
            meter_note = r.error().message;
        }
        if (problem.empty()) problem = meter_note;
      }
    };
    if (foreground) {
      record(note);
    } else {
      after_output = [record, loc] {
        std::string problem;
        record(problem);
        if (!problem.empty()) log_note(loc, problem);
      };
    }
    // After a compaction: one line telling the model that what it lost is searchable, and how.
    if (payload->source == "compact" && !payload->session_id.empty())
      ctx.out << claude::session_start_response(searchable_after_compaction(
                     archive_search_tool(ctx.env, payload->cwd), payload->session_id))
              << '\n';
  } else if (ev == "Stop" || ev == "PreCompact") {
    // Under a supervisor: mark its pending rollover ready, then wake it, but only once the pid
    // is proven to be that supervisor (it polls anyway; a wrong pid is never signalled).
    auto supervisor = ev == "Stop" ? core::supervisor_of(ctx.env) : std::nullopt;
    if (supervisor) {
      if (auto store = store::open_state(loc, cfg, note)) {
        auto woke = rollover::wake_when_ready(*store, loc, supervisor->pid_text, supervisor->token,
                                              payload->session_id);
        if (!woke)
          note = woke.error().message;
        else if (*woke)
          note = "note: not waking the supervisor: " + **woke;
      }
    }
    // The live session searchable: its new lines archived (appended to the archived copy) and
    // indexed by the detached, resumable indexer, so this hook returns at once. It is started
    // once this hook's output is over (below), and not at all when an archiver of this session
    // already waits for the one at work.
    std::error_code ec;
    if (!payload->transcript_path.empty() && fs::is_regular_file(transcript, ec)) {
      const auto argv = archiver_argv(transcript, /*ended=*/false);
      if (foreground)
        run_archiver(argv, payload->cwd, loc);
      else if (!archiver_queued(transcript, loc))
        after_output = [argv, cwd = payload->cwd, loc] { exec_archiver(argv, cwd, loc); };
    }
  } else if (ev == "SessionEnd") {
    std::error_code ec;
    if (!fs::exists(transcript, ec)) {
      note = fmt::format("nothing to archive: {} does not exist", transcript.string());
    } else {
      const auto argv = archiver_argv(transcript, /*ended=*/true);
      auto work = [argv, cwd = payload->cwd, loc] { exec_archiver(argv, cwd, loc); };
      if (foreground)
        run_archiver(argv, payload->cwd, loc);
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
  // (it is written after this hook starts), so after this hook's output
  // (rollover/compact_trigger.hpp).
  if (ev == "Stop" && cfg.compact.at > 0 && core::supervisor_of(ctx.env)) {
    auto trigger = [cfg, loc, env = ctx.env, session = payload->session_id,
                    transcript = payload->transcript_path, cwd = payload->cwd] {
      rollover::compact_after_turn_if_due(cfg, loc, env, session, transcript, cwd);
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
