#include "util/process.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "util/bounded_run.hpp"

// Built with ThreadSanitizer (GCC names it one way, clang another).
#if defined(__SANITIZE_THREAD__)
#define CTXKIT_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CTXKIT_THREAD_SANITIZER 1
#endif
#endif
#ifndef CTXKIT_THREAD_SANITIZER
#define CTXKIT_THREAD_SANITIZER 0
#endif

extern char** environ;

namespace ctxkit::util {

namespace {
namespace fs = std::filesystem;

// The PATH of a child whose environment has none.
constexpr std::string_view kDefaultPath = "/usr/bin:/bin";

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

// What start_child needs, prepared by the parent: nothing in it is built in the child.
struct ChildStart {
  const char* program;
  char* const* argv;
  char* const* envp;
  const char* cwd;  // nullptr: stay
  int fds[3];       // become 0, 1, 2
  int death_signal;
  pid_t parent;
  bool group;
  sigset_t mask;   // the caller's, restored before exec (everything is blocked around clone)
  int exec_errno;  // set by the child when it could not exec (the parent reads it once clone
                   // returns)
  // Every signal to its default and nothing blocked (Child::spawn's promise), instead of only
  // the caught ones and the caller's mask.
  bool reset_all = false;
  // Where a child that does not share this memory writes `exec_errno` (-1: it shares it).
  int report_fd = -1;
};

// The child of clone(CLONE_VM | CLONE_VFORK): default dispositions for every caught signal (no
// handler of the parent may run here) and for the death signal, the caller's mask without the
// death signal, the death signal, the descriptors, the folder, exec. Only system calls, on its own
// stack; the parent is suspended until the exec or the exit, so a failure is left in `exec_errno`.
int start_child(void* arg) {
  auto* c = static_cast<ChildStart*>(arg);
  struct sigaction dfl {
  }, old{};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig)
    if (::sigaction(sig, nullptr, &old) == 0 &&
        (c->reset_all || sig == SIGPIPE || sig == c->death_signal ||
         (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)))
      ::sigaction(sig, &dfl, nullptr);
  if (c->reset_all) ::sigemptyset(&c->mask);
  ::sigdelset(&c->mask, c->death_signal);
  ::sigprocmask(SIG_SETMASK, &c->mask, nullptr);
  int e = 0;
  if (::prctl(PR_SET_PDEATHSIG, c->death_signal) != 0) e = errno;
  if (e == 0 && ::getppid() != c->parent) e = ESRCH;  // the parent is already gone
  if (e == 0 && c->group) ::setpgid(0, 0);
  for (int i = 0; i < 3 && e == 0; ++i)  // dup2 onto itself would keep close-on-exec
    if (c->fds[i] == i ? ::fcntl(i, F_SETFD, 0) < 0 : ::dup2(c->fds[i], i) < 0) e = errno;
  if (e == 0 && c->cwd && ::chdir(c->cwd) != 0) e = errno;
  if (e == 0) {
    ::execve(c->program, c->argv, c->envp);
    e = errno;
  }
  c->exec_errno = e;
  if (c->report_fd >= 0) (void)!::write(c->report_fd, &e, sizeof e);
  ::_exit(127);
}
}  // namespace

