#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace ctxkit::util {

// How a child ended: exactly one of `code` (it exited) and `signal` (a signal ended it) is set.
struct ExitStatus {
  std::optional<int> code;
  std::optional<int> signal;
  // The shell's single number: the exit code, or 128 + the signal number.
  int shell_code() const { return code ? *code : signal ? 128 + *signal : 1; }
  bool operator==(const ExitStatus&) const = default;
};

// What a finished child process returned.
struct ProcessResult {
  int exit_code = -1;      // exit status, or 128 + signal number when killed by a signal
  std::string out;         // everything it wrote to stdout
  std::string err;         // everything it wrote to stderr
  bool timed_out = false;  // it was killed because the timeout passed
  bool cut_off =
      false;  // the linger passed: it was killed, or its output left unread (ProcessSpec::linger)
};

// How to start a child: argv (argv[0] is searched in PATH), never a shell.
struct ProcessSpec {
  std::vector<std::string> argv;
  std::optional<std::map<std::string, std::string>> env;  // replaces the environment if set
  std::optional<std::filesystem::path> cwd;
  std::string stdin_data;
  std::optional<std::chrono::milliseconds> timeout;
  // Called with each complete line of stdout (without its '\n') as soon as it has arrived, while
  // the child still runs; `out` gets everything as before.
  std::function<void(std::string_view line)> on_stdout_line;
  // Sent to the child when this thread ends, however it ends (kill -9 included), so that the
  // child does not outlive the caller (prctl PR_SET_PDEATHSIG; the child is started by fork).
  std::optional<int> parent_death_signal;
  // false: the lines handed to on_stdout_line are dropped from `out`, which keeps only a last
  // line without its '\n' (the caller holds the longest line, not the whole output).
  bool keep_handed_lines = true;
  // More than 0: only the last this many bytes of stderr are kept in `err`.
  size_t err_tail_bytes = 0;
  // Set: once `done()` says the caller has what it wanted from the output (asked after each
  // line handed over), or once the child has exited, it is read for at most this long more;
  // then a child still running is killed (SIGKILL) and the output is left unread, even when a
  // process the child started still holds it open (`cut_off` says so).
  std::optional<std::chrono::milliseconds> linger;
  std::function<bool()> done;
};

// Runs a child to completion, feeding stdin and collecting both output streams. A child that
// cannot be started is an error (an argument holding a NUL byte too: exec would cut it short);
// a child that fails is a result with its exit code.
[[nodiscard]] Result<ProcessResult> run_process(const ProcessSpec& spec);

// The full path of the program `name`: when it contains '/', itself if it is an executable
// regular file; otherwise the first executable regular file <dir>/<name> over the directories of
// `path` (a PATH value: colon-separated, an empty entry is the current directory). A name that
// is not found is an error of kind NotFound: "<name> not found in PATH" or "<name> not found or
// not executable".
[[nodiscard]] Result<std::string> find_in_path(const std::string& name, std::string_view path);

// How to start a long-lived child that shares the caller's terminal: argv (argv[0] is searched
// in the PATH of `env`, or of this process when `env` is not set), never a shell.
struct SpawnSpec {
  std::vector<std::string> argv;
  std::optional<std::map<std::string, std::string, std::less<>>>
      env;  // replaces the environment if set
  std::optional<std::filesystem::path> cwd;
  // Sent to the child when the thread that started it ends, however it ends (kill -9 included):
  // a terminal client whose supervisor is gone is hung up rather than left in the background.
  std::optional<int> parent_death_signal;
};

// The largest single argument (or environment entry) exec accepts: the kernel's MAX_ARG_STRLEN
// (32 pages) less the terminating NUL, 131071 bytes with 4 KiB pages.
size_t max_argument_bytes();

// Whether `spec` can be handed to exec whole: an argument with a NUL byte would be cut short
// silently, one over max_argument_bytes() or arguments and environment over ARG_MAX would fail
// with E2BIG. The error names the argument by its position and size.
[[nodiscard]] Result<void> check_exec_args(const SpawnSpec& spec);

