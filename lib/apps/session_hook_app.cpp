#include "apps/session_hook_app.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/core.h>

#include "core/config.hpp"
#include "core/hook_stamp.hpp"
#include "core/locations.hpp"
#include "apps/archive_tool.hpp"
#include "apps/hook_input.hpp"
#include "claude/hook_response.hpp"
#include "rollover/rollover.hpp"
#include "rollover/supervisor.hpp"
#include "archive/archive.hpp"
#include "archive/session_archiver.hpp"
#include "store/state_store.hpp"
#include "apps/cli.hpp"
#include "store/state_access.hpp"
#include "util/fs.hpp"
#include "util/one_line.hpp"
#include "util/process.hpp"
#include "util/time.hpp"

extern char** environ;

namespace ctxkit {
namespace fs = std::filesystem;

namespace {
constexpr const char* kTool = "ctx-session-hook";

// The live session's new lines archived and indexed (what the Stop and PreCompact hooks start).
void archive_live(const fs::path& transcript, const Locations& loc, const ArchiveConfig& archive_cfg) {
  auto r = archive_session(transcript, loc, archive_cfg, /*queue_once=*/true);
  if (r && !r->indexed && !r->project_excluded && !r->queued_behind) run_indexer(loc, archive_cfg, /*queue_once=*/true);
  if (!r && util::make_private_dirs(loc.state_dir))
    (void)util::append_private_line(loc.archive_log(), fmt::format("{} archiving {}: {}", util::format_iso8601_ms(util::now_ms()),
                                                                   util::one_line(transcript.string()), util::one_line(r.error().message)));
}

// Whether an archiver of this session already waits for the one at work (it holds the session's
// queue lock): it reads the transcript's size once it starts, so it archives this turn too, and
// another would only find the queue taken and leave.
bool archiver_queued(const fs::path& transcript, const Locations& loc) {
  const auto where = archive_location(loc, transcript.parent_path().filename().string(), transcript.stem().string());
  const fs::path queue = where.transcript.parent_path() / ("." + transcript.stem().string() + ".queue");
  int fd = ::open(queue.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases it when this process took it
  return held;
}

// Starts `argv` (argv[0] an absolute path) detached as util::detach runs work: a new session,
// stdin/stdout/stderr on /dev/null, signals at their defaults; but with one posix_spawn, so this
// process is not copied and waits for no intermediate child (the hook returns at once). The
// child is reparented when the hook exits. False when it could not be started.
bool spawn_detached(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (int fd = 0; fd <= 2; ++fd) posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", O_RDWR, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSID);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, args.front(), &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return rc == 0;
}

// This program's own path, when it is ctx-session-hook (the indexer is started as it).
std::optional<std::string> own_program() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec || self.filename() != kTool) return std::nullopt;
  return self.string();
}

}  // namespace