namespace {
// The descriptors that become the child's 0, 1 and 2.
struct ChildFds {
  int in, out, err;
};

// The child by posix_spawn: argv[0] searched in the PATH of the child's environment when it
// has one (posix_spawnp searches this process's), else in this process's.
Result<pid_t> spawn_child(const ProcessSpec& spec, char* const* argv, char* const* envp,
                          ChildFds fds, bool group) {
  std::optional<std::string> program;
  if (spec.env && spec.argv[0].find('/') == std::string::npos) {
    auto it = spec.env->find("PATH");
    auto found = find_in_path(spec.argv[0],
                              it != spec.env->end() ? std::string_view(it->second) : kDefaultPath);
    if (!found)
      return fail(fmt::format("starting {}: {}", spec.argv[0], found.error().message),
                  Error::Kind::NotFound);
    program = std::move(*found);
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds.in, 0);
  posix_spawn_file_actions_adddup2(&fa, fds.out, 1);
  posix_spawn_file_actions_adddup2(&fa, fds.err, 2);
  if (spec.cwd) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd->c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (group) {
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  }
  pid_t pid = 0;
  const int rc = program ? ::posix_spawn(&pid, program->c_str(), &fa, &attr, argv, envp)
                         : ::posix_spawnp(&pid, spec.argv[0].c_str(), &fa, &attr, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    return fail(fmt::format("starting {}: {}", spec.argv[0], std::strerror(rc)),
                Error::Kind::NotFound);
  return pid;
}

// Starts `start` by clone(CLONE_VM | CLONE_VFORK) and exec (start_child), every signal blocked
// around the clone: the child's pid, or why it could not start (a child that could not exec is
// reaped).
Result<pid_t> clone_exec(ChildStart& start, const std::string& name) {
  sigset_t all;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &start.mask);
  const sigset_t caller_mask = start.mask;
#if CTXKIT_THREAD_SANITIZER
  // ThreadSanitizer takes clone for a fork and runs its fork hooks in the child, which with
  // CLONE_VM share this memory: they marked this process as forked while it had threads, and its
  // next thread was fatal. Under it the child is forked (its own memory, as its hooks expect), and
  // an exec failure comes back on a pipe that the exec closes.
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    const int pipe_errno = errno;
    ::pthread_sigmask(SIG_SETMASK, &caller_mask, nullptr);
    return fail(fmt::format("starting {}: {}", name, std::strerror(pipe_errno)),
                Error::Kind::NotFound);
  }
  start.report_fd = report[1];
  const pid_t pid = ::fork();
  if (pid == 0) start_child(&start);
  const int clone_errno = errno;
  ::close(report[1]);
  ::pthread_sigmask(SIG_SETMASK, &caller_mask, nullptr);
  if (pid > 0) {
    ssize_t n;
    while ((n = ::read(report[0], &start.exec_errno, sizeof start.exec_errno)) < 0 &&
           errno == EINTR) {
    }
    if (n != static_cast<ssize_t>(sizeof start.exec_errno)) start.exec_errno = 0;
  }
  ::close(report[0]);
#else
  std::vector<char> stack(64 * 1024);
  const pid_t pid =
      ::clone(start_child, stack.data() + stack.size(), CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
  const int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &caller_mask, nullptr);
#endif
  if (pid < 0)
    return fail(fmt::format("starting {}: {}", name, std::strerror(clone_errno)),
                Error::Kind::NotFound);
  if (start.exec_errno != 0) {
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return fail(fmt::format("starting {}: {}", name, std::strerror(start.exec_errno)),
                Error::Kind::NotFound);
  }
  return pid;
}

// The child by clone(CLONE_VM | CLONE_VFORK) + exec on a stack of its own, as posix_spawn does it
// (which cannot ask for a signal at the parent's death). The program is found first, as
// posix_spawnp would find it after its chdir (a relative program or PATH entry is taken from the
// child's working directory); the child shares this memory until it execs, so it makes only
// system calls (start_child).
Result<pid_t> clone_child(const ProcessSpec& spec, char* const* argv, char* const* envp,
                          ChildFds fds, bool group) {
  std::string_view search = kDefaultPath;
  if (spec.env) {
    if (auto it = spec.env->find("PATH"); it != spec.env->end()) search = it->second;
  } else if (const char* own = std::getenv("PATH")) {
    search = own;
  }
  std::string name = spec.argv[0];
  std::string search_text(search);
  if (spec.cwd && spec.cwd->is_absolute()) {
    if (name.find('/') != std::string::npos && name.front() != '/')
      name = (*spec.cwd / name).string();
    std::string rebased;
    size_t from = 0;
    while (from <= search_text.size()) {
      const size_t colon = search_text.find(':', from);
      std::string entry =
          search_text.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
      if (entry.empty() || entry.front() != '/') entry = (*spec.cwd / entry).string();
      rebased += (rebased.empty() ? "" : ":") + entry;
      if (colon == std::string::npos) break;
      from = colon + 1;
    }
    search_text = rebased;
  }
  auto found = find_in_path(name, search_text);
  if (!found)
    return fail(fmt::format("starting {}: {}", spec.argv[0], found.error().message),
                Error::Kind::NotFound);
  ChildStart start{found->c_str(),
                   argv,
                   envp,
                   spec.cwd ? spec.cwd->c_str() : nullptr,
                   {fds.in, fds.out, fds.err},
                   *spec.parent_death_signal,
                   ::getpid(),
                   group,
                   {},
                   0};
  return clone_exec(start, spec.argv[0]);
}

