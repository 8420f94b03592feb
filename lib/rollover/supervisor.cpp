#include "rollover/supervisor.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "claude/claude_cli.hpp"
#include "core/supervision.hpp"
#include "store/state_access.hpp"
#include "store/state_store.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/json_io.hpp"
#include "util/process.hpp"
#include "util/time.hpp"
#include "util/uuid.hpp"

namespace ctxkit::rollover {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {
constexpr std::string_view kRecordHeader = "ctxkit-supervisor 1";
// A prompt file larger than this cannot be one argument anyway; nothing more is read.
constexpr size_t kMaxPromptFile = 4u << 20;

fs::path record_path(const core::Locations& loc, pid_t pid) {
  return loc.supervisors_dir() / std::to_string(pid);
}

std::string start_time_text(pid_t pid) {
  auto t = util::process_start_time(pid);
  return t ? std::to_string(*t) : std::string("-");
}

// A supervisor's record: the header, its token and its process start time, a line each.
std::string record_text(std::string_view token, pid_t pid) {
  return fmt::format("{}\n{}\n{}\n", kRecordHeader, token, start_time_text(pid));
}

// The pid `text` names: a decimal number above 0 and within pid_t, nothing else.
std::optional<pid_t> pid_of(std::string_view text) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !(text[0] >= '0' && text[0] <= '9') || value <= 0 || value > INT_MAX)
    return std::nullopt;
  return static_cast<pid_t>(value);
}