// Runs every check Child::spawn makes before starting anything (arguments, program in PATH,
// working directory), so that a caller can find out before it ends what it replaces.
[[nodiscard]] Result<void> check_spawnable(const SpawnSpec& spec);

// Replaces this process with `spec` (PATH search and working directory as for Child::spawn,
// signal dispositions reset to the default). Returns only on failure, with the error.
Error exec_process(const SpawnSpec& spec);

// When process `pid` started, in clock ticks since boot (/proc/<pid>/stat): with the pid, it
// names one process over time, as pids are reused. nullopt when there is no such process, when
// it has ended and is not yet reaped (a zombie), or when /proc cannot tell.
std::optional<uint64_t> process_start_time(pid_t pid);

// A started child process. The child starts with default dispositions for every signal and an
// empty signal mask, whatever the caller has installed. Move-only; a Child destroyed while still
// running is left running (never killed or waited for from a destructor).
class Child {
 public:
  // Starts `spec.argv`. A program not found in PATH, a working directory that cannot be entered
  // and any other failure to start are errors naming the program ("starting <argv0>: <cause>").
  [[nodiscard]] static Result<Child> spawn(const SpawnSpec& spec);

  Child(Child&& other) noexcept : pid_(other.pid_), status_(other.status_) { other.pid_ = 0; }
  Child& operator=(Child&& other) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() = default;

  pid_t pid() const { return pid_; }
  // How it ended if it has ended (reaped now or before); nullopt while it runs.
  std::optional<ExitStatus> poll();
  // Waits until it ends (EINTR is retried).
  ExitStatus wait();
  // Waits up to `timeout`; nullopt when it is still running then.
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);
  // Sends `sig` unless it has already been reaped; false when the signal could not be sent.
  bool signal(int sig);
  // Ends it: SIGTERM, up to `grace` to exit, then SIGKILL. Returns how it ended.
  ExitStatus terminate(std::chrono::milliseconds grace);

 private:
  explicit Child(pid_t pid) : pid_(pid) {}
  pid_t pid_ = 0;
  std::optional<ExitStatus> status_;
};

// Passes the listed signals on to a child while it lives. Only signals sent by a process
// (kill(2), sigqueue(3)) are forwarded: one typed at the terminal (Ctrl-C) already reached the
// child, which shares the terminal's process group. While no child is set, a signal is recorded,
// and one sent by a process goes to the next child set (so none is lost between a spawn and
// set_target). The previous handlers are restored by the destructor. The handler state is
// process-wide: one forwarder at a time, and no SignalLatch on the same signals.
class SignalForwarder {
 public:
  explicit SignalForwarder(std::initializer_list<int> signals);
  ~SignalForwarder();
  SignalForwarder(const SignalForwarder&) = delete;
  SignalForwarder& operator=(const SignalForwarder&) = delete;
  // The child that receives the signals from now on (0: none).
  void set_target(pid_t pid);
  // Whether `sig` came (from anyone) since construction or the last take(sig); clears it.
  bool take(int sig);

 private:
  std::vector<int> signals_;
};

// Records the arrival of one signal (e.g. SIGUSR1 as a wake-up) while it lives, so that a loop
// can ask whether it came. Restores the previous handler when destroyed. One per signal at a time.
class SignalLatch {
 public:
  explicit SignalLatch(int sig);
  ~SignalLatch();
  SignalLatch(const SignalLatch&) = delete;
  SignalLatch& operator=(const SignalLatch&) = delete;
  // Whether the signal came since the last call (and clears it).
  bool take();

 private:
  int sig_;
};

// Runs `work` in a grandchild detached from the caller (new session, stdin/stdout/stderr on
// /dev/null, so no pipe of the caller is held open) and returns as soon as the intermediate
// child has exited. When fork fails, `work` runs in this process instead: the work is done
// either way, only later. An exception escaping `work` in the grandchild ends it with exit 1;
// in this process (fork failed) it is dropped, so that detach itself never throws what the work
// threw.
void detach(const std::function<void()>& work);

}  // namespace ctxkit::util