// A write to the pipe of a child that has stopped reading fails with EPIPE instead of raising
// SIGPIPE: the signal is blocked in this thread around the write, and the one the write raised is
// taken before it is unblocked. The process's disposition of SIGPIPE is left as it was.
ssize_t write_without_sigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_only, old;
  ::sigemptyset(&pipe_only);
  ::sigaddset(&pipe_only, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  sigset_t pending;
  ::sigpending(&pending);
  const bool was_pending = ::sigismember(&pending, SIGPIPE) == 1;
  const ssize_t w = ::write(fd, data, size);
  const int saved = errno;
  if (w < 0 && saved == EPIPE && !was_pending) {
    const timespec none{};
    while (::sigtimedwait(&pipe_only, nullptr, &none) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return w;
}

// One child's run: its stdin fed, its stdout and stderr read (stdout's lines handed over as they
// arrive), until both are closed, a limit is passed (the timeout, the linger, `max_output`), or
// a handler throws; then the child is waited for. The child is in a process group of its own
// when `group` (killed with it).
class Pump {
 public:
  using clock = std::chrono::steady_clock;

  Pump(const ProcessSpec& spec, bool group, size_t max_output)
      : spec_(spec), group_(group), max_output_(max_output) {}

  Result<ProcessResult> run(bool* overflowed) {
    if (auto started = start(); !started) return std::unexpected(started.error());
    deadline_ = spec_.timeout ? clock::now() + *spec_.timeout : clock::time_point::max();
    while ((out_.fd[0] >= 0 || err_.fd[0] >= 0) && pump_once()) {
    }
    in_.close_end(1);
    trim_err(spec_.err_tail_bytes);
    *overflowed = overflowed_;
    return wait();
  }

 private:
  // Pipes, the child, stdin's first state.
  Result<void> start() {
    if (spec_.argv.empty()) return fail("starting a process: empty argv");
    // exec ends an argument at its first NUL: the child would get it cut short, silently.
    for (size_t i = 0; i < spec_.argv.size(); ++i)
      if (spec_.argv[i].find('\0') != std::string::npos)
        return fail(fmt::format("starting {}: argument {} holds a NUL byte (it would be cut short)",
                                spec_.argv[0].substr(0, spec_.argv[0].find('\0')), i),
                    Error::Kind::Invalid);
    if (::pipe2(in_.fd, O_CLOEXEC) != 0 || ::pipe2(out_.fd, O_CLOEXEC) != 0 ||
        ::pipe2(err_.fd, O_CLOEXEC) != 0)
      return fail(fmt::format("creating pipes: {}", std::strerror(errno)));
    std::vector<char*> argv;
    for (const auto& a : spec_.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<std::string> env_store;
    std::vector<char*> envp;
    char** env_ptr = environ;
    if (spec_.env) {
      for (const auto& [k, v] : *spec_.env) env_store.push_back(k + "=" + v);
      for (auto& e : env_store) envp.push_back(e.data());
      envp.push_back(nullptr);
      env_ptr = envp.data();
    }
    const ChildFds child_fds{in_.fd[0], out_.fd[1], err_.fd[1]};
    auto started = spec_.parent_death_signal
                       ? clone_child(spec_, argv.data(), env_ptr, child_fds, group_)
                       : spawn_child(spec_, argv.data(), env_ptr, child_fds, group_);
    if (!started) return std::unexpected(started.error());
    pid_ = *started;
    in_.close_end(0);
    out_.close_end(1);
    err_.close_end(1);
    if (spec_.stdin_data.empty())
      in_.close_end(1);
    else
      ::fcntl(in_.fd[1], F_SETFL, O_NONBLOCK);
    return {};
  }

  // One wait on the pipes and what it brought; false: stop reading (a limit was passed).
  bool pump_once() {
    pollfd fds[3];
    int n = 0;
    int idx_out = -1, idx_err = -1, idx_in = -1;
    if (out_.fd[0] >= 0) {
      fds[n] = {out_.fd[0], POLLIN, 0};
      idx_out = n++;
    }
    if (err_.fd[0] >= 0) {
      fds[n] = {err_.fd[0], POLLIN, 0};
      idx_err = n++;
    }
    if (in_.fd[1] >= 0) {
      fds[n] = {in_.fd[1], POLLOUT, 0};
      idx_in = n++;
    }
    const auto now = clock::now();
    if (now >= deadline_) {
      kill_child();
      result_.timed_out = true;
      return false;
    }
    if (now >= linger_end_) {
      kill_child();
      result_.cut_off = true;
      return false;
    }
    int wait_ms = -1;
    const auto until = std::min(deadline_, linger_end_);
    if (until != clock::time_point::max())
      wait_ms = static_cast<int>(
                    std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count()) +
                1;
    // With a linger, the child's exit is looked for now and then (a process it started may hold
    // the pipes open long after).
    if (spec_.linger && !reaped_ && (wait_ms < 0 || wait_ms > 100)) wait_ms = 100;
    if (::poll(fds, static_cast<nfds_t>(n), wait_ms) < 0) return errno == EINTR;
    if (spec_.linger && !reaped_ && ::waitpid(pid_, &status_, WNOHANG) == pid_) {
      reaped_ = true;
      start_linger();
    }
    if (idx_in >= 0 && (fds[idx_in].revents & (POLLOUT | POLLERR | POLLHUP))) feed_stdin();
    if (idx_out >= 0) drain(fds[idx_out].revents, out_, result_.out);
    if (spec_.on_stdout_line) hand_lines();
    if (idx_err >= 0) drain(fds[idx_err].revents, err_, result_.err);
    if (spec_.err_tail_bytes > 0 && result_.err.size() > 2 * spec_.err_tail_bytes)
      trim_err(spec_.err_tail_bytes);
    if (max_output_ > 0 && result_.out.size() > max_output_) {
      kill_child();
      result_.out.resize(max_output_);
      overflowed_ = true;
      return false;
    }
    return true;
  }

  void feed_stdin() {
    const ssize_t w = write_without_sigpipe(in_.fd[1], spec_.stdin_data.data() + written_,
                                            spec_.stdin_data.size() - written_);
    if (w > 0) written_ += static_cast<size_t>(w);
    if (w < 0 && errno != EAGAIN) in_.close_end(1);
    if (written_ >= spec_.stdin_data.size()) in_.close_end(1);
  }

  void drain(short revents, Pipe& p, std::string& into) {
    if (!(revents & (POLLIN | POLLHUP | POLLERR))) return;
    const ssize_t r = ::read(p.fd[0], buf_, sizeof buf_);
    if (r > 0)
      into.append(buf_, static_cast<size_t>(r));
    else if (r == 0 || errno != EINTR)
      p.close_end(0);
  }

  // Each complete stdout line not yet handed over goes to on_stdout_line. A handler that throws
  // leaves no child behind, running or unreaped.
  void hand_lines() {
    auto& out = result_.out;
    try {
      for (size_t nl; (nl = out.find('\n', scanned_)) != std::string::npos;
           line_start_ = scanned_ = nl + 1)
        spec_.on_stdout_line(std::string_view(out).substr(line_start_, nl - line_start_));
    } catch (...) {
      kill_child();
      if (!reaped_)
        while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
        }
      throw;
    }
    scanned_ = out.size();
    if (!spec_.keep_handed_lines && line_start_ > 0) {
      // Only the line still arriving is kept: memory is the longest line, not the whole output.
      out.erase(0, line_start_);
      scanned_ -= line_start_;
      line_start_ = 0;
    }
    if (spec_.done && spec_.done()) start_linger();
  }

  void trim_err(size_t keep) {
    if (keep > 0 && result_.err.size() > keep) result_.err.erase(0, result_.err.size() - keep);
  }

  // The output is over: the child's end. A child done with (a linger) gets the rest of the
  // linger to exit, and one under a timeout the rest of the timeout; then it is killed.
  ProcessResult wait() {
    if (reaped_) return finish();
    const bool stopped = result_.timed_out || overflowed_ || result_.cut_off;
    if (linger_end_ != clock::time_point::max() && !stopped &&
        wait_until(std::min(linger_end_, deadline_)))
      return finish();
    if (spec_.timeout && !result_.timed_out && !overflowed_ && !result_.cut_off &&
        wait_until(deadline_))
      return finish();
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    return finish();
  }

  // Waits for the child until `until`; true when it exited. At `until` it is killed, as timed
  // out (the deadline) or cut off (the linger).
  bool wait_until(clock::time_point until) {
    auto step = std::chrono::microseconds(200);
    while (true) {
      const pid_t r = ::waitpid(pid_, &status_, WNOHANG);
      if (r == pid_) return true;
      if (r < 0 && errno != EINTR) return false;
      if (clock::now() >= until) {
        kill_child();
        (clock::now() >= deadline_ ? result_.timed_out : result_.cut_off) = true;
        return false;
      }
      std::this_thread::sleep_for(step);
      step = std::min<std::chrono::microseconds>(step * 2, std::chrono::milliseconds(10));
    }
  }

  ProcessResult finish() {
    if (WIFEXITED(status_))
      result_.exit_code = WEXITSTATUS(status_);
    else if (WIFSIGNALED(status_))
      result_.exit_code = 128 + WTERMSIG(status_);
    return std::move(result_);
  }

  // The group too when the child leads one (its pid is the group's id). Never after it was
  // reaped: its pid may be reused.
  void kill_child() {
    if (!reaped_) ::kill(group_ ? -pid_ : pid_, SIGKILL);
  }

  // With a linger: from the moment the caller is done with the output or the child has exited,
  // the output is read for at most that long.
  void start_linger() {
    if (spec_.linger && linger_end_ == clock::time_point::max())
      linger_end_ = clock::now() + *spec_.linger;
  }

  const ProcessSpec& spec_;
  const bool group_;
  const size_t max_output_;
  Pipe in_, out_, err_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;  // exited and waited for
  bool overflowed_ = false;
  ProcessResult result_;
  size_t written_ = 0;  // of stdin_data
  clock::time_point deadline_ = clock::time_point::max();
  clock::time_point linger_end_ = clock::time_point::max();
  size_t line_start_ = 0;  // of the first stdout line not yet handed to on_stdout_line
  size_t scanned_ = 0;     // stdout before this has no '\n' after line_start_
  char buf_[65536];
};

}  // namespace

Result<ProcessResult> run_process(const ProcessSpec& spec) {
  bool overflowed = false;
  return Pump(spec, false, 0).run(&overflowed);
}

Result<BoundedRun> run_bounded(const ProcessSpec& spec, size_t max_output) {
  BoundedRun run;
  auto r = Pump(spec, true, max_output).run(&run.overflowed);
  if (!r) return std::unexpected(r.error());
  run.result = std::move(*r);
  return run;
}

Result<std::string> find_in_path(const std::string& name, std::string_view path) {
  auto runnable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.empty()) return fail("no program named (empty name)", Error::Kind::Invalid);
  if (name.find('/') != std::string::npos) {
    if (runnable(name)) return name;
    return fail(fmt::format("{} not found or not executable", name), Error::Kind::NotFound);
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t colon = path.find(':', start);
    std::string_view dir = path.substr(
        start, colon == std::string_view::npos ? std::string_view::npos : colon - start);
    std::string candidate = fmt::format("{}/{}", dir.empty() ? std::string_view(".") : dir, name);
    if (runnable(candidate)) return candidate;
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return fail(fmt::format("{} not found in PATH", name), Error::Kind::NotFound);
}

namespace {
ExitStatus decode(int status) {
  ExitStatus s;
  if (WIFEXITED(status))
    s.code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    s.signal = WTERMSIG(status);
  else
    s.code = 1;
  return s;
}
}  // namespace

size_t max_argument_bytes() {
  long page = ::sysconf(_SC_PAGESIZE);
  return static_cast<size_t>(32 * (page > 0 ? page : 4096)) - 1;
}

namespace {
// argv, the environment and the program path, resolved the way spawn and exec use them.
struct Prepared {
  std::string program;
  std::vector<std::string> env_store;
  std::vector<char*> argv, envp;
  char** env_ptr = nullptr;
};

Result<Prepared> prepare(const SpawnSpec& spec) {
  if (spec.argv.empty()) return fail("starting a process: empty argv", Error::Kind::Invalid);
  const std::string& name = spec.argv[0];
  CTXKIT_TRY(check_exec_args(spec));
  std::string path_value;
  if (spec.env) {
    auto it = spec.env->find("PATH");
    path_value = it != spec.env->end() ? it->second : std::string(kDefaultPath);
  } else {
    const char* p = std::getenv("PATH");
    path_value = p ? p : std::string(kDefaultPath);
  }
  auto program = find_in_path(name, path_value);
  if (!program)
    return fail(fmt::format("starting {}: {}", name, program.error().message),
                program.error().kind);
  if (spec.cwd) {
    struct stat st {};
    if (::stat(spec.cwd->c_str(), &st) != 0)
      return fail(fmt::format("starting {}: working directory {}: {}", name, spec.cwd->string(),
                              std::strerror(errno)),
                  Error::Kind::NotFound);
    if (!S_ISDIR(st.st_mode))
      return fail(fmt::format("starting {}: working directory {} is not a directory", name,
                              spec.cwd->string()),
                  Error::Kind::Invalid);
  }
  Prepared p;
  p.program = *program;
  for (const auto& a : spec.argv) p.argv.push_back(const_cast<char*>(a.c_str()));
  p.argv.push_back(nullptr);
  p.env_ptr = environ;
  if (spec.env) {
    for (const auto& [k, v] : *spec.env) p.env_store.push_back(k + "=" + v);
    for (auto& e : p.env_store) p.envp.push_back(e.data());
    p.envp.push_back(nullptr);
    p.env_ptr = p.envp.data();
  }
  return p;
}
}  // namespace

Result<void> check_exec_args(const SpawnSpec& spec) {
  const std::string name = spec.argv.empty() ? std::string("a process") : spec.argv[0];
  const size_t max = max_argument_bytes();
  size_t total = 0;
  for (size_t i = 0; i < spec.argv.size(); ++i) {
    const std::string& a = spec.argv[i];
    if (a.find('\0') != std::string::npos)
      return fail(fmt::format("starting {}: argument {} contains a NUL byte", name, i),
                  Error::Kind::Invalid);
    if (a.size() > max)
      return fail(
          fmt::format(
              "starting {}: argument {} is {} bytes, over the {} bytes one argument can hold", name,
              i, a.size(), max),
          Error::Kind::Invalid);
    total += a.size() + 1 + sizeof(char*);
  }
  if (spec.env) {
    for (const auto& [k, v] : *spec.env) {
      if (k.find('\0') != std::string::npos || v.find('\0') != std::string::npos)
        return fail(fmt::format("starting {}: environment variable {} contains a NUL byte", name,
                                k.substr(0, k.find('\0'))),
                    Error::Kind::Invalid);
      if (k.size() + 1 + v.size() > max)
        return fail(fmt::format("starting {}: environment variable {} is {} bytes, over the {} "
                                "bytes one entry can hold",
                                name, k, k.size() + 1 + v.size(), max),
                    Error::Kind::Invalid);
      total += k.size() + v.size() + 2 + sizeof(char*);
    }
  } else {
    for (char** e = environ; e && *e; ++e) total += std::strlen(*e) + 1 + sizeof(char*);
  }
  const long arg_max = ::sysconf(_SC_ARG_MAX);
  if (arg_max > 0 && total > static_cast<size_t>(arg_max))
    return fail(
        fmt::format("starting {}: arguments and environment are {} bytes, over the system's {}",
                    name, total, arg_max),
        Error::Kind::Invalid);
  return {};
}

namespace {
// Default dispositions for every signal (an ignored SIGPIPE or SIGINT would otherwise carry
// over exec), and nothing blocked.
void reset_signals(posix_spawnattr_t& attr) {
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
}
}  // namespace

Result<Child> Child::spawn(const SpawnSpec& spec) {
  auto p = prepare(spec);
  if (!p) return std::unexpected(p.error());
  if (spec.parent_death_signal) {
    // posix_spawn cannot ask for a signal at the parent's death: the clone path, with every
    // signal reset as posix_spawn does it here.
    ChildStart start{p->program.c_str(),
                     p->argv.data(),
                     p->env_ptr,
                     spec.cwd ? spec.cwd->c_str() : nullptr,
                     {0, 1, 2},
                     *spec.parent_death_signal,
                     ::getpid(),
                     false,
                     {},
                     0,
                     true};
    auto pid = clone_exec(start, spec.argv[0]);
    if (!pid) return std::unexpected(pid.error());
    return Child(*pid);
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (spec.cwd) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd->c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  reset_signals(attr);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, p->program.c_str(), &fa, &attr, p->argv.data(), p->env_ptr);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    return fail(fmt::format("starting {}: {}", spec.argv[0], std::strerror(rc)),
                rc == ENOENT ? Error::Kind::NotFound : Error::Kind::Generic);
  return Child(pid);
}

Result<void> check_spawnable(const SpawnSpec& spec) {
  auto p = prepare(spec);
  if (!p) return std::unexpected(p.error());
  return {};
}

Error exec_process(const SpawnSpec& spec) {
  auto p = prepare(spec);
  if (!p) return p.error();
  if (spec.cwd && ::chdir(spec.cwd->c_str()) != 0)
    return Error{fmt::format("starting {}: working directory {}: {}", spec.argv[0],
                             spec.cwd->string(), std::strerror(errno))};
  sigset_t none;
  sigemptyset(&none);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    ::signal(sig, SIG_DFL);
  }
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(p->program.c_str(), p->argv.data(), p->env_ptr);
  return Error{fmt::format("starting {}: {}", spec.argv[0], std::strerror(errno))};
}