// Reads a file of ours: a regular file owned by this user, not through a link, at most `max` bytes.
Result<std::string> read_own_file(const fs::path& path, size_t max) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0)
    return fail(fmt::format("reading {}: {}", path.string(), std::strerror(errno)),
                errno == ENOENT ? Error::Kind::NotFound : Error::Kind::Generic);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    ::close(fd);
    return fail(fmt::format("reading {}: not a regular file of this user", path.string()),
                Error::Kind::Invalid);
  }
  if (static_cast<uint64_t>(st.st_size) > max) {
    ::close(fd);
    return fail(
        fmt::format("{} is {} bytes, more than the {} expected", path.string(), st.st_size, max),
        Error::Kind::Invalid);
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t r = ::read(fd, text.data() + got, text.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

// What a ready rollover needs to start, all checked before the running client is ended.
struct Relaunch {
  std::vector<std::string> argv;
  std::optional<fs::path> cwd;
  // A workflow compact: `claude -p --resume S "/compact <focus>"`, run between the two clients.
  std::vector<std::string> compact_argv;
};

Result<Relaunch> prepare_relaunch(const store::PendingRollover& ready,
                                  const std::vector<std::string>& command,
                                  const util::SpawnSpec& base) {
  auto prompt = read_own_file(ready.prompt_path, kMaxPromptFile);
  if (!prompt) return fail(fmt::format("the continuation prompt: {}", prompt.error().message));
  if (prompt->empty())
    return fail(fmt::format("the continuation prompt {} is empty", ready.prompt_path));
  Relaunch r;
  if (ready.action == "compact") {
    if (ready.session_id.empty()) return fail("the session to compact is not known");
    r.compact_argv = claude::headless_compact_argv(command, ready.session_id, ready.focus);
    r.argv = claude::resume_argv(command, ready.session_id, *prompt);
  } else {
    r.argv = claude::relaunch_argv(command, ready.new_session_id, *prompt);
  }
  std::error_code ec;
  if (!ready.cwd.empty() && fs::is_directory(ready.cwd, ec)) r.cwd = fs::path(ready.cwd);
  util::SpawnSpec spec = base;
  spec.argv = r.argv;
  spec.cwd = r.cwd;
  CTXKIT_TRY(util::check_spawnable(spec));
  if (!r.compact_argv.empty()) {
    spec.argv = r.compact_argv;
    CTXKIT_TRY(util::check_spawnable(spec));
  }
  return r;
}

// Records a workflow action the supervisor carried out, beside the workflow's other events
// (source "workflow", scope = the worktree; the same fields as workflow::append_event).
void record_executed(store::StateStore* store, const store::PendingRollover& p,
                     const std::string& outcome) {
  if (!store || p.action == "rollover") return;
  const int64_t now = util::now_ms();
  nlohmann::ordered_json j = {{"at", util::format_iso8601_ms(now)},
                              {"worktree", p.cwd},
                              {"kind", "executed"},
                              {"action", p.action},
                              {"by", "supervisor"},
                              {"session", p.session_id},
                              {"newSession", p.new_session_id},
                              {"outcome", outcome}};
  if (!p.focus.empty()) j["focus"] = p.focus;
  (void)store->append_event(
      {now, "workflow", p.cwd, "executed", util::dump_json(j, -1, util::BadUtf8::replace)});
}
}  // namespace

Result<void> record_supervisor(const core::Locations& loc, pid_t pid, const std::string& token) {
  const fs::path dir = loc.supervisors_dir();
  if (auto made = util::make_private_dirs(dir, loc.state_dir); !made) return made;
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    return fail(fmt::format("{} is not a directory of this user", dir.string()),
                Error::Kind::Invalid);
  if ((st.st_mode & 0777) != 0700 && ::chmod(dir.c_str(), 0700) != 0)
    return fail(fmt::format("making {} private: {}", dir.string(), std::strerror(errno)));
  return util::write_file_atomic(record_path(loc, pid), record_text(token, pid), 0600,
                                 util::Durability::Flush);
}

void forget_supervisor(const core::Locations& loc, pid_t pid) {
  std::error_code ec;
  fs::remove(record_path(loc, pid), ec);
}

std::vector<std::string> forget_ended_supervisors(const core::Locations& loc) {
  std::vector<std::string> tokens;
  std::error_code ec;
  for (fs::directory_iterator it(loc.supervisors_dir(), ec), end; !ec && it != end;
       it.increment(ec)) {
    const auto pid = pid_of(it->path().filename().string());
    if (!pid) continue;
    auto text = read_own_file(it->path(), 4096);
    if (!text || !text->starts_with(std::string(kRecordHeader) + "\n")) continue;
    const size_t from = kRecordHeader.size() + 1, to = text->find('\n', from);
    if (to == std::string::npos || to == from) continue;
    const std::string token = text->substr(from, to - from);
    // The same record written for this pid now: the process still runs (or /proc cannot tell,
    // then and now).
    if (*text == record_text(token, *pid)) continue;
    std::error_code rm;
    if (fs::remove(it->path(), rm)) tokens.push_back(token);
  }
  return tokens;
}

Result<pid_t> verify_supervisor(const core::Locations& loc, std::string_view pid_text,
                                std::string_view token) {
  const auto parsed = pid_of(pid_text);
  if (!parsed) {
    std::string shown(pid_text.substr(0, 32));
    for (char& c : shown)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    return fail(fmt::format("CTXKIT_SUPERVISOR_PID '{}' is not a process id", shown),
                Error::Kind::Invalid);
  }
  const pid_t pid = *parsed;
  if (token.empty()) return fail("CTXKIT_SUPERVISOR is empty", Error::Kind::Invalid);
  auto text = read_own_file(record_path(loc, pid), 4096);
  if (!text)
    return fail(fmt::format("process {} is not a recorded ctxkit supervisor", pid),
                Error::Kind::NotFound);
  if (*text != record_text(token, pid))
    return fail(fmt::format("process {} is not the ctxkit supervisor of this session", pid),
                Error::Kind::Invalid);
  return pid;
}

Result<std::optional<std::string>> wake_when_ready(store::StateStore& store,
                                                   const core::Locations& loc,
                                                   std::string_view pid_text,
                                                   const std::string& token,
                                                   const std::string& session_id) {
  auto ready = store.mark_rollover_ready(token, session_id);
  if (!ready) return std::unexpected(ready.error());
  if (!*ready) return std::nullopt;
  auto pid = verify_supervisor(loc, pid_text, token);
  if (!pid) return pid.error().message;
  ::kill(*pid, SIGUSR1);
  return std::nullopt;
}

SupervisorResult run_supervisor(const std::vector<std::string>& command, const core::Config& cfg,
                                const util::Env& env, const SupervisorReport& report) {
  SupervisorResult result;
  auto tell = [&report](SupervisorEvent::Kind kind, std::string session, std::string detail = {}) {
    if (report) report({kind, std::move(session), std::move(detail)});
  };
  const std::string token = util::random_uuid();
  const pid_t self = ::getpid();
  const core::Locations loc = cfg.locations(env);
  if (auto r = record_supervisor(loc, self, token); !r)
    tell(SupervisorEvent::Kind::NotRecorded, "", r.error().message);
  struct Forget {
    const core::Locations& loc;
    pid_t pid;
    ~Forget() { forget_supervisor(loc, pid); }
  } forget{loc, self};

  util::SpawnSpec base;
  base.env.emplace(env.vars().begin(), env.vars().end());
  (*base.env)[core::kSupervisorTokenVar] = token;
  (*base.env)[core::kSupervisorPidVar] = std::to_string(self);
  // A supervisor killed (kill -9, the OOM killer) takes its client along as a closed terminal
  // would: a client left behind would fight the shell for the terminal. Its session is on disk
  // and resumes; what this supervisor left undone the next one reports (below).
  base.parent_death_signal = SIGHUP;

  termios saved{};
  const bool tty = ::isatty(0) && ::tcgetattr(0, &saved) == 0;
  util::SignalForwarder forward({SIGINT, SIGQUIT, SIGTERM, SIGHUP});
  util::SignalLatch wake(SIGUSR1);

  // One connection for the whole run, opened when first needed (and again if it could not be).
  std::optional<store::StateStore> store;
  auto state = [&]() -> store::StateStore* {
    std::string note;
    if (!store) store = store::open_state(loc, cfg, note);
    return store ? &*store : nullptr;
  };
  // The rollover prepared in the supervised session, once its turn has ended, checked whole. One
  // that cannot be carried out is reported and dropped.
  auto ready_relaunch = [&]() -> std::optional<std::pair<store::PendingRollover, Relaunch>> {
    store::StateStore* s = state();
    if (!s) return std::nullopt;
    auto p = s->pending_rollover(token);
    if (!p || !*p || !(*p)->ready) return std::nullopt;
    auto relaunch = prepare_relaunch(**p, command, base);
    if (!relaunch) {
      tell(SupervisorEvent::Kind::RolloverDropped, (*p)->new_session_id, relaunch.error().message);
      (void)s->clear_pending_rollover(token);
      core::forget_prompt_file(loc, (*p)->prompt_path);
      return std::nullopt;
    }
    return std::make_pair(**p, std::move(*relaunch));
  };

  // What supervisors that are gone left undone: each said once, then dropped. A compaction that
  // [compact] at asked for is asked again when the session's next turn ends past the threshold.
  if (auto ended = forget_ended_supervisors(loc); !ended.empty()) {
    if (store::StateStore* s = state()) {
      for (const auto& gone : ended) {
        auto p = s->pending_rollover(gone);
        if (!p || !*p) continue;
        tell(SupervisorEvent::Kind::LeftUndone, (*p)->session_id, (*p)->action);
        (void)s->clear_pending_rollover(gone);
        core::forget_prompt_file(loc, (*p)->prompt_path);
      }
    }
  }

  util::SpawnSpec spec = base;
  spec.argv = command;
  bool stop = false;
  while (true) {
    auto child = util::Child::spawn(spec);
    if (!child) {
      result.spawn_error = child.error();
      return result;
    }
    ++result.clients_started;
    forward.set_target(child->pid());
    std::optional<std::pair<store::PendingRollover, Relaunch>> ready;
    auto last_poll = std::chrono::steady_clock::now() - 1s;
    std::optional<util::ExitStatus> status;
    while (!(status = child->wait_for(50ms))) {
      auto now = std::chrono::steady_clock::now();
      if (wake.take() || now - last_poll > 500ms) {
        last_poll = now;
        ready = ready_relaunch();
        if (ready) break;
      }
    }
    if (!status) {
      // The turn ended with a rollover that can start: end this client, then start the new session.
      status = child->terminate(std::chrono::seconds(cfg.rollover.grace_seconds));
    }
    forward.set_target(0);
    stop = forward.take(SIGTERM) || forward.take(SIGHUP) || stop;
    result.last_status = status->shell_code();
    if (tty) {
      ::tcsetattr(0, TCSANOW, &saved);
      tell(SupervisorEvent::Kind::TerminalRestored, "");
    }
    // The child ended by itself: a rollover that became ready at the very end still counts.
    if (!ready && !stop) ready = ready_relaunch();
    if (!ready || stop) return result;
    if (store::StateStore* s = state()) (void)s->clear_pending_rollover(token);
    const store::PendingRollover& done = ready->first;
    core::forget_prompt_file(loc, done.prompt_path);
    if (!ready->second.compact_argv.empty()) {
      // The workflow step asked for /compact: compact the session headless, then resume it.
      tell(SupervisorEvent::Kind::Compacting, done.session_id, done.focus);
      util::ProcessSpec compact;
      compact.argv = ready->second.compact_argv;
      compact.cwd = ready->second.cwd;
      compact.env = std::map<std::string, std::string>(base.env->begin(), base.env->end());
      compact.timeout = std::chrono::minutes(10);
      auto r = util::run_process(compact);
      std::string outcome = !r             ? r.error().message
                            : r->timed_out ? "timed out"
                                           : fmt::format("exit {}", r->exit_code);
      if (!r || r->exit_code != 0 || r->timed_out)
        tell(SupervisorEvent::Kind::CompactFailed, done.session_id, outcome);
      record_executed(state(), done, outcome);
      tell(SupervisorEvent::Kind::Resuming, done.session_id);
    } else {
      record_executed(state(), done, "new session");
      tell(SupervisorEvent::Kind::Starting, done.new_session_id);
    }
    ++result.rollovers;
    spec.argv = ready->second.argv;
    spec.cwd = ready->second.cwd;
  }
}

}  // namespace ctxkit::rollover