int run_session_hook(const std::vector<std::string>& args, AppContext& ctx) {
  CLI::App app{"SessionStart/Stop/PreCompact/SessionEnd hook: records sessions, hands rollovers to the supervisor, archives and indexes "
               "sessions (after every turn, before a compaction, at the end)."};
  app.name(kTool);
  std::string event, live_transcript, live_cwd;
  bool foreground = false, show_version = false;
  app.add_option("event", event, "hook event name (informational)");
  app.add_flag("--foreground", foreground, "archive in this process instead of a detached one");
  // What the Stop and PreCompact hooks start detached: archive and index this live transcript.
  app.add_option("--archive-live", live_transcript)->group("");
  app.add_option("--cwd", live_cwd)->group("");
  app.add_flag("--version", show_version, "print the version");
  if (auto rc = parse_cli(app, args, ctx, kTool)) return *rc;
  if (show_version) {
    ctx.out << kTool << ' ' << version() << '\n';
    return 0;
  }
  if (!live_transcript.empty()) {
    Config cfg = load_config(ctx.env, {project_start_dir(ctx.env, live_cwd)});
    archive_live(live_transcript, cfg.locations(ctx.env), cfg.archive);
    return 0;
  }
  auto payload = read_hook_payload(ctx, kTool);
  if (!payload) return 1;
  Config cfg = load_config(ctx.env, {project_start_dir(ctx.env, payload->cwd)});
  const Locations loc = cfg.locations(ctx.env);
  record_hook_run(loc, kTool);
  const std::string& ev = payload->hook_event_name;
  const fs::path transcript(payload->transcript_path);
  std::string note;

  if (ev == "SessionStart") {
    if (auto store = open_state(loc, cfg, note)) {
      SessionRecord r;
      r.session_id = payload->session_id;
      r.project = transcript.parent_path().filename().string();
      r.transcript = transcript.string();
      r.cwd = payload->cwd;
      r.started_at = util::format_iso8601_ms(util::now_ms());
      if (auto w = store->record_session_seen(r); !w) note = w.error().message;
    }
    // After a compaction: one line telling the model that what it lost is searchable, and how.
    if (payload->source == "compact" && !payload->session_id.empty())
      ctx.out << session_start_response(searchable_after_compaction(archive_search_tool(ctx.env, payload->cwd), payload->session_id)) << '\n';
  } else if (ev == "Stop" || ev == "PreCompact") {
    // Under a supervisor: mark its pending rollover ready, then wake it, but only once the pid
    // is proven to be that supervisor (it polls anyway; a wrong pid is never signalled).
    auto supervisor = ev == "Stop" ? ctx.env.get_nonempty("CTXKIT_SUPERVISOR") : std::nullopt;
    if (supervisor) {
      if (auto store = open_state(loc, cfg, note)) {
        auto ready = store->mark_rollover_ready(*supervisor, payload->session_id);
        if (!ready) {
          note = ready.error().message;
        } else if (*ready) {
          auto pid = verify_supervisor(loc, ctx.env.get("CTXKIT_SUPERVISOR_PID").value_or(""), *supervisor);
          if (pid) ::kill(*pid, SIGUSR1);
          else note = fmt::format("note: not waking the supervisor: {}", pid.error().message);
        }
      }
    }
    // The live session searchable: its new lines archived (appended to the archived copy) and
    // indexed by the detached, resumable indexer, so this hook returns at once. The indexer is
    // this program started anew (one posix_spawn, no copy of this process to wait for), and not
    // started at all when one already waits to archive this session.
    std::error_code ec;
    if (!payload->transcript_path.empty() && fs::is_regular_file(transcript, ec)) {
      const ArchiveConfig archive_cfg = cfg.archive;
      auto work = [transcript, loc, archive_cfg] { archive_live(transcript, loc, archive_cfg); };
      if (foreground) {
        work();
      } else if (!archiver_queued(transcript, loc)) {
        auto self = own_program();
        std::vector<std::string> argv{self.value_or(""), "--archive-live", transcript.string()};
        if (!payload->cwd.empty()) argv.insert(argv.end(), {"--cwd", payload->cwd});
        if (!self || !spawn_detached(argv)) util::detach(work);
      }
    }
  } else if (ev == "SessionEnd") {
    std::error_code ec;
    if (!fs::exists(transcript, ec)) {
      note = fmt::format("nothing to archive: {} does not exist", transcript.string());
    } else {
      const ArchiveConfig archive_cfg = cfg.archive;
      const util::Env env = ctx.env;
      auto work = [transcript, loc, archive_cfg, env] {
        auto r = archive_session(transcript, loc, archive_cfg);
        // Another indexer was at work: wait for it, then finish what it left (this session).
        if (r && !r->indexed && !r->project_excluded) run_indexer(loc, archive_cfg);
        if (!r) {
          // Detached: leave the reason where the user can find it (private folder, no links).
          if (util::make_private_dirs(loc.state_dir)) {
            (void)util::append_private_line(
                loc.archive_log(),
                fmt::format("{} archiving {}: {}", util::format_iso8601_ms(util::now_ms()),
                            util::one_line(transcript.string()), util::one_line(r.error().message)));
          }
        }
        if (archive_cfg.episodic_memory_sync) {
          if (auto prog = find_program("episodic-memory", env)) {
            util::ProcessSpec spec;
            spec.argv = {*prog, "sync"};
            spec.timeout = std::chrono::minutes(10);
            (void)util::run_process(spec);
          }
        }
      };
      if (foreground) work();
      else util::detach(work);
    }
  } else {
    note = fmt::format("note: ignoring a '{}' payload (this hook handles SessionStart, Stop, PreCompact and SessionEnd)", ev.empty() ? "unnamed" : ev);
  }
  if (!note.empty()) print_note(ctx.err, kTool, note);
  return 0;
}

}  // namespace ctxkit