std::optional<uint64_t> process_start_time(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  std::FILE* f = std::fopen(fmt::format("/proc/{}/stat", pid).c_str(), "re");
  if (!f) return std::nullopt;
  char buf[1024];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // "pid (comm) state ppid ..." : comm may hold spaces and parentheses; fields start after the
  // last ')'. starttime is field 22, the 20th after it.
  const char* p = std::strrchr(buf, ')');
  if (!p) return std::nullopt;
  ++p;
  while (*p == ' ') ++p;
  if (*p == 'Z' || *p == 'X') return std::nullopt;  // it has ended, not yet reaped by its parent
  for (int field = 3; field < 22; ++field) {
    while (*p == ' ') ++p;
    while (*p && *p != ' ') ++p;
    if (!*p) return std::nullopt;
  }
  while (*p == ' ') ++p;
  char* end = nullptr;
  unsigned long long v = std::strtoull(p, &end, 10);
  if (end == p) return std::nullopt;
  return static_cast<uint64_t>(v);
}

Child& Child::operator=(Child&& other) noexcept {
  if (this != &other) {
    pid_ = other.pid_;
    status_ = other.status_;
    other.pid_ = 0;
  }
  return *this;
}

std::optional<ExitStatus> Child::poll() {
  if (status_ || pid_ <= 0) return status_;
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (r == pid_)
    status_ = decode(status);
  else if (r < 0)
    status_ = ExitStatus{std::nullopt, std::nullopt};  // not our child any more
  return status_;
}

ExitStatus Child::wait() {
  if (status_ || pid_ <= 0) return status_.value_or(ExitStatus{});
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  status_ = r == pid_ ? decode(status) : ExitStatus{};
  return *status_;
}

std::optional<ExitStatus> Child::wait_for(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto step = std::chrono::milliseconds(1);
  while (true) {
    if (auto s = poll()) return s;
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::nullopt;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(step, deadline - now));
    step = std::min(step * 2, std::chrono::milliseconds(20));
  }
}

bool Child::signal(int sig) {
  if (status_ || pid_ <= 0) return false;
  return ::kill(pid_, sig) == 0;
}

ExitStatus Child::terminate(std::chrono::milliseconds grace) {
  if (auto s = poll()) return *s;
  signal(SIGTERM);
  if (auto s = wait_for(grace)) return *s;
  signal(SIGKILL);
  return wait();
}

namespace {
// Process-wide handler state (a signal handler can reach nothing else).
volatile sig_atomic_t g_target = 0;
volatile sig_atomic_t g_came[NSIG] = {};
volatile sig_atomic_t g_pending[NSIG] = {};  // sent by a process while no child was set
volatile sig_atomic_t g_latched[NSIG] = {};
struct sigaction g_saved[NSIG];
std::atomic<bool> g_forwarder_active{false};

void on_forward(int sig, siginfo_t* info, void*) {
  g_came[sig] = 1;
  if (!info || (info->si_code != SI_USER && info->si_code != SI_QUEUE && info->si_code != SI_TKILL))
    return;
  const pid_t target = g_target;
  if (target > 0)
    ::kill(target, sig);
  else
    g_pending[sig] = 1;
}

void on_latch(int sig) {
  g_latched[sig] = 1;
}
}  // namespace

SignalForwarder::SignalForwarder(std::initializer_list<int> signals) : signals_(signals) {
  if (g_forwarder_active.exchange(true)) std::abort();  // one at a time (documented)
  g_target = 0;
  struct sigaction sa {};
  sa.sa_sigaction = on_forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : signals_) {
    g_came[sig] = 0;
    g_pending[sig] = 0;
    ::sigaction(sig, &sa, &g_saved[sig]);
  }
}

SignalForwarder::~SignalForwarder() {
  g_target = 0;
  for (int sig : signals_) ::sigaction(sig, &g_saved[sig], nullptr);
  g_forwarder_active = false;
}

void SignalForwarder::set_target(pid_t pid) {
  g_target = pid;
  if (pid <= 0) return;
  // What was sent while no child was set (between the spawn and this call, say) goes to it now;
  // from here on the handler forwards by itself.
  for (int sig : signals_)
    if (g_pending[sig]) {
      g_pending[sig] = 0;
      ::kill(pid, sig);
    }
}

bool SignalForwarder::take(int sig) {
  if (sig <= 0 || sig >= NSIG || !g_came[sig]) return false;
  g_came[sig] = 0;
  return true;
}

SignalLatch::SignalLatch(int sig) : sig_(sig) {
  g_latched[sig] = 0;
  struct sigaction sa {};
  sa.sa_handler = on_latch;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, &g_saved[sig]);
}

SignalLatch::~SignalLatch() {
  ::sigaction(sig_, &g_saved[sig_], nullptr);
}

bool SignalLatch::take() {
  if (!g_latched[sig_]) return false;
  g_latched[sig_] = 0;
  return true;
}

namespace {
// The detached work's whole life: an exception escaping `work` ends it with exit 1 in the
// grandchild (nobody is left to tell) instead of std::terminate's abort and core dump, and never
// reaches the caller when fork failed and the work ran in its process.
int run_detached_work(const std::function<void()>& work) noexcept {
  try {
    work();
    return 0;
  } catch (...) {
    return 1;
  }
}
}  // namespace

void detach(const std::function<void()>& work) {
  pid_t pid = ::fork();
  if (pid < 0) {
    // The work is done here instead; its failure stays in it, as it would in the grandchild.
    (void)run_detached_work(work);
    return;
  }
  if (pid > 0) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return;
  }
  ::setsid();
  // The caller's stdin/stdout/stderr go before the second fork, so that the worker never holds
  // them: a hook's reader sees its output end when the hook exits, not when the worker is first
  // scheduled (several milliseconds on a busy machine).
  int null = ::open("/dev/null", O_RDWR);
  if (null >= 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    if (null > 2) ::close(null);
  }
  if (::fork() != 0) ::_exit(0);
  ::_exit(run_detached_work(work));
}

}  // namespace ctxkit::util
